"""The rotating log file the desktop app and the command line share.

``open_log()`` adds a handler writing INFO and up to ``yak.log`` in the log folder
(``yak.paths.log_dir()``: ``log`` in a data directory chosen with ``--data-dir`` or
``$YAK_DATA_DIR``, else the platform's, e.g. ``~/.local/state/yak/log``), rotated at
``LOG_BYTES`` with ``LOG_BACKUPS`` old files; the folder is the user's alone and every log file
is created readable by the user only. Nothing
secret is logged. ``logging.handlers`` is imported when a log is opened, not before (start-up
time of ``yak --help`` and of the window).

A command that only reads (``yak memory show``, ``list``…) asks for a *deferred* log: its records
are held, and the file is opened (and they are written) only when a warning or an error comes.
A read that goes well leaves no line, and costs neither ``logging.handlers`` nor the log
folder's lookup: a fifth of ``yak memory show``'s time (``benchmarks/bench_cli.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from io import TextIOWrapper
from pathlib import Path
from typing import cast

LOG_FILE = "yak.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
QUIET_LOGGERS = ("httpx", "httpcore", "alembic")


Failure = Callable[[str], None]  # told why the log file cannot be written


def open_log(
    data_dir_override: str | os.PathLike[str] | None = None,
    *,
    console_level: int = logging.WARNING,
    deferred: bool = False,
    on_failure: Failure | None = None,
) -> logging.Handler | None:
    """Log INFO and up to the shared rotating file; handlers already on the console keep
    showing ``console_level`` and up only.

    Args:
        data_dir_override: the data directory chosen on the command line, whose ``log`` folder
            then holds the file (``yak.paths.log_dir``).
        console_level: the least level the console handlers keep showing.
        deferred: hold the records, and open the file only when one at WARNING or above comes
            (then the held ones are written before it); closed without one, nothing is
            written. For a command that only reads.
        on_failure: told the sentence when the file cannot be written (default: one line on
            stderr); the program carries on without the file either way.

    Returns:
        The file handler (remove and close it when done), or ``None`` when the log cannot be
        written.
    """
    root = logging.getLogger()
    said = on_failure or _say_on_stderr
    if deferred:
        held = _DeferredLog(lambda: _file_handler(data_dir_override, said))
        _attach(root, held, console_level)
        return held
    handler = _file_handler(data_dir_override, said)
    if handler is not None:
        _attach(root, handler, console_level)
    return handler


def _say_on_stderr(sentence: str) -> None:
    print(f"yak: {sentence}", file=sys.stderr)


class ConsoleFormatter(logging.Formatter):
    """``yak: LEVEL: message`` on the terminal, without the traceback a record may carry: a
    person reads one line; the log file keeps the traceback (docs/cli.md)."""

    def __init__(self) -> None:
        super().__init__("yak: %(levelname)s: %(message)s")

    def formatException(self, ei: object) -> str:  # noqa: N802 - logging's override point
        return ""

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's override point
        return ""

    def format(self, record: logging.LogRecord) -> str:  # logging's override point
        record.exc_text = None  # a file handler's text would be reused otherwise
        text = super().format(record).rstrip("\n")
        record.exc_text = None
        return text


def _file_handler(
    data_dir_override: str | os.PathLike[str] | None, said: Failure
) -> logging.Handler | None:
    """The rotating file handler, formatted, at INFO; ``None`` (and ``said`` told why) when
    the file cannot be opened."""
    import logging.handlers

    from yak import paths

    class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
        """A rotating log whose every file (the first and each after a rollover) is created
        readable by the user only (``yak.paths.PRIVATE_FILE_MODE``); a log an older Yak left
        readable by others is made private when opened."""

        told = False  # a line that could not be written was said

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

        def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - override point
            """A line that cannot be written (a full disk): said once, never a traceback."""
            if not self.told:
                self.told = True
                error = sys.exc_info()[1]
                why = getattr(error, "strerror", None) or error
                said(f"cannot write the log file {self.baseFilename}: {why}")

    try:
        folder: Path = paths.log_dir(data_dir_override)
        handler = PrivateRotatingFileHandler(
            folder / LOG_FILE,
            maxBytes=LOG_BYTES,
            backupCount=LOG_BACKUPS,
            encoding="utf-8",
        )
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        said(f"cannot write the log file{where}: {exc.strerror or exc}")
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.INFO)
    return handler


def _attach(root: logging.Logger, handler: logging.Handler, console_level: int) -> None:
    """Add ``handler`` to the root logger, let INFO through, and keep the console quieter."""
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    for other in root.handlers:
        if isinstance(other, logging.StreamHandler) and not isinstance(other, logging.FileHandler):
            other.setLevel(max(other.level, console_level))
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(logging.WARNING)


class _DeferredLog(logging.Handler):
    """Holds INFO records; the first at WARNING or above opens the file handler, which then
    writes the held records and every later one (a deferred :func:`open_log`)."""

    def __init__(self, open_file: Callable[[], logging.Handler | None]) -> None:
        super().__init__(logging.INFO)
        self._open_file = open_file
        self._held: list[logging.LogRecord] = []
        self._file: logging.Handler | None = None
        self._failed = False

    def emit(self, record: logging.LogRecord) -> None:  # logging's override point
        if self._file is None:
            if record.levelno < logging.WARNING or self._failed:
                if not self._failed:
                    self._held.append(record)
                return
            self._file = self._open_file()
            self._failed = self._file is None
            held, self._held = self._held, []
            if self._file is None:
                return
            for earlier in held:
                self._file.handle(earlier)
        self._file.handle(record)

    def close(self) -> None:
        """Close the file when it was opened; records still held are dropped."""
        try:
            if self._file is not None:
                self._file.close()
            self._held = []
        finally:
            super().close()


def close_log(handler: logging.Handler | None) -> None:
    """Remove and close a handler from :func:`open_log` (``None`` is fine)."""
    if handler is not None:
        logging.getLogger().removeHandler(handler)
        handler.close()
