"""The ``yak`` command line (DESIGN.md section 6): a stable contract shared with the GUI's database.

``yak [--data-dir DIR] [WORKSPACE]`` opens the desktop app; ``yak memory …`` and ``yak ask`` run
without a window. Each subcommand module exposes ``register(subparsers)``, which adds its parser
and sets ``func(args, ctx) -> int`` as the handler. Errors are one line on stderr, never a
traceback; exit codes: 0 done, 2 bad usage or input, 3 refused by a guard, 4 provider failure,
5 version conflict. With ``--json``, stdout carries exactly one JSON document whatever the exit
code.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yak.errors import YakError

log = logging.getLogger(__name__)


class _ParseError(Exception):
    """A command line argparse could not parse; reported as one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports one line (exit 2) instead of usage spam."""

    def error(self, message: str) -> None:  # argparse override
        raise _ParseError(f"{message} (see '{self.prog} --help')")


@dataclass
class Context:
    """What a command needs: the data directory and lazily opened services.

    ``reads_only`` is set for commands that never write (a subparser's ``reads_only=True``
    default): their database may be opened read-only when it cannot be written (an immutable
    or read-only folder), so ``show``/``list``/``history``/``export`` still work there.
    """

    data_dir: Path
    json: bool = False
    reads_only: bool = False
    _cache: dict[str, Any] = field(default_factory=dict)

    @property
    def db(self) -> Any:
        """The migrated database (opened on first use; read-only when it cannot be written
        and the command only reads)."""
        if "db" not in self._cache:
            from yak.db import open_database

            self._cache["db"] = open_database(self.data_dir,
                                              read_only_fallback=self.reads_only)
        return self._cache["db"]

    @property
    def settings(self) -> Any:
        if "settings" not in self._cache:
            from yak.config import load_settings

            self._cache["settings"] = load_settings(self.data_dir)
        return self._cache["settings"]

    def close(self) -> None:
        db = self._cache.pop("db", None)
        if db is not None:
            db.close()


def build_parser() -> argparse.ArgumentParser:
    """The full ``yak`` parser with every subcommand registered."""
    parser = _Parser(prog="yak", description="Yak: an AI agent in your project folder, with a "
                     "memory document per workspace.")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="where Yak keeps its database (default: $YAK_DATA_DIR or the "
                        "platform data directory)")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    from yak.cli import ask, memory

    memory.register(sub)
    ask.register(sub)
    return parser


def _version() -> str:
    from yak import __version__

    return f"yak {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``yak`` and ``python -m yak``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="yak: %(levelname)s: %(message)s")
    if _first_word(argv) == "--json":
        return _fail(_misplaced_json(argv), 2, as_json=True)
    if _first_word(argv) not in {"memory", "ask", "-h", "--help", "--version"}:
        try:
            return _run_app(argv)
        except _ParseError as exc:
            return _fail(str(exc), 2, as_json=False)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _ParseError as exc:
        return _fail(str(exc), 2, as_json="--json" in argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    from yak.paths import data_dir

    try:
        ctx = Context(data_dir=data_dir(args.data_dir), json=getattr(args, "json", False),
                      reads_only=bool(getattr(args, "reads_only", False)))
    except OSError as exc:
        where = exc.filename or args.data_dir or os.environ.get("YAK_DATA_DIR") or ""
        why = "it is a file, not a folder" if isinstance(exc, FileExistsError) else (
            exc.strerror or str(exc))
        return _fail(f"cannot use data directory {where}: {why}", 2,
                     as_json=getattr(args, "json", False))
    try:
        return int(args.func(args, ctx))
    except YakError as exc:
        return _fail(str(exc), exc.exit_code, as_json=ctx.json, status=getattr(exc, "status", None))
    except KeyboardInterrupt:
        return _fail("interrupted", 130, as_json=ctx.json)
    except BrokenPipeError:
        # The reader went away (``yak memory show | head``): stop quietly, like other tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        ctx.close()


def _first_word(argv: list[str]) -> str | None:
    """The first argument that is not ``--data-dir DIR`` / ``--data-dir=DIR``."""
    words = iter(argv)
    for word in words:
        if word == "--data-dir":
            next(words, None)
        elif not word.startswith("--data-dir="):
            return word
    return None


def _misplaced_json(argv: list[str]) -> str:
    """The error for ``yak --json memory list``: ``--json`` belongs to the subcommand."""
    rest = [word for word in argv if word != "--json"]
    if _first_word(rest) in {"memory", "ask"}:
        example = shlex.join(["yak", *rest, "--json"])
    else:
        example = "yak memory list --json"
    return f"put --json after the subcommand ({example})"


def _run_app(argv: list[str]) -> int:
    parser = _Parser(prog="yak", description="Open the Yak desktop app.")
    parser.add_argument("--data-dir", metavar="DIR")
    parser.add_argument("workspace", nargs="?", metavar="WORKSPACE",
                        help="a project folder to open")
    args = parser.parse_args(argv)
    from yak.app import run

    return run(data_dir_override=args.data_dir, workspace=args.workspace)


def _fail(message: str, code: int, *, as_json: bool, status: str | None = None) -> int:
    """Print one error line on stderr (and a JSON error document when ``--json``)."""
    print(f"yak: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": code, "status": status}))
    return code
