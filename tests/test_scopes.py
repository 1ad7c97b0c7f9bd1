"""Scopes as a user meets them on the command line: a subfolder of a workspace with a memory,
a renamed folder whose memory was left behind (``show`` names them; ``reattach`` moves one).
Exit codes, stdout JSON and the stored bytes (``yak.cli.main`` in process)."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from yak.bootstrap import open_core
from yak.cli import main

FIFTY = "".join(f"- fact {n}\n" for n in range(1, 51))


def run(capsys, *argv):
    """``yak.cli.main(argv)`` in this process; returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def seed(data_dir, folder, text):
    """Register ``folder`` and save ``text`` as its memory (as another session would)."""

    async def work():
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(workspace.id, text, expected_version=None)
            return workspace
        finally:
            await core.aclose()

    return asyncio.run(work())


@pytest.fixture
def proj(tmp_path, data_dir):
    """``proj`` with a 50-line memory and its subfolder ``proj/backend`` (none of its own)."""
    root = tmp_path / "proj"
    (root / "backend").mkdir(parents=True)
    seed(data_dir, root, FIFTY)
    return root


def test_show_json_names_the_enclosing_workspace_and_its_lines(proj, capsys):
    """``show -w proj/backend --json`` (never stored): exit 0, an empty document, and
    ``enclosing`` naming ``proj`` with its 50 lines."""
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend", "--json")
    assert (code, err) == (0, "")
    shown = json.loads(out)
    assert shown["content"] == ""
    assert shown["enclosing"]["path"] == str(proj)
    assert shown["enclosing"]["lines"] == 50
    assert shown["enclosing"]["version"] == 1
    assert shown["renamed_from"] is None


def test_plain_show_keeps_stdout_the_document_and_says_it_on_stderr(proj, capsys):
    """Plain ``show`` of the subfolder prints its (empty) document on stdout and one line on
    stderr naming the enclosing workspace, its line count and the command to read it."""
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend")
    assert (code, out) == (0, "")
    assert err == (
        f"{proj / 'backend'} has no memory of its own; the enclosing workspace {proj} has "
        f"50 lines: 'yak memory show -w {proj}'\n"
    )


def test_a_subfolder_with_its_own_memory_names_no_enclosing_one(proj, data_dir, capsys):
    """Once ``proj/backend`` has its own document, ``enclosing`` is null and stderr is empty;
    the workspace itself has none above it."""
    seed(data_dir, proj / "backend", "- api: fastapi\n")
    code, out, err = run(capsys, "memory", "show", "-w", proj / "backend", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["enclosing"] is None
    code, out, err = run(capsys, "memory", "show", "-w", proj)
    assert (code, out, err) == (0, FIFTY, "")


def test_an_empty_enclosing_document_is_not_offered(tmp_path, data_dir, capsys):
    """A parent registered with an empty document is no memory to offer: ``enclosing`` null."""
    (tmp_path / "top" / "sub").mkdir(parents=True)
    seed(data_dir, tmp_path / "top", "")
    code, out, _ = run(capsys, "memory", "show", "-w", tmp_path / "top" / "sub", "--json")
    assert code == 0
    assert json.loads(out)["enclosing"] is None


@pytest.fixture
def renamed(tmp_path, data_dir):
    """``old/app`` had a 3-line memory, then the folder was moved to ``new/app``."""
    old = tmp_path / "old" / "app"
    old.mkdir(parents=True)
    seed(data_dir, old, "- one\n- two\n- three\n")
    new = tmp_path / "new" / "app"
    new.parent.mkdir()
    shutil.move(old, new)
    return old, new


def test_show_names_the_orphan_a_renamed_folder_looks_like(renamed, capsys):
    """``show --json`` in the renamed folder names the orphan as ``renamed_from`` (path,
    lines); plain ``show`` says it on stderr with the command that moves it."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "show", "-w", new, "--json")
    assert (code, err) == (0, "")
    candidate = json.loads(out)["renamed_from"]
    assert (candidate["path"], candidate["lines"]) == (str(old), 3)
    code, out, err = run(capsys, "memory", "show", "-w", new)
    assert (code, out) == (0, "")
    assert err == (
        f"{new} looks like {old}, which no longer exists and has a memory of 3 lines: "
        f"'yak memory reattach {old} -w {new}' moves it here.\n"
    )


def test_reattach_moves_the_memory_and_its_history_here(renamed, capsys):
    """``reattach OLD -w NEW`` exits 0; ``show`` in the new folder prints the old bytes, the
    history is the old one, and the old path no longer lists."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "reattach", old, "-w", new, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["workspace"] == str(new)
    assert json.loads(out)["lines"] == 3
    code, out, _ = run(capsys, "memory", "show", "-w", new, "--json")
    shown = json.loads(out)
    assert (shown["content"], shown["version"], shown["renamed_from"]) == (
        "- one\n- two\n- three\n",
        1,
        None,
    )
    code, out, _ = run(capsys, "memory", "list", "--json")
    assert [row["workspace"] for row in json.loads(out)] == [str(new)]


def test_declining_is_remembered(renamed, capsys):
    """``reattach OLD --decline`` exits 0 and ``show`` stops naming OLD in that folder; the
    orphan keeps its memory."""
    old, new = renamed
    code, out, err = run(capsys, "memory", "reattach", old, "--decline", "-w", new)
    assert (code, err) == (0, "")
    assert out == f"{old} will no longer be offered to {new}.\n"
    code, out, _ = run(capsys, "memory", "show", "-w", new, "--json")
    assert json.loads(out)["renamed_from"] is None
    code, out, _ = run(capsys, "memory", "show", "-w", old)
    assert out == "- one\n- two\n- three\n"


def test_reattach_refuses_a_folder_that_still_exists_or_was_never_stored(proj, tmp_path, capsys):
    """Re-attaching a workspace whose folder exists, or a path never stored, is exit 2 with
    one line, and nothing moves."""
    code, out, err = run(capsys, "memory", "reattach", proj, "-w", proj / "backend")
    assert (code, out) == (2, "")
    assert "still exists" in err and err.count("\n") == 1
    code, out, err = run(capsys, "memory", "reattach", tmp_path / "nowhere", "-w", proj)
    assert (code, out) == (2, "")
    assert err.startswith("yak: no workspace was stored for ")
    code, out, _ = run(capsys, "memory", "show", "-w", proj)
    assert out == FIFTY
