"""The rotating log file the desktop app and the command line share.

``open_log()`` adds a handler writing INFO and up to ``yak.log`` in the platform's log folder
(``yak.paths.log_dir()``, e.g. ``~/.local/state/yak/log``), rotated at ``LOG_BYTES`` with
``LOG_BACKUPS`` old files; the folder is the user's alone and every log file is created readable
by the user only. Nothing
secret is logged. ``logging.handlers`` is imported when a log is opened, not before (start-up
time of ``yak --help`` and of the window).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from io import TextIOWrapper
from typing import cast

LOG_FILE = "yak.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
QUIET_LOGGERS = ("httpx", "httpcore", "alembic")


def open_log(*, console_level: int = logging.WARNING) -> logging.Handler | None:
    """Log INFO and up to the shared rotating file; handlers already on the console keep
    showing ``console_level`` and up only.

    Returns:
        The file handler (remove and close it when done), or ``None`` when the log cannot be
        written (one line on stderr says why; the program carries on).
    """
    import logging.handlers

    from yak import paths

    class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
        """A rotating log whose every file (the first and each after a rollover) is created
        readable by the user only (``yak.paths.PRIVATE_FILE_MODE``); a log an older Yak left
        readable by others is made private when opened."""

        def _open(self) -> TextIOWrapper:  # logging's override point
            stream = open(  # noqa: SIM115 - the handler owns and closes the stream
                self.baseFilename,
                self.mode,
                encoding=self.encoding,
                errors=self.errors,
                opener=paths.private_opener,
            )
            with contextlib.suppress(OSError):  # not ours to change: it stays as it is
                if os.fstat(stream.fileno()).st_mode & 0o077:
                    os.fchmod(stream.fileno(), paths.PRIVATE_FILE_MODE)
            return cast(TextIOWrapper, stream)

    try:
        handler: logging.Handler = PrivateRotatingFileHandler(
            paths.log_dir() / LOG_FILE,
            maxBytes=LOG_BYTES,
            backupCount=LOG_BACKUPS,
            encoding="utf-8",
        )
    except OSError as exc:
        print(f"yak: cannot write the log file: {exc}", file=sys.stderr)
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for other in root.handlers:
        if isinstance(other, logging.StreamHandler) and not isinstance(other, logging.FileHandler):
            other.setLevel(max(other.level, console_level))
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return handler


def close_log(handler: logging.Handler | None) -> None:
    """Remove and close a handler from :func:`open_log` (``None`` is fine)."""
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()
