"""Every command-line error is exactly one clean line: user text with control characters
escaped, long values shortened in the middle, and a path deeper than the system allows said
as such."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.cli import run_cli as run
from tests.support.cli import yak_command
from yak.text import escape_controls, middle, shown

LONG = "x" * 5000


def clean_line(err: str) -> str:
    """The one line on stderr, asserting it is one line with no control character."""
    assert err.endswith("\n") and err.count("\n") == 1, err
    line = err[:-1]
    assert escape_controls(line) == line, line
    assert len(line) <= 410
    return line


@pytest.mark.parametrize(
    ("path", "shown_as"),
    [
        ("/nowhere/a\nb", "/nowhere/a\\nb"),
        ("/nowhere/\x1b[31mred\x1b[0m", "/nowhere/\\x1b[31mred\\x1b[0m"),
        ("/nowhere/\u202eevil", "/nowhere/\\u202eevil"),
        ("/nowhere/tab\there\r", "/nowhere/tab\\there\\r"),
    ],
)
def test_control_characters_in_a_path_are_escaped(capsys, data_dir, path, shown_as):
    """A newline, ANSI escapes, a right-to-left override or a tab in a path: exit 2 and one
    line naming the path with its control characters escaped."""
    code, out, err = run(capsys, "memory", "show", "-w", path)
    assert (code, out) == (2, "")
    assert clean_line(err) == f"yak: no such folder: {shown_as}"


def test_a_long_path_is_shortened_in_the_middle_and_json_says_the_same(capsys, data_dir, tmp_path):
    """A 5,000-character path that does not exist: one line of at most 400 characters keeping
    the path's start and end; ``--json`` carries the same sentence."""
    path = f"/nowhere/{LONG}/end"
    code, out, err = run(capsys, "memory", "show", "-w", path, "--json")
    line = clean_line(err)
    assert code == 2 and line.startswith("yak: ") and "/nowhere/xxx" in line
    assert line.endswith("xxx/end") and "…" in line
    assert json.loads(out) == {"error": line[len("yak: ") :], "exit_code": 2, "status": None}


def test_a_folder_deeper_than_the_path_limit_gets_its_own_sentence(capsys, data_dir, tmp_path):
    """A folder whose full path is longer than the system allows is not "no such folder"."""
    start = os.getcwd()
    os.chdir(tmp_path)
    try:
        depth = 0
        while len(os.getcwd()) < 4200:
            os.mkdir("d" * 200)
            os.chdir("d" * 200)
            depth += 1
        code, out, err = run(capsys, "memory", "set", "-w", ".")
    finally:
        os.chdir(start)
    line = clean_line(err)
    assert code == 2 and depth > 0
    assert line.startswith("yak: the folder's full path is too long for this system (")
    assert "no such folder" not in line


def test_a_file_name_with_a_newline_stays_one_line(capsys, data_dir, tmp_path):
    """``memory import`` of a missing file whose name holds a newline and escapes: one line."""
    name = tmp_path / "bad\nname\x1b[2J.txt"
    code, _out, err = run(capsys, "memory", "import", str(name), "-w", str(tmp_path))
    line = clean_line(err)
    assert code == 2 and "bad\\nname\\x1b[2J.txt" in line


def test_the_text_helpers():
    """``shown`` escapes then shortens in the middle; ``middle`` keeps head and tail."""
    assert middle("abcdefghij", 5) == "ab…ij"
    assert middle("abc", 5) == "abc"
    assert shown("a\nb\x07\x7f\u2028") == "a\\nb\\x07\\x7f\\u2028"
    assert shown("p" * 300, 11) == "ppppp…ppppp"
    assert escape_controls("plain café ✓") == "plain café ✓"


def test_output_that_cannot_be_written_is_one_line_not_a_traceback(tmp_path):
    """``yak memory show > /dev/full`` (a full disk) is one line and exit 1; with standard
    output closed (``>&-``) the command says so and does nothing (exit 2)."""
    import os
    import subprocess

    env = {**os.environ, "YAK_DATA_DIR": str(tmp_path / "data")}
    folder = tmp_path / "proj"
    folder.mkdir()
    command = yak_command("memory", "list", "--json")
    with open("/dev/full", "w") as full:
        ran = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, env=env, check=False)
    assert ran.returncode == 1
    assert ran.stderr.decode() == "yak: cannot write the output: No space left on device\n"
    ran = subprocess.run(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert ran.returncode == 2
    assert ran.stderr.decode() == "yak: standard output is closed; nothing was done\n"
