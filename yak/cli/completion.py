"""``yak completion bash|zsh|fish``: shell completion scripts generated from the parser.

The scripts are built from ``yak.cli.parsing.build_parser()`` when the command runs, so a new
command or option completes without editing anything here. What completes: commands and subcommands,
every option, the choices of an option or argument (``--format``, ``completion``), folders after
an option or argument whose name says it takes one (``-w DIR``, ``--data-dir DIR``,
``WORKSPACE``), and file names after one that takes a file (``--file F``, ``-o FILE``,
``import FILE``). zsh runs the bash script through its ``bashcompinit`` layer.

Install: ``yak completion bash > ~/.local/share/bash-completion/completions/yak``;
``yak completion zsh > "${fpath[1]}/_yak"``;
``yak completion fish > ~/.config/fish/completions/yak.fish``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import TYPE_CHECKING

from yak.cli.parsing import build_parser
from yak.errors import UsageError

if TYPE_CHECKING:
    from yak.cli.context import Context

SHELLS = ("bash", "zsh", "fish")
FOLDER_METAVARS = frozenset({"DIR", "WORKSPACE"})
FILE_METAVARS = frozenset({"F", "FILE", "FILE|-"})


def _completion_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(func=cmd_completion, needs_core=False, writes_log=False)


PARSERS = {"completion": _completion_parser}


def cmd_completion(args: argparse.Namespace, _ctx: Context | None) -> int:
    """Print the script for ``args.shell``; returns 0.

    Raises:
        UsageError: an unknown shell (argparse refuses it first).
    """
    parser = build_parser()
    if args.shell == "fish":
        script = fish_script(parser)
    elif args.shell in ("bash", "zsh"):
        script = bash_script(parser, zsh=args.shell == "zsh")
    else:
        raise UsageError(f"no completion for {args.shell}; choose bash, zsh or fish")
    print(script, end="")
    return 0


# --- the parser's shape -----------------------------------------------------------------------
def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` with its command path (``()``, ``("memory",)``,
    ``("memory", "list")``…), parents first."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from walk(child, (*path, name))


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    """``(name, help)`` of the commands directly under ``parser``, in the parser's order."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            found += [(name, helps.get(name, "")) for name in action.choices]
    return found


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The optional arguments of ``parser`` (those with option strings)."""
    return [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS]


def positionals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The positional arguments of ``parser`` other than its subcommands."""
    return [
        a
        for a in parser._actions
        if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
    ]


def value_kind(action: argparse.Action) -> str:
    """What an argument's value is: ``"dir"``, ``"file"``, ``"choice"``, ``"none"`` (a flag)
    or ``"word"``."""
    if action.option_strings and action.nargs == 0:
        return "none"
    if action.choices is not None:
        return "choice"
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    if metavar in FOLDER_METAVARS:
        return "dir"
    if metavar in FILE_METAVARS or "FILE" in metavar:
        return "file"
    return "word"


# --- bash (and zsh through bashcompinit) ------------------------------------------------------
def bash_script(parser: argparse.ArgumentParser, *, zsh: bool = False) -> str:
    """The completion script for bash (``zsh=True``: the same, loaded through zsh's
    ``bashcompinit``)."""
    commands, opts, takes_value, values, positional = [], [], [], [], []
    for path, sub in walk(parser):
        key = " ".join(path)
        names = " ".join(name for name, _help in subcommands(sub))
        if names:
            commands.append(f'        "{key}") echo "{names}" ;;')
        words = " ".join(s for a in options(sub) for s in a.option_strings)
        opts.append(f'        "{key}") echo "{words}" ;;')
        for action in options(sub):
            kind = value_kind(action)
            if kind == "none":
                continue
            for option in action.option_strings:
                takes_value.append(option)
                values.append(f'        "{key}|{option}") {_bash_values(action, kind)} ;;')
        for action in positionals(sub)[:1]:  # the first argument after the command
            kind = value_kind(action)
            positional.append(f'        "{key}") {_bash_values(action, kind)} ;;')
    unique_takes_value = " ".join(sorted(set(takes_value)))
    nl = "\n"
    script = f"""# bash completion for yak (generated by 'yak completion bash')
_yak_commands() {{
    case "$1" in
{nl.join(commands)}
    esac
}}
_yak_options() {{
    case "$1" in
{nl.join(opts)}
    esac
}}
_yak_values() {{
    case "$1" in
{nl.join(values)}
        *) return 1 ;;
    esac
}}
_yak_argument() {{
    case "$1" in
{nl.join(positional)}
        *) return 1 ;;
    esac
}}
_yak() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local path="" word i takes=" {unique_takes_value} "
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        if [[ "$takes" == *" $word "* ]]; then
            ((i++))
            continue
        fi
        [[ "$word" == -* ]] && continue
        if [[ " $(_yak_commands "$path") " == *" $word "* ]]; then
            path="${{path:+$path }}$word"
        fi
    done
    if [[ "$takes" == *" $prev "* ]]; then
        COMPREPLY=($(_yak_values "$path|$prev"))
        return 0
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_yak_options "$path")" -- "$cur"))
        return 0
    fi
    COMPREPLY=($(compgen -W "$(_yak_commands "$path")" -- "$cur"))
    if [[ -z "$path" ]]; then
        COMPREPLY+=($(compgen -d -- "$cur"))  # yak [WORKSPACE]
    elif [[ -z "$(_yak_commands "$path")" ]]; then
        COMPREPLY+=($(_yak_argument "$path"))
    fi
}}
complete -o filenames -F _yak yak
"""
    if zsh:
        script = (
            "#compdef yak\n# zsh completion for yak (generated by 'yak completion zsh')\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + script
        )
    return script


def _bash_values(action: argparse.Action, kind: str) -> str:
    """The bash command that prints the candidate values of ``action`` for ``$cur``."""
    if kind == "choice":
        assert action.choices is not None
        words = " ".join(str(choice) for choice in action.choices)
        return f'compgen -W "{words}" -- "$cur"'
    if kind == "dir":
        return 'compgen -d -- "$cur"'
    if kind == "file":
        return 'compgen -f -- "$cur"'
    return "return 0"


# --- fish -------------------------------------------------------------------------------------
def fish_script(parser: argparse.ArgumentParser) -> str:
    """The completion script for fish."""
    lines = [
        "# fish completion for yak (generated by 'yak completion fish')",
        "complete -c yak -f",
        "complete -c yak -n __fish_use_subcommand -a '(__fish_complete_directories)'",
    ]
    for path, sub in walk(parser):
        children = subcommands(sub)
        condition = _fish_condition(path, [name for name, _help in children])
        for name, text in children:
            lines.append(f"complete -c yak -n {condition} -a {name} -d {_fish_quote(text)}")
        for action in options(sub):
            lines.append(
                f"complete -c yak -n {_fish_condition(path, [])} "
                + _fish_option(action)
                + f" -d {_fish_quote(action.help or '')}"
            )
        for action in positionals(sub)[:1]:
            kind = value_kind(action)
            if kind == "choice":
                assert action.choices is not None
                words = " ".join(str(c) for c in action.choices)
                lines.append(f"complete -c yak -n {condition} -a {_fish_quote(words)}")
            elif kind == "dir":
                lines.append(f"complete -c yak -n {condition} -a '(__fish_complete_directories)'")
            elif kind == "file":
                lines.append(f"complete -c yak -n {condition} -F")
    return "\n".join(lines) + "\n"


def _fish_condition(path: tuple[str, ...], children: list[str]) -> str:
    """A fish condition true when the command line is at ``path`` (and, when ``children`` is
    given, before any of them)."""
    if not path:
        test = "__fish_use_subcommand" if children else "true"
    else:
        test = "; and ".join(f"__fish_seen_subcommand_from {word}" for word in path)
        if children:
            test += f"; and not __fish_seen_subcommand_from {' '.join(children)}"
    return _fish_quote(test)


def _fish_option(action: argparse.Action) -> str:
    parts = []
    for option in action.option_strings:
        if option.startswith("--"):
            parts.append(f"-l {option[2:]}")
        else:
            parts.append(f"-s {option[1:]}")
    kind = value_kind(action)
    if kind == "choice":
        assert action.choices is not None
        parts.append(f"-x -a {_fish_quote(' '.join(str(c) for c in action.choices))}")
    elif kind == "dir":
        parts.append("-x -a '(__fish_complete_directories)'")
    elif kind == "file":
        parts.append("-r -F")
    elif kind == "word":
        parts.append("-x")
    return " ".join(parts)


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
