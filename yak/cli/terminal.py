"""The ``yak`` commands' terminal primitives: bytes and JSON on stdout, tables, error and
hint lines on stderr, and the warnings held back while a report line says it all. Light to
import (the standard library and ``yak.text``): every command that prints loads it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

from yak.text import escape_controls, middle, plural

MESSAGE_CHARS = 400  # the longest error line (a longer sentence is shortened in the middle)


def write_stdout(data: bytes) -> None:
    """Write bytes to stdout unchanged (no newline translation, no encoding)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def print_json(value: Any) -> None:
    """One indented UTF-8 JSON document on stdout."""
    write_stdout((json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def lines(count: int) -> str:
    """``1 line``, ``12 lines``, ``1,234 lines``."""
    return plural(count, "line")


def table(headers: list[str], rows: list[list[str]], *, right: frozenset[int] = frozenset()) -> str:
    """Plain columns separated by two spaces; the last column is not padded."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    out = []
    for row in [headers, *rows]:
        cells = []
        for i, cell in enumerate(row):
            if i == len(row) - 1:
                cells.append(str(cell))
            elif i in right:
                cells.append(str(cell).rjust(widths[i]))
            else:
                cells.append(str(cell).ljust(widths[i]))
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def one_line_message(message: str) -> str:
    """An error sentence as exactly one line: control characters escaped and at most
    :data:`MESSAGE_CHARS` characters (shortened in the middle)."""
    return middle(escape_controls(message.strip()), MESSAGE_CHARS)


def error(message: str, code: int, *, as_json: bool, status: str | None = None) -> int:
    """Report a failure: one ``yak: …`` line on stderr (and, with ``--json``, the error
    document ``{"error", "exit_code", "status"}`` on stdout); returns ``code``. The message is
    made one line first (:func:`one_line_message`)."""
    message = one_line_message(message)
    print(f"yak: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": code, "status": status}))
    return code


def note(message: str) -> None:
    """A hint for a person at a terminal, on stderr (never part of a contract)."""
    print(message, file=sys.stderr, flush=True)


class _HeldLines(logging.Filter):
    """A console handler's filter that keeps each record back instead of letting it through."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:  # logging's override point
        self.records.append(record)
        return False


@contextlib.contextmanager
def warnings_held_unless(succeeded: Callable[[], bool]) -> Iterator[None]:
    """Hold back the warning lines meant for the terminal while the block runs (the log file
    still gets them); at its end, write them when ``succeeded()`` says the command worked, else
    drop them: a failing command's one line on stderr is its error (a refresh in a read-only
    data folder is "read-only", not a lock warning first)."""
    held = _HeldLines()
    consoles = [
        handler
        for handler in logging.getLogger().handlers
        if type(handler) is logging.StreamHandler  # the console, not a file handler
    ]
    for handler in consoles:
        handler.addFilter(held)
    ok = False
    try:
        yield
        ok = succeeded()
    finally:
        for handler in consoles:
            handler.removeFilter(held)
        if ok:
            for record in held.records:
                for handler in consoles:
                    if record.levelno >= handler.level:
                        handler.handle(record)


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    """The report line already says why a refresh failed; the model client's and the
    refresher's warning log lines would make it a second line on stderr, so they are held
    back here."""
    loggers = [logging.getLogger(name) for name in ("yak.llm", "yak.memory", "yak.refresh")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
