"""Command-line conventions: help that shows the app form and the exit codes, a typo answered
with the closest command (never a window), global options after the subcommand, a description
on every subcommand, shell completion, a manual page in step with the parser, and the shared
log file. Each case runs the real ``python -m yak``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support.cli import run_cli, yak
from tests.test_cli_startup import DATABASE_SDK_QT, loaded, run_yak
from yak.cli import build_parser
from yak.cli.completion import walk
from yak.cli.manpage import render

ROOT = Path(__file__).resolve().parent.parent


def test_help_shows_the_app_form_the_commands_and_the_exit_codes():
    """``yak --help`` starts with both forms (``yak [WORKSPACE]`` opens the app), lists every
    command and ends with the exit codes."""
    result = yak("--help", text=True)
    assert result.returncode == 0
    assert result.stdout.startswith(
        "usage: yak [--data-dir DIR] [WORKSPACE]\n       yak [--data-dir DIR] COMMAND ...\n"
    )
    for command in ("memory", "ask", "mcp", "install-desktop", "completion"):
        assert f"\n    {command} " in result.stdout or f"\n    {command}\n" in result.stdout
    flat = " ".join(result.stdout.split())
    assert "Exit codes: 0 done; 1 the database cannot be read or written; 2 bad usage" in flat


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("memroy", "yak: 'memroy' is not a command or a folder; did you mean 'memory'?"),
        ("aks", "yak: 'aks' is not a command or a folder; did you mean 'ask'?"),
        ("list", "yak: 'list' is not a command or a folder; did you mean 'memory list'?"),
        ("zzzz", "yak: 'zzzz' is not a command or a folder (see 'yak --help')"),
    ],
)
def test_a_word_that_is_neither_a_command_nor_a_folder_is_an_error_not_a_window(word, message):
    """A typo exits 2 with one line naming the closest command, and loads no Qt (no window
    is opened on a folder that does not exist)."""
    result, imported = run_yak(word)
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == message
    assert loaded(imported, ("PySide6",)) == []


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("shw", "yak: 'shw' is not a memory subcommand; did you mean 'yak memory show'?"),
        ("hist", "yak: 'hist' is not a memory subcommand; did you mean 'yak memory history'?"),
        ("zzzz", "yak: 'zzzz' is not a memory subcommand (see 'yak memory --help')"),
    ],
)
def test_a_mistyped_memory_subcommand_names_the_closest_one(word, message):
    """``yak memory shw`` exits 2 with one line naming the closest subcommand, not argparse's
    list of every choice."""
    result, _ = run_yak("memory", word, "-w", ".")
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == message


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["memory", "show", "--jsn"],
            "yak: unrecognized arguments: --jsn; did you mean '--json'? "
            "(see 'yak memory show --help')\n",
        ),
        (
            ["ask", "--yess", "hello"],
            "yak: unrecognized arguments: --yess; did you mean '--yes'? (see 'yak ask --help')\n",
        ),
        (
            ["memory", "list", "extra"],
            "yak: unrecognized arguments: extra (see 'yak memory list --help')\n",
        ),
    ],
)
def test_a_mistyped_option_names_the_closest_one_and_the_subcommands_help(
    argv, message, capsys, data_dir
):
    """An option the subcommand does not have exits 2 with one line: the closest option of
    that subcommand, and that subcommand's help (not 'yak --help')."""
    assert run_cli(capsys, *argv) == (2, "", message)


def test_a_file_given_for_the_app_says_it_is_a_file(tmp_path):
    """``yak notes.txt`` (a file, where the app takes a folder) exits 2 saying so, as
    ``-w FILE`` does, and opens no window."""
    notes = tmp_path / "notes.txt"
    notes.write_text("x\n")
    result, imported = run_yak(str(notes))
    assert (result.returncode, result.stdout) == (2, b"")
    assert result.stderr.decode() == f"yak: {notes} is a file, not a folder"
    assert loaded(imported, ("PySide6",)) == []


def test_help_never_splits_a_path_at_a_hyphen():
    """At 80 columns the install line of ``completion --help`` keeps its path whole, so it can
    be copied."""
    shown = yak("completion", "--help", env={**os.environ, "COLUMNS": "80"}, text=True)
    assert shown.returncode == 0
    assert "~/.local/share/bash-completion/completions/yak" in shown.stdout
    assert all(len(line) <= 78 or " " not in line.strip() for line in shown.stdout.splitlines())


def test_data_dir_is_accepted_after_the_subcommand(tmp_path):
    """``yak memory set … --data-dir DIR`` and ``yak memory list --json --data-dir DIR`` use DIR,
    like ``yak --data-dir DIR memory …``."""
    data, folder = tmp_path / "data", tmp_path / "project"
    folder.mkdir()
    saved = yak("memory", "set", "-w", folder, "--data-dir", data, stdin="- a note\n", text=True)
    assert saved.returncode == 0, saved.stderr
    after = yak("memory", "list", "--json", "--data-dir", str(data), text=True)
    before = yak("--data-dir", str(data), "memory", "list", "--json", text=True)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout) == json.loads(before.stdout)
    assert [entry["workspace"] for entry in json.loads(after.stdout)] == [str(folder)]


def test_every_command_and_subcommand_has_a_description():
    """Each command's ``--help`` opens with a description, not only a usage line."""
    missing = [" ".join(path) for path, sub in walk(build_parser()) if not sub.description]
    assert missing == []


def test_the_cli_writes_the_shared_rotating_log(tmp_path):
    """A command that writes logs to the same ``yak.log`` as the desktop app (the command,
    never its arguments), in the chosen data directory's ``log`` folder; one that only reads
    and goes well writes no line there."""
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    folder = tmp_path / "project"
    folder.mkdir()
    notes = tmp_path / "notes.txt"
    notes.write_text("secret-looking argument\n", encoding="utf-8")
    data = ("--data-dir", str(tmp_path / "data"))

    result = yak(*data, "memory", "list", env=env, text=True)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.rglob("yak.log")) == []

    result = yak(
        *data, "memory", "set", "-w", str(folder), "--file", str(notes), env=env, text=True
    )
    assert result.returncode == 0, result.stderr
    logs = list(tmp_path.rglob("yak.log"))
    assert logs == [tmp_path / "data" / "log" / "yak.log"]
    logged = logs[0].read_text(encoding="utf-8")
    assert "yak memory set" in logged
    assert "yak memory list" not in logged
    assert str(notes) not in logged


def test_one_spelling_of_a_settings_page_everywhere():
    """Menus and pages are named with "›" (``Settings › Provider``, ``File › Open``) in every
    sentence of the code and the docs; never "Settings > Provider" or "Settings → Memory"."""
    other = ("Settings > ", "Settings → ", "Settings -> ")
    found = [
        f"{path.relative_to(ROOT)}: {spelling!r}"
        for folder in ("yak", "docs")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md")
        for spelling in other
        if spelling in path.read_text(encoding="utf-8")
    ]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found += [f"README.md: {spelling!r}" for spelling in other if spelling in readme]
    assert found == []
    assert "Settings › Provider" in readme


def complete(*words: str) -> list[str]:
    """What bash offers for the last of ``words`` (``yak`` first) after sourcing
    ``yak completion bash``."""
    script = yak("completion", "bash", text=True).stdout
    array = " ".join(f"'{w}'" for w in words)
    probe = (
        f"{script}\nCOMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; _yak; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    result = subprocess.run(
        ["bash", "-c", probe], capture_output=True, text=True, timeout=30, check=False
    )
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_bash_sources_the_completion_and_completes_commands_options_and_values(tmp_path):
    """The bash script loads in bash without an error and completes commands, subcommands,
    options, choices and folders."""
    (tmp_path / "sub-folder").mkdir()
    assert complete("yak", "mem") == ["memory"]
    assert complete("yak", "memory", "li") == ["list", "link"]
    assert complete("yak", "memory", "list", "--j") == ["--json"]
    assert complete("yak", "memory", "export", "--format", "") == ["text", "markdown", "json"]
    assert complete("yak", "completion", "") == ["bash", "zsh", "fish"]
    assert complete("yak", "ask", "-w", f"{tmp_path}/sub") == [f"{tmp_path}/sub-folder"]
    assert complete("yak", "--data-dir", str(tmp_path), "memory", "sh") == ["show"]


def test_zsh_and_fish_scripts_are_well_formed():
    """zsh gets the bash script through bashcompinit; fish gets one ``complete`` per word. Each
    is checked by its shell's parser where that shell is installed, bash's otherwise."""
    zsh = yak("completion", "zsh", text=True).stdout
    assert zsh.startswith("#compdef yak\n")
    checker = shutil.which("zsh") or "bash"
    assert subprocess.run([checker, "-n"], input=zsh, text=True).returncode == 0
    fish = yak("completion", "fish", text=True).stdout.splitlines()
    assert all(line.startswith(("#", "complete -c yak")) for line in fish)
    assert any(
        "__fish_seen_subcommand_from memory" in line and " -a list " in line for line in fish
    )
    if shutil.which("fish"):
        assert subprocess.run(["fish", "-n"], input="\n".join(fish), text=True).returncode == 0


def test_completion_loads_no_core_or_database():
    """Printing a completion script builds every command's parser but opens nothing: no core,
    database, SDK or Qt."""
    result, imported = run_yak("completion", "bash")
    assert result.returncode == 0
    assert loaded(imported, (*DATABASE_SDK_QT, "yak.core", "yak.bootstrap")) == []


def test_the_manual_page_matches_the_parser_and_ships_with_the_wheel():
    """``packaging/yak.1`` is what the parser generates now (after changing a command, run
    ``python -m yak.cli.manpage > packaging/yak.1``), it documents every command, and the
    wheel installs it under share/man/man1."""
    page = (ROOT / "packaging" / "yak.1").read_text(encoding="utf-8")
    assert page == render(), "regenerate with: python -m yak.cli.manpage > packaging/yak.1"
    for path, _parser in walk(build_parser()):
        if len(path) == 2 or path in (
            ("ask",),
            ("mcp",),
            ("completion",),
            ("install-desktop",),
            ("man",),
        ):
            assert f'.SS "yak {" ".join(path)}'.replace("-", "\\-") in page, path
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["setuptools"]["data-files"]["share/man/man1"] == ["packaging/yak.1"]
    if shutil.which("groff"):
        result = subprocess.run(
            ["groff", "-man", "-Tutf8", "-ww", "-z"],
            input=page,
            capture_output=True,
            text=True,
            check=False,
        )
        assert (result.returncode, result.stderr) == (0, "")


def test_yak_man_prints_the_manual_page_for_any_install():
    """An editable install puts no page where ``man yak`` looks: ``yak man`` prints the same
    page (``yak man | man -l -``), with no database opened, exit 0."""
    result = yak("man", text=True)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (ROOT / "packaging" / "yak.1").read_text(encoding="utf-8")
    assert '.SS "yak memory diff' in result.stdout


def test_commands_that_print_nothing_say_why_and_stats_takes_one_scope(tmp_path, capsys, data_dir):
    """``diff`` on a folder with no memory, ``diff`` of a version with itself and ``show
    --version 0`` print nothing on stdout (a pipe gets the empty diff or document) and say why
    on stderr, exit 0; ``stats --all -w DIR`` is one line, exit 2."""
    folder = tmp_path / "proj"
    folder.mkdir()
    assert run_cli(capsys, "memory", "diff", "-w", folder) == (
        0,
        "",
        f"{folder} has no memory yet: there is no change to show.\n",
    )
    assert run_cli(capsys, "memory", "show", "--version", "0", "-w", folder)[1:] == (
        "",
        "Version 0 is the empty memory before its first save.\n",
    )
    assert run_cli(capsys, "memory", "set", "--file", _file(tmp_path), "-w", folder)[0] == 0
    assert run_cli(capsys, "memory", "diff", "1", "1", "-w", folder) == (
        0,
        "",
        "Versions 1 and 1 of the memory are the same.\n",
    )
    assert run_cli(capsys, "memory", "stats", "--all", "-w", folder) == (
        2,
        "",
        "yak: give -w DIR or --all, not both\n",
    )


def _file(tmp_path: Path) -> Path:
    made = tmp_path / "memory.txt"
    made.write_text("- tests: pytest -q\n", encoding="utf-8")
    return made
