"""The ``yak(1)`` manual page, generated from the command-line parser.

``python -m yak.cli.manpage > packaging/yak.1`` writes it; the wheel installs that file as
``share/man/man1/yak.1`` (``[tool.setuptools.data-files]`` in ``pyproject.toml``), and a test
fails when it no longer matches the parser (run the command again after changing a command or
an option). The page has no date, so generating it twice gives the same bytes.

An editable install (``pip install -e``) and the bundle install no data files, so ``man yak``
finds nothing there: ``yak man`` prints the same page, generated from the running parser, for
``yak man | man -l -``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from yak import __version__
from yak.cli.completion import options, positionals, subcommands, walk
from yak.cli.parsing import EXIT_CODES, build_parser

if TYPE_CHECKING:
    from yak.cli.context import Context

ENVIRONMENT = (
    ("YAK_DATA_DIR", "where the database lives (also --data-dir)"),
    (
        "YAK_DATABASE_URL",
        "a team database on a PostgreSQL server, postgresql://user:password@host:port/database "
        "(also --database-url)",
    ),
    ("ANTHROPIC_API_KEY", "the Anthropic API key (else the system keyring)"),
    ("ANTHROPIC_BASE_URL", "an Anthropic-compatible server"),
    ("YAK_MODEL", "the chat model"),
    ("YAK_MEMORY_MODEL", "the model that rewrites memory documents"),
    (
        "YAK_REFRESH_IDLE_SECONDS",
        "how long a conversation is quiet before its memory refresh runs (2-600)",
    ),
)


def _man_parser(p: argparse.ArgumentParser) -> None:
    p.set_defaults(func=cmd_man, needs_core=False, writes_log=False)


PARSERS = {"man": _man_parser}


def cmd_man(_args: argparse.Namespace, _ctx: Context | None) -> int:
    """``yak man``: print the manual page (roff) on stdout; returns 0."""
    print(render(), end="")
    return 0


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The manual page (roff, ``man`` macros) for ``parser`` (default: ``yak``'s own)."""
    parser = parser or build_parser()
    out = [
        f'.TH YAK 1 "" "yak {__version__}" "User Commands"',
        ".SH NAME",
        "yak \\- an AI agent in your project folder, with a memory document per workspace",
        ".SH SYNOPSIS",
        ".B yak",
        "[\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR] [\\fIWORKSPACE\\fR]",
        ".br",
        ".B yak",
        "[\\fB\\-\\-data\\-dir\\fR \\fIDIR\\fR] \\fICOMMAND\\fR ...",
        ".SH DESCRIPTION",
        _text(parser.description or ""),
        ".SH OPTIONS",
    ]
    out += _options(parser)
    out.append(".SH COMMANDS")
    for path, sub in walk(parser):
        if not path or subcommands(sub):
            continue  # the root, and groups such as "memory" (their commands follow)
        out.append(f'.SS "{_text(_usage(sub))}"')
        out.append(_text(sub.description or ""))
        for action in positionals(sub):
            out += [".TP", f"\\fI{_text(_metavar(action))}\\fR", _text(action.help or "")]
        out += _options(sub)
    out += [".SH EXIT STATUS", _text(EXIT_CODES), ".SH ENVIRONMENT"]
    for name, meaning in ENVIRONMENT:
        out += [".TP", f"\\fB{name}\\fR", _text(meaning)]
    out += [
        ".SH FILES",
        _text(
            "yak.db and settings.json in the data directory (e.g. ~/.local/share/yak); the "
            "log in the platform's log directory (e.g. ~/.local/state/yak/log/yak.log), or in "
            "log/yak.log inside a data directory chosen with --data-dir or YAK_DATA_DIR."
        ),
    ]
    return "\n".join(out) + "\n"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    lines = []
    for action in options(parser):
        if isinstance(action, argparse._HelpAction):
            continue
        names = ", ".join(f"\\fB{_text(o)}\\fR" for o in action.option_strings)
        if action.nargs != 0:
            names += f" \\fI{_text(_metavar(action))}\\fR"
        lines += [".TP", names, _text(action.help or "")]
    return lines


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest.upper()


def _usage(parser: argparse.ArgumentParser) -> str:
    """The parser's usage on one line, whatever the terminal's width."""
    formatter = argparse.HelpFormatter(parser.prog, width=10_000)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, "")
    return formatter.format_help().strip()


def _text(text: str) -> str:
    """``text`` escaped for roff: backslashes and hyphens, and no line starting a request."""
    escaped = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(
        "\\&" + line if line.startswith((".", "'")) else line for line in escaped.splitlines()
    )


if __name__ == "__main__":
    print(render(), end="")
