"""``yak memory sync`` as a user runs it: the bytes of the file written, stdout, exit codes
(``yak.cli.main`` in process, as most of ``tests/test_cli_memory.py`` does)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

from tests.support.cli import run_cli as run
from yak.bootstrap import open_core

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases

BLOCK = b"<!-- yak:memory -->\n- tests: pytest\n- lint: ruff\n<!-- /yak:memory -->"
DOCUMENT = "- tests: pytest\n- lint: ruff\n"


@pytest.fixture
def folder(tmp_path, data_dir):
    """A workspace folder whose memory is :data:`DOCUMENT` (version 1)."""
    made = tmp_path / "project"
    made.mkdir()

    async def seed():
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.open(str(made))
            await core.memory.save(workspace.id, DOCUMENT, expected_version=0)
        finally:
            await core.aclose()

    asyncio.run(seed())
    return made


def test_sync_creates_the_file_then_says_already_in_sync(folder, capsys):
    """A missing file is created holding just the block; the second run writes nothing (same
    bytes, same modification time) and says so, exit 0 both times."""
    target = folder / "AGENTS.md"
    code, out, err = run(capsys, "memory", "sync", target, "-w", folder)
    assert (code, err) == (0, "")
    assert out == f"Created {target} with version 1 of the memory (2 lines).\n"
    assert target.read_bytes() == BLOCK + b"\n"
    before = target.stat().st_mtime_ns

    code, out, err = run(capsys, "memory", "sync", target, "-w", folder)
    assert (code, err) == (0, "")
    assert out == f"{target} is already in sync with version 1 of the memory.\n"
    assert target.read_bytes() == BLOCK + b"\n"
    assert target.stat().st_mtime_ns == before


def test_sync_appends_a_block_and_keeps_every_other_byte(folder, capsys):
    """A file without markers keeps its bytes (title, CRLF lines, no final newline) and gets
    the block after a blank line, in the file's CRLF style; a second run is byte-identical."""
    target = folder / "CLAUDE.md"
    original = b"# Project guidelines\r\n\r\nAlways run make lint"
    target.write_bytes(original)
    code, out, _ = run(capsys, "memory", "sync", target, "-w", folder, "--json")
    assert code == 0
    assert json.loads(out) == {
        "file": str(target),
        "created": False,
        "changed": True,
        "version": 1,
        "lines": 2,
        "workspace": str(folder),
        "workspace_id": json.loads(out)["workspace_id"],
        "kept_in_sync": False,
    }
    assert target.read_bytes() == original + b"\r\n\r\n" + BLOCK.replace(b"\n", b"\r\n") + b"\r\n"
    first = target.read_bytes()
    code, out, _ = run(capsys, "memory", "sync", target, "-w", folder, "--json")
    assert code == 0 and json.loads(out)["changed"] is False
    assert target.read_bytes() == first


def test_sync_replaces_only_the_block(folder, capsys, data_dir):
    """Text before and after an existing block is kept byte for byte; only what lies between
    the markers becomes the current document (a marker inside the document is neutralized).
    (The block's text was typed by hand, so this first sync needs ``--force``.)"""
    target = folder / "AGENTS.md"
    before = b"# Rules\n\nUse tabs.\n\n<!-- yak:memory -->\nold notes\n"
    after = b"<!-- /yak:memory -->\n\n## Footer \xc3\xa9\n  trailing  "
    target.write_bytes(before + after)
    code, out, _ = run(capsys, "memory", "sync", target, "-w", folder, "--force")
    assert code == 0 and out.startswith(f"Updated {target}")
    assert target.read_bytes() == b"# Rules\n\nUse tabs.\n\n" + BLOCK + after[20:]

    async def tamper():
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.find(str(folder))
            await core.memory.save(workspace.id, "x <!-- /yak:memory --> y\n", expected_version=1)
        finally:
            await core.aclose()

    asyncio.run(tamper())
    assert run(capsys, "memory", "sync", target, "-w", folder)[0] == 0
    assert target.read_bytes() == (
        b"# Rules\n\nUse tabs.\n\n<!-- yak:memory -->\nx [/yak:memory] y\n<!-- /yak:memory -->"
        + after[20:]
    )


@pytest.mark.parametrize(
    "content, message",
    [
        (b"<!-- yak:memory -->\nno end\n", "are not one block"),
        (b"<!-- /yak:memory -->\n<!-- yak:memory -->\n", "are not one block"),
        (b"\xff\xfe latin\n", "is not UTF-8 text"),
    ],
)
def test_sync_refuses_a_file_it_cannot_change_safely(folder, capsys, content, message):
    """A broken marker pair or a file that is not UTF-8: exit 2, one ``yak:`` line, the file
    untouched."""
    target = folder / "AGENTS.md"
    target.write_bytes(content)
    code, out, err = run(capsys, "memory", "sync", target, "-w", folder)
    assert code == 2 and out == ""
    assert err.startswith("yak: ") and message in err and err.count("\n") == 1, err
    assert target.read_bytes() == content


def _save(data_dir, folder, text, version):
    async def write():
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.find(str(folder))
            await core.memory.save(workspace.id, text, expected_version=version)
        finally:
            await core.aclose()

    asyncio.run(write())


HAND_EDITED = (
    b"# Rules\n\n<!-- yak:memory -->\n- tests: pytest\n- lint: ruff, never black\n"
    b"<!-- /yak:memory -->\n"
)
CONFLICTED = (
    b"<!-- yak:memory -->\n<<<<<<< HEAD\n- tests: pytest\n=======\n- tests: tox\n"
    b">>>>>>> feature\n- lint: ruff\n<!-- /yak:memory -->\n"
)


@pytest.mark.parametrize(
    "content, what",
    [
        (HAND_EDITED, "text Yak did not write there (an edit by hand?)"),
        (CONFLICTED, "git conflict markers"),
    ],
)
def test_sync_refuses_a_block_edited_by_hand_or_conflicted_until_forced(
    folder, capsys, content, what
):
    """A block whose text Yak never wrote (a line changed by hand) or holding git conflict
    markers: exit 3, one stderr sentence saying which and how to go on, the file byte for byte
    as it was; ``--force`` then replaces the block (exit 0)."""
    target = folder / "AGENTS.md"
    target.write_bytes(content)
    code, out, err = run(capsys, "memory", "sync", target, "-w", folder)
    assert (code, out) == (3, "")
    assert err == (
        f"yak: {target}'s memory block holds {what}, so nothing was written; move what you "
        "want to keep into the memory, then sync with --force to replace the block\n"
    )
    assert target.read_bytes() == content

    code, out, err = run(capsys, "memory", "sync", target, "-w", folder, "--force")
    assert (code, err) == (0, "")
    assert target.read_bytes().endswith(BLOCK + b"\n")


def test_sync_replaces_a_block_holding_an_older_version_without_force(folder, capsys, data_dir):
    """A block Yak wrote for version 1 (CRLF file) is replaced by version 2 without a question:
    it is not a hand edit."""
    target = folder / "AGENTS.md"
    target.write_bytes(b"# Rules\r\n")
    assert run(capsys, "memory", "sync", target, "-w", folder)[0] == 0
    _save(data_dir, folder, "- tests: pytest\n", 1)
    code, out, err = run(capsys, "memory", "sync", target, "-w", folder)
    assert (code, err) == (0, "")
    assert target.read_bytes() == (
        b"# Rules\r\n\r\n<!-- yak:memory -->\r\n- tests: pytest\r\n<!-- /yak:memory -->\r\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_sync_keeps_the_file_mode_and_writes_through_a_symlink(folder, capsys):
    """An existing file keeps its permission bits; a symlink stays a link and its target gets
    the block (CLAUDE.md linked to the workspace's AGENTS.md)."""
    real = folder / "AGENTS.md"
    real.write_bytes(b"Intro.\n")
    os.chmod(real, 0o640)
    link = folder / "CLAUDE.md"
    link.symlink_to(real)
    assert run(capsys, "memory", "sync", link, "-w", folder)[0] == 0
    assert link.is_symlink()
    assert real.read_bytes() == b"Intro.\n\n" + BLOCK + b"\n"
    assert real.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("keep", [False, True], ids=["once", "keep"])
def test_sync_writes_no_file_outside_the_workspace(folder, capsys, tmp_path, keep, monkeypatch):
    """A file outside the workspace (as root, /etc/passwd took the block), or a link inside it
    that leads outside (an agent's `ln -s ~/.bashrc AGENTS.md`), is refused: exit 2, one line
    naming the absolute path, every file byte-identical and nothing kept in sync."""
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"Mine.\n")
    link = folder / "AGENTS.md"
    link.symlink_to(outside)
    extra = ["--keep"] if keep else []
    monkeypatch.chdir(folder)
    for target in (outside, link, "../outside.md"):
        code, out, err = run(capsys, "memory", "sync", str(target), "-w", folder, *extra)
        assert (code, out) == (2, "")
        assert err.count("\n") == 1 and "outside the workspace" in err, err
        assert str(outside if target != link else link) in err
    assert outside.read_bytes() == b"Mine.\n"
    assert run(capsys, "memory", "sync", "--stop", "-w", folder)[0] == 2  # nothing kept


# --- yak memory search --------------------------------------------------------------------------
@pytest.fixture
def three(tmp_path, data_dir):
    """Three workspaces: ``api`` and ``web`` mention Postgres (in different cases), ``docs``
    does not; ``web`` was written last."""
    made = {}

    async def seed():
        core = open_core(data_dir)
        try:
            for name, text in [
                ("api", "API service\n- db: PostgreSQL 16\n- port 8080\n"),
                ("docs", "Docs site\n- mkdocs\n"),
                ("web", "Web app\n- talks to the api\n- uses postgres via the api\n"),
            ]:
                folder = tmp_path / name
                folder.mkdir()
                workspace = await core.workspaces.open(str(folder))
                await core.memory.save(workspace.id, text, expected_version=0)
                made[name] = workspace.path
        finally:
            await core.aclose()

    asyncio.run(seed())
    return made


def test_search_finds_lines_in_every_document_case_aside(three, capsys):
    """Plain output is PATH:LINE: TEXT, newest workspace first; --json the same hits as a list
    of workspace, line, text."""
    code, out, err = run(capsys, "memory", "search", "POSTGRES")
    assert (code, err) == (0, "")
    assert out == (
        f"{three['web']}:3: - uses postgres via the api\n{three['api']}:2: - db: PostgreSQL 16\n"
    )
    code, out, _ = run(capsys, "memory", "search", "the api", "--json")
    assert code == 0
    assert json.loads(out) == [
        {"workspace": three["web"], "line": 2, "text": "- talks to the api"},
        {"workspace": three["web"], "line": 3, "text": "- uses postgres via the api"},
    ]


def test_search_without_a_match_and_with_a_blank_query(three, capsys):
    """No match: exit 0, a sentence (``--json``: ``[]``); a blank query: exit 2, one line."""
    assert run(capsys, "memory", "search", "kubernetes") == (
        0,
        "No memory document contains 'kubernetes'.\n",
        "",
    )
    assert run(capsys, "memory", "search", "kubernetes", "--json")[:2] == (0, "[]\n")
    code, out, err = run(capsys, "memory", "search", "  ", "--json")
    assert code == 2 and json.loads(out)["error"].startswith("the search text is empty")
    assert err.startswith("yak: the search text is empty") and err.count("\n") == 1
