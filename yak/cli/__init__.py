"""The ``yak`` command line: a stable contract shared with the desktop app's database (see
``docs/architecture.md``, "The command line").

``yak [--data-dir DIR] [WORKSPACE]`` opens the desktop app; ``yak memory …`` and ``yak ask`` run
without a window. Each subcommand module exposes ``register(subparsers)``, which adds its parser
and sets ``func(args, ctx) -> int`` as the handler. A handler parses, runs its work as one
coroutine against the application core (:meth:`Context.run`) and prints (``yak.cli.output``);
it never builds a repository, a model client or a refresher itself.

Errors are one line on stderr, never a traceback; exit codes: 0 done, 1 the database cannot be
read or written, 2 bad usage or input, 3 refused by a guard, 4 provider failure, 5 version
conflict, 130 interrupted. With ``--json``, stdout carries exactly one JSON document whatever the
exit code.

Start-up is part of the contract: ``yak --version`` and ``yak --help`` should take at most twice
a bare interpreter's start, and a command only what it needs (``benchmarks/bench_cli.py``
measures it). So this package and the subcommand modules import nothing heavy when the parser
is built: no core, no database, no ``asyncio``, and not even ``typing``, ``dataclasses`` or
``logging``. Each handler imports what it uses when it runs; ``yak.cli.output`` is imported
where something is printed.
"""

from __future__ import annotations

import argparse
import os
import sys

from yak.errors import YakError

# ``typing`` costs a noticeable share of a bare start; the names below are for type checkers
# only (mypy treats a ``TYPE_CHECKING`` flag of this name like ``typing.TYPE_CHECKING``).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from pathlib import Path
    from typing import Any, NoReturn

    from yak.core import Core
    from yak.domain import Workspace
    from yak.events import SyncedFileFailed

# The words that start a command-line command; anything else opens the desktop app.
COMMANDS = frozenset({"memory", "ask", "mcp", "install-desktop", "completion"})
EXIT_CODES = (
    "Exit codes: 0 done; 1 the database cannot be read or written; 2 bad usage or input; "
    "3 refused by a guard or waiting for review; 4 provider failure; 5 version conflict; "
    "130 interrupted."
)


TIMEOUT_RANGE_S = (1.0, 3600.0)  # yak.config's MIN_TIMEOUT_S / MAX_TIMEOUT_S


def _seconds(text: str) -> float:
    """``--timeout``'s value: seconds within :data:`TIMEOUT_RANGE_S`."""
    low, high = TIMEOUT_RANGE_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(
            f"--timeout takes a number of seconds from {low:g} to {high:g}, not {text!r}"
        )
    return value


def add_timeout_option(parser: argparse.ArgumentParser) -> None:
    """``--timeout SECONDS``: how long a model request may take to start answering (the SDK's
    retries included) and the longest pause inside a reply, for this command; the default is
    the request time limit in Settings (``YAK_TIMEOUT_SECONDS``)."""
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        help="give up on the model after this many seconds without an answer, retries "
        "included (default: the time limit in Settings, 120)",
    )


def apply_timeout(args: argparse.Namespace, ctx: Context) -> None:
    """Make ``--timeout`` this command's request time limit (through the environment the core
    reads its settings from)."""
    if getattr(args, "timeout", None) is not None:
        ctx.env = {**(ctx.env or os.environ), "YAK_TIMEOUT_SECONDS": repr(args.timeout)}


class _ParseError(Exception):
    """A command line argparse could not parse; reported as one line, exit 2."""


def _terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` gives it (``$COLUMNS``, then the
    terminal on stdout, else 80), without importing ``shutil`` (and its compression modules)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


_widths: dict[str | None, int] = {}


def _width() -> int:
    """The help's width, as argparse takes it from ``shutil``'s terminal size (less 2). The
    terminal is asked once per ``$COLUMNS`` value, since argparse builds a formatter for every
    argument it adds."""
    columns = os.environ.get("COLUMNS")
    if columns not in _widths:
        _widths[columns] = _terminal_columns() - 2
    return _widths[columns]


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, told the width so that it does not import ``shutil`` for it."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = _width()
        super().__init__(prog, indent_increment, max_help_position, width)

    # argparse's own wrapping, except that a path or an option is never split at a hyphen or
    # inside a word ("~/.local/share/bash-" then "completion/…" could not be copied).
    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        )


class _Parser(argparse.ArgumentParser):
    """argparse that reports one line (exit 2) instead of usage spam, and formats help
    without importing ``shutil``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:  # argparse override: one line, no exit
        raise _ParseError(f"{message} (see '{self.prog} --help')")


class Context:
    """What a command needs: the data directory and the application core, opened on first use.

    ``reads_only`` is set for commands that never write (a subparser's ``reads_only=True``
    default): their database may be opened read-only when it cannot be written (an immutable
    or read-only folder), so ``show``/``list``/``history``/``export`` still work there.
    ``in_place`` is set for those four (``in_place=True``): they need nothing but the memory
    service and the workspace registry, and run their core without an event loop (:meth:`run`).
    ``env`` replaces the environment the settings are read from (``yak ask --model``); set it
    before the core is opened. (A plain class: ``dataclasses`` would slow every start.)
    """

    def __init__(
        self,
        data_dir: Path,
        json: bool = False,
        reads_only: bool = False,
        env: dict[str, str] | None = None,
        database_url: str | None = None,
        in_place: bool = False,
    ) -> None:
        self.data_dir = data_dir
        self.database_url = database_url
        self.json = json
        self.reads_only = reads_only
        self.in_place = in_place and reads_only
        self.env = env
        self._core: Core | None = None
        self.failed_syncs: list[SyncedFileFailed] = []  # said on stderr as they came

    @property
    def core(self) -> Core:
        """The application core (opened, and its database migrated, on first use).

        Raises:
            SchemaTooNew: a newer Yak wrote the database. StoreError: it cannot be opened.
        """
        if self._core is None:
            from yak.bootstrap import open_core

            self._core = open_core(
                self.data_dir,
                database_url=self.database_url,
                read_only_fallback=self.reads_only,
                env=self.env,
                in_place=self.in_place,
            )
        return self._core

    def run(self, work: Callable[[Core], Awaitable[int]]) -> int:
        """Run a command's work as one coroutine against the core, then close the core on the
        same event loop; returns the work's exit status.

        A command marked ``in_place`` (``show``, ``list``, ``history``, ``export``) runs
        without an event loop: its core reads in place (``yak.aio.run_in_place``), which
        spares it ``asyncio``'s import and a worker thread, a sixth of ``yak memory show``'s
        time. Ctrl-C cancels the work (``KeyboardInterrupt`` is raised once it has stopped)."""
        import gc

        async def main() -> int:
            core = self.core
            # Paused by ``main`` while the command started: what start-up built lives until
            # exit, so it is frozen out of later collections (as the app does, yak/ui/heap.py).
            gc.freeze()
            gc.enable()
            unsubscribe = None if self.reads_only else self._say_failed_syncs(core)
            try:
                return await work(core)
            finally:
                if unsubscribe is not None:
                    unsubscribe()
                self._core = None
                await core.aclose()

        if self.in_place:
            from yak.aio import run_in_place

            return run_in_place(main())
        import asyncio

        return asyncio.run(main())

    def _say_failed_syncs(self, core: Core) -> Callable[[], None]:
        """A revision applied but not written into the kept-in-sync file: one stderr line, and
        kept in :attr:`failed_syncs` for the command's ``--json`` (:meth:`failed_sync`).
        Returns the unsubscribe. (A command that only reads writes no revision, and skips this
        and the import of every event class.)"""
        from yak.cli import output
        from yak.events import SyncedFileFailed

        def said(event: SyncedFileFailed) -> None:
            self.failed_syncs.append(event)
            output.note(event.message)

        return core.bus.subscribe(SyncedFileFailed, said)

    def failed_sync(self, workspace_id: str) -> SyncedFileFailed | None:
        """The latest failure, during this command, to write ``workspace_id``'s document into
        the file it keeps in sync (``yak memory sync --keep``), or ``None``."""
        found = [event for event in self.failed_syncs if event.workspace_id == workspace_id]
        return found[-1] if found else None

    def close(self) -> None:
        """Close a core that :meth:`run` did not (opened but never run)."""
        core, self._core = self._core, None
        if core is not None:
            core.close()


def workspace_path(args: argparse.Namespace) -> str:
    """The folder a command acts on: its ``-w DIR``, else the current directory. Every
    command resolves it through the core's workspace registry (``for_write`` or
    ``for_read``), so a bad ``-w`` gives the same error everywhere."""
    chosen = getattr(args, "workspace", None)
    return chosen if chosen is not None else os.getcwd()


async def writable_workspace(
    core: Core, args: argparse.Namespace, *, folder_setting: bool = False
) -> Workspace:
    """The workspace a writing command acts on (``for_write`` of :func:`workspace_path`). When
    it shares another folder's memory (a linked git worktree), a line on stderr says so first:
    a document write changes that shared document; a ``folder_setting`` (review mode, memory
    on or off) is this folder's alone."""
    workspace = await core.workspaces.for_write(workspace_path(args))
    linked = await core.workspaces.linked_to(workspace.id)
    if linked is not None:
        said = (
            f"this setting is for {workspace.path} only"
            if folder_setting
            else "this changes that shared document"
        )
        print(f"{workspace.path} shares the memory of {linked.path}: {said}.", file=sys.stderr)
    return workspace


def build_parser() -> argparse.ArgumentParser:
    """The full ``yak`` parser with every subcommand registered."""
    _cache_argparse_translations()
    parser = _Parser(
        prog="yak",
        usage="%(prog)s [--data-dir DIR] [WORKSPACE]\n       %(prog)s [--data-dir DIR] COMMAND ...",
        description="Yak: an AI agent in your project folder, with a memory document per "
        "workspace. Without a command, yak opens the desktop app, on WORKSPACE (a project "
        "folder) when given.",
        epilog=EXIT_CODES + " Run 'yak COMMAND --help' for a command's options.",
    )
    parser.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    parser.add_argument("--database-url", metavar="URL", help=DATABASE_URL_HELP)
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser, prog="yak")
    from yak.cli import ask, completion, desktop, mcp, memory

    memory.register(sub)
    ask.register(sub)
    mcp.register(sub)
    desktop.register(sub)
    completion.register(sub)
    _apply_conventions(parser)
    return parser


def _cache_argparse_translations() -> None:
    """Have argparse look up each of its own messages once per process. It translates its
    headings ("options", "show this help message and exit"…) again for every parser, and each
    lookup searches the locale folders for a catalogue: about half the time of building
    ``yak``'s 30 parsers, paid by every command. (Its ``_`` is ``gettext.gettext``, whose
    answer for a message changes only with the locale environment, read at start.)"""
    import functools

    translate = argparse._  # type: ignore[attr-defined]
    if not isinstance(translate, functools._lru_cache_wrapper):
        argparse._ = functools.cache(translate)  # type: ignore[attr-defined]


DATA_DIR_HELP = (
    "where Yak keeps its database (default: $YAK_DATA_DIR or the platform data directory)"
)
DATABASE_URL_HELP = (
    "a team database on a PostgreSQL server, postgresql://user:password@host:port/database, "
    "instead of the file in the data directory (default: $YAK_DATABASE_URL)"
)


def _apply_conventions(parser: argparse.ArgumentParser) -> None:
    """What every subcommand gets, whoever registered it: ``--data-dir`` accepted after the
    subcommand too (``yak memory list --data-dir DIR``; the later one wins) by every command
    that opens the database, and a description (its one-line help, as a sentence, when it has
    none)."""
    from yak.cli.completion import subcommands, walk

    parsers = dict(walk(parser))
    for path, sub in parsers.items():
        if not path:
            continue
        opens_database = sub.get_default("needs_core") is not False
        if opens_database and "--data-dir" not in sub._option_string_actions:
            sub.add_argument(
                "--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=DATA_DIR_HELP
            )
        if opens_database and "--database-url" not in sub._option_string_actions:
            sub.add_argument(
                "--database-url", metavar="URL", default=argparse.SUPPRESS, help=DATABASE_URL_HELP
            )
        if not sub.description:
            summary = dict(subcommands(parsers[path[:-1]])).get(path[-1], "")
            if summary:
                sub.description = summary[0].upper() + summary[1:].rstrip(".") + "."


def _version() -> str:
    from yak import __version__

    return f"yak {__version__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``yak`` and ``python -m yak``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the common case, answered before any parser is built
        print(_version())
        return 0
    first = _first_word(argv)
    if first not in ("-h", "--help"):
        from yak.agent.undumpable import make_undumpable

        make_undumpable()  # no process of the same user reads our environment or memory
    if first == "--json":
        from yak.cli import output

        return output.error(_misplaced_json(argv), 2, as_json=True)
    if (
        first is not None
        and first not in COMMANDS
        and not first.startswith("-")
        and not os.path.isdir(os.path.expanduser(first))
    ):
        from yak.cli import output

        if os.path.exists(os.path.expanduser(first)):  # as -w FILE says it
            return output.error(f"{first} is a file, not a folder", 2, as_json=False)
        return output.error(not_a_command(first), 2, as_json=False)
    if first not in {*COMMANDS, "-h", "--help", "--version"}:
        _configure_logging()
        try:
            return _run_app(argv)
        except _ParseError as exc:
            from yak.cli import output

            return output.error(str(exc), 2, as_json=False)
    import gc

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


def _output_failed(exc: OSError) -> int:
    """One line for output that could not be written (exit 1; a reader that closed the pipe
    early, as ``head`` does, is not an error: exit 0, silent). Standard output is pointed at
    the null device so the interpreter's own flush at exit does not fail again."""
    import contextlib
    import errno

    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if exc.errno == errno.EPIPE:
        return 0
    print(f"yak: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
    return 1


def _command(argv: list[str]) -> int:
    """Parse and run a command (``yak memory …``, ``yak ask``…); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _ParseError as exc:
        from yak.cli import output

        return output.error(str(exc), 2, as_json="--json" in argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    _configure_logging()
    from yak.cli import output
    from yak.logfile import close_log, open_log

    # Every command logs, but printing a completion script (run at each shell start) stays light,
    # and a command that only reads writes its lines only when a warning or an error comes.
    log_handler = (
        open_log(deferred=bool(getattr(args, "reads_only", False)))
        if getattr(args, "writes_log", True)
        else None
    )
    try:
        return _run_command(args)
    finally:
        close_log(log_handler)


def _run_command(args: argparse.Namespace) -> int:
    """Run the parsed command's handler; returns the exit status (errors as one line)."""
    import logging

    from yak.cli import output

    command = " ".join(
        word for word in (args.command, getattr(args, "memory_command", None)) if word
    )
    logging.getLogger(__name__).info("yak %s", command)  # never the arguments: a prompt
    if not getattr(args, "needs_core", True):  # a command that never opens the database
        try:
            return int(args.func(args, None))
        except YakError as exc:
            return output.error(str(exc), exc.exit_code, as_json=False)
    from yak.paths import data_dir

    try:
        ctx = Context(
            data_dir=data_dir(args.data_dir),
            json=getattr(args, "json", False),
            reads_only=bool(getattr(args, "reads_only", False)),
            in_place=bool(getattr(args, "in_place", False)),
            database_url=getattr(args, "database_url", None),
        )
    except OSError as exc:
        where = exc.filename or args.data_dir or os.environ.get("YAK_DATA_DIR") or ""
        why = (
            "it is a file, not a folder"
            if isinstance(exc, FileExistsError)
            else (exc.strerror or str(exc))
        )
        return output.error(
            f"cannot use data directory {where}: {why}", 2, as_json=getattr(args, "json", False)
        )
    try:
        return int(args.func(args, ctx))
    except YakError as exc:
        return output.error(
            str(exc), exc.exit_code, as_json=ctx.json, status=getattr(exc, "status", None)
        )
    except KeyboardInterrupt:
        return output.error("interrupted", 130, as_json=ctx.json)
    except BrokenPipeError:
        # The reader went away (``yak memory show | head``): stop quietly, like other tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        ctx.close()


def not_a_command(word: str) -> str:
    """The error for ``yak WORD`` when WORD is neither a command nor an existing folder,
    naming the closest command when one is close (``'memroy'`` → ``memory``; a memory
    subcommand such as ``list`` → ``memory list``)."""
    import difflib

    from yak.cli.completion import walk

    nested = {path[-1]: " ".join(path) for path, _p in walk(build_parser()) if len(path) == 2}
    near = difflib.get_close_matches(word, sorted(COMMANDS), n=1)
    if near:
        suggestion: str | None = near[0]
    else:
        near = [word] if word in nested else difflib.get_close_matches(word, sorted(nested), n=1)
        suggestion = nested[near[0]] if near else None
    hint = f"; did you mean '{suggestion}'?" if suggestion else " (see 'yak --help')"
    return f"'{word}' is not a command or a folder{hint}"


def _configure_logging() -> None:
    """Warnings and errors as ``yak: LEVEL: message`` lines on stderr (only when a command or
    the app runs: ``logging`` is not needed to print help)."""
    import logging

    logging.basicConfig(level=logging.WARNING, format="yak: %(levelname)s: %(message)s")


def _first_word(argv: list[str]) -> str | None:
    """The first argument that is not ``--data-dir DIR`` / ``--data-dir=DIR`` (nor
    ``--database-url``)."""
    words = iter(argv)
    for word in words:
        if word in ("--data-dir", "--database-url"):
            next(words, None)
        elif not word.startswith(("--data-dir=", "--database-url=")):
            return word
    return None


def _misplaced_json(argv: list[str]) -> str:
    """The error for ``yak --json memory list``: ``--json`` belongs to the subcommand."""
    import shlex

    rest = [word for word in argv if word != "--json"]
    if _first_word(rest) in COMMANDS:
        example = shlex.join(["yak", *rest, "--json"])
    else:
        example = "yak memory list --json"
    return f"put --json after the subcommand ({example})"


def _run_app(argv: list[str]) -> int:
    parser = _Parser(prog="yak", description="Open the Yak desktop app.")
    parser.add_argument("--data-dir", metavar="DIR")
    parser.add_argument("--database-url", metavar="URL")
    parser.add_argument(
        "workspace", nargs="?", metavar="WORKSPACE", help="a project folder to open"
    )
    parser.add_argument("--choose-folder", action="store_true")
    args = parser.parse_args(argv)
    from yak.app import run

    return run(
        data_dir_override=args.data_dir,
        database_url=args.database_url,
        workspace=args.workspace,
        choose_folder=args.choose_folder,
    )
