"""The ``yak`` parser: every command's name and one-line help in one table, and each command's
own parser built by its module only when that command is the one run.

``yak --help`` needs the names and help lines alone, so it imports no command module;
``yak memory show`` builds ``show``'s parser in full and gives every other command just its
name and help line (what the parent's ``--help`` lists and what argparse checks a word
against). Without a command line (:func:`build_parser` with no ``argv``: the completion
scripts, the manual page) every parser is built.

A command module names its parsers in ``PARSERS``: command name → a function that adds the
command's arguments and sets ``func(args, ctx) -> int`` (its handler) with
``parser.set_defaults``. Other defaults a handler may set: ``reads_only`` (the database may
be opened read-only), ``in_place`` (the core runs without an event loop), ``needs_core=False``
(no database at all) and ``writes_log=False``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from yak import __version__
from yak.errors import UsageError

if TYPE_CHECKING:
    from yak.cli.context import Context

EXIT_CODES = (
    "Exit codes: 0 done; 1 the database cannot be read or written; 2 bad usage or input; "
    "3 refused by a guard or waiting for review; 4 provider failure; 5 version conflict; "
    "130 interrupted."
)
DATA_DIR_HELP = (
    "where Yak keeps its database and its log (default: $YAK_DATA_DIR or the platform data "
    "directory)"
)
DATABASE_URL_HELP = (
    "a team database on a PostgreSQL server, postgresql://user:password@host:port/database, "
    "instead of the file in the data directory (default: $YAK_DATABASE_URL)"
)
# The options that come with a value before a command's name (``yak --data-dir DIR memory``).
VALUED_OPTIONS = ("--data-dir", "--database-url")

BuildParser = Callable[[argparse.ArgumentParser], None]


class Command(NamedTuple):
    """A command: its one-line help, the module whose ``PARSERS[name]`` builds it, and the
    paragraph its ``--help`` opens with (default: the help line as a sentence)."""

    help: str
    module: str
    description: str = ""


COMMANDS = {
    "memory": Command("read and write workspace memory documents", ""),  # the group below
    "ask": Command(
        "one agent turn without a window",
        "yak.cli.ask",
        description=(
            "Run one agent turn in a workspace and print the reply, then refresh the workspace's "
            "memory."
        ),
    ),
    "mcp": Command(
        "serve this workspace's memory to other agents (MCP over stdio)",
        "yak.cli.mcp",
        description=(
            "Serve the memory of one workspace to other agents (Claude Code, Codex, Cursor and "
            "others) as an MCP server on stdin/stdout, until the client disconnects. Tools: "
            "memory_read, memory_blame, memory_search and memory_propose; a proposal waits in 'yak "
            "memory review' and is never applied directly. The workspace is the folder given here, "
            "never one the agent names."
        ),
    ),
    "install-desktop": Command(
        "add Yak to the desktop's application menu",
        "yak.cli.desktop",
        description=(
            "Install Yak's desktop entry, AppStream metainfo and icons for the current user under "
            "$XDG_DATA_HOME (default ~/.local/share), so the desktop lists Yak with its icon; the "
            "entry starts the yak that runs this command. With --uninstall, remove them again. For "
            "Linux and BSD desktops."
        ),
    ),
    "man": Command(
        "print the manual page (read it with: yak man | man -l -)",
        "yak.cli.manpage",
        description=(
            "Print yak's manual page (roff) on stdout, generated from this yak's own commands. "
            "A wheel install also puts it where 'man yak' finds it; an editable install or the "
            "bundle does not, so read it with: yak man | man -l -"
        ),
    ),
    "completion": Command(
        "print a shell completion script",
        "yak.cli.completion",
        description=(
            "Print the completion script for bash, zsh or fish on stdout. Install it with, for "
            "example: yak completion bash > ~/.local/share/bash-completion/completions/yak"
        ),
    ),
}
MEMORY_DESCRIPTION = (
    "Read and write the memory document of a workspace. Options such as --json and -w go after "
    "the subcommand (yak memory list --json)."
)
MEMORY_COMMANDS = {
    "list": Command("every workspace with a memory document", "yak.cli.memory"),
    "show": Command(
        "print the memory document exactly as stored",
        "yak.cli.memory",
        description=(
            "Print the memory document exactly as stored, or with --reply the reply a refresh "
            "attempt kept (a refused one, for example) exactly as kept: 'yak memory show --reply "
            "ID > reply.txt', trim it, then 'yak memory set --file reply.txt'. The ids are in 'yak "
            "memory history --refreshes'. With --as-of DATE, the document as it stood at the end "
            "of that day (or at that time), from the stored revisions."
        ),
    ),
    "set": Command("replace the document with a file or stdin (UTF-8)", "yak.cli.memory"),
    "edit": Command(
        "edit the document in $VISUAL / $EDITOR",
        "yak.cli.editing",
        description=(
            "Edit the document in $VISUAL or $EDITOR (vi when neither is set and this runs in a "
            "terminal). Without a terminal, set one of them or use 'yak memory set'."
        ),
    ),
    "refresh": Command("rewrite the document from conversations now", "yak.cli.refresh"),
    "history": Command(
        "the document's revisions (or refresh attempts), newest first",
        "yak.cli.memory",
        description=(
            "The document's revisions, newest first (the ids 'restore' takes). With --refreshes: "
            "every refresh attempt instead, applied or not, with its status, reason, the lines of "
            "the reply it kept, model and tokens; open a kept reply with 'yak memory show --reply "
            "ID'. --as-of DATE starts the list at the revision that was current then; --since "
            "DATE lists only what was written from then on."
        ),
    ),
    "diff": Command(
        "what changed between two versions (default: the last change)",
        "yak.cli.memory",
        description=(
            "Print a unified line diff between two versions of the document: 'yak memory diff' "
            "shows the last change (the version before it to the current one), 'diff 3' version "
            "3 to the current one, 'diff 3 5' version 3 to version 5. A version is a number from "
            "'history', or a revision id or a unique prefix of at least 6 characters; 0 is the "
            "empty document before the first write. 'yak memory show --version N' prints one "
            "version whole."
        ),
    ),
    "restore": Command(
        "make a revision current again (a new revision)",
        "yak.cli.memory",
        description=(
            "Make a revision current again, as a new revision. REVISION is a revision id from "
            "'history' (or a unique prefix of at least 6 characters), or a version number: "
            "'restore 3' restores the revision that produced version 3."
        ),
    ),
    "export": Command("write the document to a file or stdout", "yak.cli.memory"),
    "stats": Command(
        "what the memory costs: its size in tokens, refreshes and their tokens",
        "yak.cli.stats",
        description=(
            "What the workspace's memory costs: the document's size in tokens (an estimate: "
            "characters / 4), which every chat request carries, and its refreshes over the last "
            "7 and 30 days: attempts, model calls, tokens (in, from the prompt cache, out) and "
            "outcomes. With --all, every workspace with a refresh in the last 30 days."
        ),
    ),
    "import": Command(
        "replace the document with a text file (UTF-8/16/32, any line endings)", "yak.cli.memory"
    ),
    "delete": Command("empty the document (restorable from history)", "yak.cli.editing"),
    "blame": Command(
        "where each line came from, when it was first said and last confirmed", "yak.cli.review"
    ),
    "stale": Command(
        "lines no one said or confirmed for a while, or naming what is gone: keep or remove",
        "yak.cli.freshness",
        description=(
            "List the lines a refresh wrote that no conversation has said, and no person has "
            "confirmed, for the threshold (90 days; the stale_after_days setting or "
            "YAK_STALE_AFTER_DAYS), numbered as in the document. A line you wrote is never stale "
            "by age. Also listed: a line naming a file or a make/npm/just/tox/nox target the "
            "folder no longer has, until it is said again or kept. --keep N confirms line N "
            "still holds (it leaves the list; the document is not changed); --remove N removes "
            "it as a hand edit would (a refresh will not bring it back); 'yak memory edit' "
            "edits it. Age alone never removes a line: a refresh is told these lines so a newer "
            "conversation can replace them."
        ),
    ),
    "review": Command(
        "rewrites waiting for review; with ID, its reasons and diff",
        "yak.cli.review",
        description=(
            "List the proposals waiting for review, oldest first; with ID, show its reasons and "
            "its diff against the version it was based on. Accept it with 'yak memory accept ID' "
            "or drop it with 'yak memory reject ID'."
        ),
    ),
    "accept": Command("apply a proposal (optionally as edited in a file)", "yak.cli.review"),
    "reject": Command("drop a proposal; its added lines stay out", "yak.cli.review"),
    "mode": Command(
        "print or set the review mode (auto or review)",
        "yak.cli.review",
        description=(
            "auto: a rewrite's supported lines apply, and doubtful ones wait for review (a "
            "token no one said, only asked about, a duplicate, an instruction no one typed, "
            "removing or changing your lines, bringing back a line you deleted or rejected; "
            "removing over a quarter of the lines holds it whole). review: every rewrite waits."
        ),
    ),
    "enable": Command("switch this workspace's memory on", "yak.cli.review"),
    "disable": Command(
        "switch this workspace's memory off (no injection, no refresh)", "yak.cli.review"
    ),
    "sync": Command(
        "write the document into a block of AGENTS.md, CLAUDE.md or any text file",
        "yak.cli.share",
        description=(
            "Write the workspace's memory document into FILE between the lines <!-- yak:memory --> "
            "and <!-- /yak:memory -->, creating the file or the block when missing. Everything "
            "outside the block is kept byte for byte; running it again with the same document "
            "changes nothing. A block edited by hand or holding git conflict markers is left as "
            "it is (exit 3) unless --force is given. With --keep, the block is also rewritten "
            "after every change to the memory (a refresh, an edit, an accepted proposal, a "
            "restore, an import) until 'sync --stop'."
        ),
    ),
    "search": Command(
        "find text in every workspace's document",
        "yak.cli.share",
        description=(
            "Print each line of every workspace's memory document that contains QUERY, case aside, "
            "as PATH:LINE: TEXT (most recently updated workspace first). The database's full-text "
            "index (SQLite FTS5) finds the documents; without one, or for a text under 3 "
            "characters, every document is read (a plain scan, said on stderr)."
        ),
    ),
    "reattach": Command(
        "move the memory of a renamed or moved folder to this one",
        "yak.cli.scopes",
        description=(
            "Move the memory document, its history and the conversations of the workspace at OLD, "
            "a folder that no longer exists, to the workspace folder (-w). 'yak memory show' names "
            "such a folder when one looks like this one. With --decline, remember that OLD is not "
            "this folder's predecessor instead."
        ),
    ),
    "link": Command(
        "share another folder's memory (a git worktree and its main checkout)",
        "yak.cli.scopes",
        description=(
            "From now on the workspace folder (-w) uses the memory document of FOLDER: it reads "
            "it, its refreshes and edits write it, and its history is FOLDER's. Conversations stay "
            "apart. Without --to, FOLDER is the main checkout of the git repository whose worktree "
            "the workspace is in. The folder must have no memory of its own. 'yak memory unlink' "
            "ends it."
        ),
    ),
    "unlink": Command(
        "stop sharing another folder's memory",
        "yak.cli.scopes",
        description=(
            "The workspace folder (-w) stops using another folder's memory document; its own "
            "(empty, or as it was before 'link') is back. The shared document is kept."
        ),
    ),
}


class ParseError(Exception):
    """A command line argparse could not parse; reported as one line, exit 2."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, except that a path or an option is never split at a hyphen or
    inside a word (``~/.local/share/bash-`` then ``completion/…`` could not be copied)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.fill(
            " ".join(text.split()),
            width,
            initial_indent=indent,
            subsequent_indent=indent,
            break_on_hyphens=False,
            break_long_words=False,
        )


class Parser(argparse.ArgumentParser):
    """argparse that reports one line (exit 2, :class:`ParseError`) instead of usage spam."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> NoReturn:  # argparse override: one line, no exit
        raise ParseError(f"{message} (see '{self.prog} --help')")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, except that words no parser took are named with the help of the
        subcommand they were given to and, for a mistyped option, the closest one of it
        (``yak memory show --jsn`` → "did you mean '--json'?")."""
        words = list(sys.argv[1:] if args is None else args)
        parsed, extras = self.parse_known_args(words, namespace)
        if extras:
            chosen = self._chosen(words)
            options = [o for action in chosen._actions for o in action.option_strings]
            flag = next((e.split("=")[0] for e in extras if e.startswith("-")), None)
            near = difflib.get_close_matches(flag, options, n=1) if flag else []
            hint = f"; did you mean '{near[0]}'?" if near else ""
            raise ParseError(
                f"unrecognized arguments: {' '.join(extras)}{hint} (see '{chosen.prog} --help')"
            )
        return parsed

    def _chosen(self, words: Sequence[str]) -> argparse.ArgumentParser:
        """The deepest subcommand's parser that ``words`` name (this parser when none)."""
        parser: argparse.ArgumentParser = self
        for word in words:
            subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if subcommands and word in subcommands[0].choices:
                parser = subcommands[0].choices[word]
        return parser


def version() -> str:
    """What ``yak --version`` prints."""
    return f"yak {__version__}"


def first_word(argv: Sequence[str]) -> str | None:
    """The first argument that is not ``--data-dir DIR`` / ``--data-dir=DIR`` (nor
    ``--database-url``)."""
    return next_word(argv)[0]


def next_word(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """:func:`first_word` and the arguments after it (``(None, [])`` when there is none)."""
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word in VALUED_OPTIONS:
            i += 2
        elif word.startswith(tuple(f"{option}=" for option in VALUED_OPTIONS)):
            i += 1
        else:
            return word, words[i + 1 :]
    return None, []


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``yak`` parser. With ``argv``, only the parsers on the path of the command it names
    are built in full; without, every parser."""
    parser = Parser(
        prog="yak",
        usage="%(prog)s [--data-dir DIR] [WORKSPACE]\n       %(prog)s [--data-dir DIR] COMMAND ...",
        description="Yak: an AI agent in your project folder, with a memory document per "
        "workspace. Without a command, yak opens the desktop app, on WORKSPACE (a project "
        "folder) when given.",
        epilog=EXIT_CODES + " Run 'yak COMMAND --help' for a command's options.",
    )
    parser.add_argument("--data-dir", metavar="DIR", help=DATA_DIR_HELP)
    parser.add_argument("--database-url", metavar="URL", help=DATABASE_URL_HELP)
    parser.add_argument("--version", action="version", version=version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser, prog="yak")
    _add_commands(sub, COMMANDS, None if argv is None else list(argv))
    return parser


def _add_commands(
    sub: argparse._SubParsersAction, table: Mapping[str, Command], argv: list[str] | None
) -> None:
    """A parser for each command of ``table``: built in full when ``argv`` is ``None`` or
    names it, else only its name and help line."""
    chosen, rest = (None, None) if argv is None else next_word(argv)
    for name, command in table.items():
        parser = sub.add_parser(name, help=command.help)
        if argv is None or name == chosen:
            _build(parser, name, command, rest)


def _build(
    parser: argparse.ArgumentParser, name: str, command: Command, argv: list[str] | None
) -> None:
    parser.description = command.description or None
    if command.module:
        module = importlib.import_module(command.module)
        module.PARSERS[name](parser)
    else:  # ``yak memory``: a group of subcommands
        parser.description = MEMORY_DESCRIPTION
        parser.set_defaults(func=_name_a_subcommand)
        cmds = parser.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")
        _add_commands(cmds, MEMORY_COMMANDS, argv)
    _apply_conventions(parser, command.help)


def _name_a_subcommand(args: object, _ctx: Context) -> NoReturn:
    """``yak memory`` without a subcommand: one line, exit 2."""
    raise UsageError("name a subcommand (see 'yak memory --help')")


def _apply_conventions(parser: argparse.ArgumentParser, summary: str) -> None:
    """What every command gets, whoever built its parser: ``--data-dir`` (and
    ``--database-url``) accepted after the command too (``yak memory list --data-dir DIR``; the
    later one wins) by every command that opens the database, and a description (its one-line
    help, as a sentence, when it has none)."""
    if parser.get_default("needs_core") is not False:
        for option, metavar, text in (
            ("--data-dir", "DIR", DATA_DIR_HELP),
            ("--database-url", "URL", DATABASE_URL_HELP),
        ):
            if option not in parser._option_string_actions:
                parser.add_argument(option, metavar=metavar, default=argparse.SUPPRESS, help=text)
    if not parser.description:
        parser.description = summary[0].upper() + summary[1:].rstrip(".") + "."


def workspace_option(parser: argparse.ArgumentParser) -> None:
    """``-w DIR``: the folder a command acts on (see ``yak.cli.context.workspace_path``)."""
    parser.add_argument(
        "-w",
        "--workspace",
        metavar="DIR",
        default=None,
        help="the workspace folder (default: the current directory)",
    )


def json_option(parser: argparse.ArgumentParser) -> None:
    """``--json``: stdout carries exactly one JSON document, whatever the exit code."""
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def workspace_command(
    parser: argparse.ArgumentParser, func: Callable[..., int], **defaults: object
) -> None:
    """The end of a ``yak memory`` parser whose own arguments come first: ``-w DIR``,
    ``--json`` and the handler ``func`` (with the other ``defaults``: ``reads_only``…)."""
    workspace_option(parser)
    json_option(parser)
    parser.set_defaults(func=func, **defaults)
