"""The ``yak`` command line: a stable contract shared with the desktop app's database (see
``docs/cli.md``, "The command line").

``yak [--data-dir DIR] [WORKSPACE]`` opens the desktop app; ``yak memory …`` and ``yak ask`` run
without a window. The parser is built by ``yak.cli.parsing`` (only the chosen command's in
full); the parsed command runs through ``yak.cli.context``: its handler runs its work as one
coroutine against the application core (``Context.run``) and prints (``yak.cli.output``); it
never builds a repository, a model client or a refresher itself.

Errors are one line on stderr, never a traceback; exit codes: 0 done, 1 the database cannot be
read or written, 2 bad usage or input, 3 refused by a guard, 4 provider failure, 5 version
conflict, 130 interrupted. With ``--json``, stdout carries exactly one JSON document whatever the
exit code.

Start-up is part of the contract: ``yak --version`` and ``yak --help`` take at most twice a bare
interpreter's start (``benchmarks/bench_cli.py``), so this module imports at its top only what
they need (the parser); ``logging`` and ``ctypes`` (process hardening) when a command or the
app starts, the run path (``yak.cli.context``: the output shapes, the log, the core) once a
command line has parsed, and the desktop app (Qt) only to open a window.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import gc
import os
import shlex
import sys
from collections.abc import Sequence

from yak.cli.parsing import (
    COMMANDS,
    MEMORY_COMMANDS,
    ParseError,
    Parser,
    build_parser,
    first_word,
    next_word,
    version,
)

__all__ = ["build_parser", "main", "not_a_command", "not_a_memory_subcommand"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``yak`` and ``python -m yak``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the common case, answered before any parser is built
        print(version())
        return 0
    first = first_word(argv)
    if first not in ("-h", "--help"):
        from yak.agent.undumpable import make_undumpable  # ctypes: not needed for help

        make_undumpable()  # no process of the same user reads our environment or memory
    if first == "--json":
        return _error(_misplaced_json(argv), 2, as_json=True)
    if (
        first is not None
        and first not in COMMANDS
        and not first.startswith("-")
        and not os.path.isdir(os.path.expanduser(first))
    ):
        if os.path.exists(os.path.expanduser(first)):  # as -w FILE says it
            return _error(f"{first} is a file, not a folder", 2, as_json=False)
        return _error(not_a_command(first), 2, as_json=False)
    if first == "memory":
        subcommand = first_word(next_word(argv)[1])
        if subcommand and not subcommand.startswith("-") and subcommand not in MEMORY_COMMANDS:
            return _error(not_a_memory_subcommand(subcommand), 2, as_json="--json" in argv)
    if first not in {*COMMANDS, "-h", "--help", "--version"}:
        _configure_logging()
        try:
            return _run_app(argv)
        except ParseError as exc:
            return _error(str(exc), 2, as_json=False)
    # Starting a command creates tens of thousands of objects (modules, classes, the parser,
    # the core) that live until it exits: the collector would walk them again and again for
    # nothing. It is off until the core is open (``Context.run``), before any long work.
    was_on = gc.isenabled()
    gc.disable()
    try:
        if sys.stdout is None:  # started with stdout closed (``yak … >&-``)
            print("yak: standard output is closed; nothing was done", file=sys.stderr)
            return 2
        return _command(argv)
    except OSError as exc:  # writing the output failed: a full disk, a closed pipe
        return _output_failed(exc)
    finally:
        if was_on:
            gc.enable()


def _error(message: str, code: int, *, as_json: bool) -> int:
    """One error line (``--json``: and the JSON document); returns ``code``."""
    from yak.cli import output  # the output shapes: not needed to print help or the version

    return output.error(message, code, as_json=as_json)


def _output_failed(exc: OSError) -> int:
    """One line for output that could not be written (exit 1; a reader that closed the pipe
    early, as ``head`` does, is not an error: exit 0, silent). Standard output is pointed at
    the null device so the interpreter's own flush at exit does not fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if exc.errno == errno.EPIPE:
        return 0
    print(f"yak: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
    return 1


def _command(argv: list[str]) -> int:
    """Parse and run a command (``yak memory …``, ``yak ask``…); returns the exit status."""
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except ParseError as exc:
        return _error(str(exc), 2, as_json="--json" in argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    _configure_logging()
    # The run path (output shapes, log, core): only once a command line has parsed.
    from yak.cli.context import run_command

    return run_command(args)


def not_a_command(word: str) -> str:
    """The error for ``yak WORD`` when WORD is neither a command nor an existing folder,
    naming the closest command when one is close (``'memroy'`` → ``memory``; a memory
    subcommand such as ``list`` → ``memory list``)."""
    near = difflib.get_close_matches(word, sorted(COMMANDS), n=1)
    if near:
        suggestion: str | None = near[0]
    else:
        nested = sorted(MEMORY_COMMANDS)
        near = [word] if word in nested else difflib.get_close_matches(word, nested, n=1)
        suggestion = f"memory {near[0]}" if near else None
    hint = f"; did you mean '{suggestion}'?" if suggestion else " (see 'yak --help')"
    return f"'{word}' is not a command or a folder{hint}"


def not_a_memory_subcommand(word: str) -> str:
    """The error for ``yak memory WORD`` when WORD is no memory subcommand, naming the closest
    one when one is close (``'shw'`` → ``show``)."""
    names = sorted(MEMORY_COMMANDS)
    near = [name for name in names if name.startswith(word)]  # ``hist``: only ``history``
    if len(near) != 1:
        near = difflib.get_close_matches(word, names, n=1)
    hint = f"; did you mean 'yak memory {near[0]}'?" if near else " (see 'yak memory --help')"
    return f"'{word}' is not a memory subcommand{hint}"


def _configure_logging() -> None:
    """Warnings and errors as ``yak: LEVEL: message`` lines on stderr, one line each (a
    traceback goes to the log file only), when a command or the app runs."""
    import logging  # with what it imports, a fifth of a bare start: not needed for help

    from yak.logfile import ConsoleFormatter

    console = logging.StreamHandler()
    console.setFormatter(ConsoleFormatter())
    logging.basicConfig(level=logging.WARNING, handlers=[console])


def _misplaced_json(argv: list[str]) -> str:
    """The error for ``yak --json memory list``: ``--json`` belongs to the subcommand."""
    rest = [word for word in argv if word != "--json"]
    if first_word(rest) in COMMANDS:
        example = shlex.join(["yak", *rest, "--json"])
    else:
        example = "yak memory list --json"
    return f"put --json after the subcommand ({example})"


def _run_app(argv: list[str]) -> int:
    parser = Parser(prog="yak", description="Open the Yak desktop app.")
    parser.add_argument("--data-dir", metavar="DIR")
    parser.add_argument("--database-url", metavar="URL")
    parser.add_argument(
        "workspace", nargs="?", metavar="WORKSPACE", help="a project folder to open"
    )
    parser.add_argument("--choose-folder", action="store_true")
    args = parser.parse_args(argv)
    from yak.app import run  # Qt and the window: only to open the desktop app

    return run(
        data_dir_override=args.data_dir,
        database_url=args.database_url,
        workspace=args.workspace,
        choose_folder=args.choose_folder,
        ends_process=True,
    )
