"""Keeping AGENTS.md in sync, as a user meets it: ``yak memory sync FILE --keep`` stores the file
for the workspace and every applied revision (hand save, restore, import, refresh, accepted
proposal) rewrites its managed block, bytes outside it untouched; ``--stop`` ends it; a file
that cannot be written is one stderr line while the revision is kept."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest

from tests.support.builders import say
from tests.support.cli import run_cli as run
from tests.support.fake_api import text
from yak.bootstrap import open_core
from yak.domain import RefreshStatus, ReviewMode

OUTSIDE = "# Rules\n\nAlways run make lint\n"


def block(document):
    """The managed block ``yak memory sync`` writes for ``document``."""
    return f"<!-- yak:memory -->\n{document}<!-- /yak:memory -->\n"


@pytest.fixture
def proj(tmp_path, data_dir):
    """``proj`` with a one-line memory (version 1) and an ``AGENTS.md`` of the user's own."""
    folder = tmp_path / "proj"
    folder.mkdir()
    (folder / "AGENTS.md").write_text(OUTSIDE)

    async def seed():
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(workspace.id, "- one\n", expected_version=0)
        finally:
            await core.aclose()

    asyncio.run(seed())
    return folder


def test_keep_rewrites_the_block_after_every_hand_save_restore_and_import(proj, capsys):
    """``sync AGENTS.md --keep`` writes the block now and says it is kept; then ``set``,
    ``restore`` and ``import`` each leave the file as the user's lines plus the new document's
    block; after ``sync --stop`` a ``set`` leaves the file as it was."""
    agents = proj / "AGENTS.md"
    code, out, err = run(capsys, "memory", "sync", agents, "--keep", "-w", proj)
    assert (code, err) == (0, "")
    assert out == (
        f"Updated {agents} with version 1 of the memory (1 line).\n"
        "It is kept in sync after every change from now on ('sync --stop' ends it).\n"
    )
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n")

    (proj / "new.txt").write_text("- one\n- two\n")
    assert run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt")[::2] == (0, "")
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- two\n")
    assert run(capsys, "memory", "restore", "1", "-w", proj)[::2] == (0, "")
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n")
    (proj / "brief.md").write_text("- imported\n")
    assert run(capsys, "memory", "import", proj / "brief.md", "-w", proj)[::2] == (0, "")
    assert agents.read_text() == OUTSIDE + "\n" + block("- imported\n")

    code, out, err = run(capsys, "memory", "sync", "--stop", "-w", proj, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"workspace": str(proj), "stopped": str(agents)}
    before = agents.read_bytes()
    assert run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt")[0] == 0
    assert agents.read_bytes() == before


def test_stop_without_a_kept_file_and_sync_without_a_file_are_usage_errors(proj, capsys):
    """``sync --stop`` when nothing is kept, and ``sync`` with no FILE: exit 2, one line."""
    code, out, err = run(capsys, "memory", "sync", "--stop", "-w", proj)
    assert (code, out, err) == (2, "", f"yak: {proj} keeps no file in sync\n")
    code, out, err = run(capsys, "memory", "sync", "-w", proj)
    assert (code, out) == (2, "")
    assert err == "yak: give the FILE to write the memory into (e.g. AGENTS.md)\n"


def test_a_file_that_cannot_be_synced_is_one_line_and_the_revision_is_kept(proj, capsys):
    """When the kept file's markers were broken by hand, a ``set`` still stores its revision
    (exit 0, the new bytes in ``show``), says on stderr that the file could not be kept in
    sync and why, and leaves the file untouched."""
    agents = proj / "AGENTS.md"
    assert run(capsys, "memory", "sync", agents, "--keep", "-w", proj)[0] == 0
    broken = agents.read_text() + "<!-- yak:memory -->\n"
    agents.write_text(broken)
    (proj / "new.txt").write_text("- two\n")
    code, out, err = run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt")
    assert code == 0
    assert err == (
        f"Memory version 2 is saved, but {agents} could not be kept in sync: the file's "
        "<!-- yak:memory --> … <!-- /yak:memory --> markers are not one block (one of each, "
        "opening first); fix them by hand and sync again\n"
    )
    assert agents.read_text() == broken
    assert run(capsys, "memory", "show", "-w", proj)[1] == "- two\n"


def test_a_kept_block_edited_by_hand_is_left_and_said(proj, capsys):
    """A line changed by hand inside the kept block: the next ``set`` stores its revision
    (exit 0) but leaves AGENTS.md byte for byte and says on stderr why; ``sync --keep --force``
    then replaces the block."""
    agents = proj / "AGENTS.md"
    assert run(capsys, "memory", "sync", agents, "--keep", "-w", proj)[0] == 0
    edited = agents.read_bytes().replace(b"- one\n", b"- one, said Ann\n")
    agents.write_bytes(edited)
    (proj / "new.txt").write_text("- two\n")
    code, out, err = run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt")
    assert code == 0
    assert err == (
        f"Memory version 2 is saved, but {agents} could not be kept in sync: {agents}'s memory "
        "block holds text Yak did not write there (an edit by hand?), so nothing was written; "
        "move what you want to keep into the memory, then sync with --force to replace the "
        "block\n"
    )
    assert agents.read_bytes() == edited
    code, _, err = run(capsys, "memory", "sync", agents, "--keep", "-w", proj)
    assert code == 3 and agents.read_bytes() == edited
    assert run(capsys, "memory", "sync", agents, "--keep", "--force", "-w", proj)[::2] == (0, "")
    assert agents.read_text() == OUTSIDE + "\n" + block("- two\n")


def test_an_immutable_file_for_real(proj, capsys):
    """A file nobody may write (``chattr +i``, where the machine allows it): the revision is
    stored and the sentence names the file and the system's reason."""
    agents = proj / "AGENTS.md"
    assert run(capsys, "memory", "sync", agents, "--keep", "-w", proj)[0] == 0
    before = agents.read_bytes()
    attr = shutil.which("chattr")
    if attr is None or subprocess.run([attr, "+i", agents], check=False).returncode != 0:
        pytest.skip("chattr +i is not possible here; the broken-markers test covers the path")
    try:
        (proj / "new.txt").write_text("- two\n")
        code, _, err = run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt")
        assert code == 0
        assert err == (
            f"Memory version 2 is saved, but {agents} could not be kept in sync: cannot write "
            f"{agents}: Operation not permitted\n"
        )
        assert agents.read_bytes() == before
    finally:
        subprocess.run([attr, "-i", agents], check=False)
    assert run(capsys, "memory", "show", "-w", proj)[1] == "- two\n"


async def test_a_refresh_and_an_accepted_proposal_rewrite_the_kept_file(proj, core, fake_api):
    """An applied refresh rewrites the block; in review mode the waiting proposal leaves the
    file alone and accepting it rewrites the block."""
    agents = proj / "AGENTS.md"
    workspace = await core.workspaces.open(str(proj))
    await core.kept_file.keep_in_sync(workspace.id, str(agents))

    say(core, workspace.id, "We lint with ruff.", "Noted.")
    fake_api.script(text("- one\n- lint: ruff\n"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.APPLIED
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- lint: ruff\n")

    await core.memory.set_review_mode(workspace.id, ReviewMode.REVIEW)
    say(core, workspace.id, "We test with pytest.", "Noted.")
    fake_api.script(text("- one\n- lint: ruff\n- tests: pytest\n"))
    outcome = await core.refresh.refresh_now(workspace.id)
    assert outcome.status is RefreshStatus.NEEDS_REVIEW
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- lint: ruff\n")
    (proposal,) = await core.review.proposals(workspace.id)
    await core.review.accept(workspace.id, proposal.id)
    assert agents.read_text() == OUTSIDE + "\n" + block("- one\n- lint: ruff\n- tests: pytest\n")


def test_a_file_name_that_is_not_utf8_is_refused_before_anything_is_written(proj, capsys):
    """``sync`` of a file whose name holds bytes that are not UTF-8 (from the command line):
    one line, exit 2, no file created and nothing kept."""
    code, out, err = run(capsys, "memory", "sync", "ag\udcff.md", "--keep", "-w", proj)
    assert (code, out) == (2, "")
    assert err == (
        "yak: the file name is not UTF-8 text (invalid byte at offset 2); nothing was written\n"
    )
    assert not any(p.name.startswith("ag") for p in proj.iterdir())


def test_a_device_or_a_pipe_is_refused_and_left_as_it_is(proj, capsys):
    """``sync`` onto a character device or a FIFO is one line, exit 2: the device stays a
    device (it was once replaced by a plain file) and a pipe does not block the command."""
    import os
    import stat

    fifo = proj / "pipe"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "memory", "sync", fifo, "-w", proj)
    assert (code, out) == (2, "")
    assert err == f"yak: {fifo} is not a regular file; Yak keeps only text files in sync\n"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    code, _, err = run(capsys, "memory", "sync", "/dev/null", "--keep", "-w", proj)
    assert (code, err) == (
        2,
        f"yak: /dev/null is outside the workspace {proj}; 'yak memory sync' writes only files "
        "inside it (such as its AGENTS.md); nothing was written\n",
    )
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert run(capsys, "memory", "sync", "--stop", "-w", proj)[0] == 2  # nothing was kept


def test_keep_on_a_database_nobody_may_write_writes_no_file(proj, tmp_path, monkeypatch, capsys):
    """``sync --keep`` stores the setting before it writes the file: on a read-only database
    it fails with exit 1 and the file is not created."""
    from tests.test_cli_readonly_db import cannot_write

    cannot_write(monkeypatch, tmp_path, refused_modes=())
    claude = proj / "CLAUDE.md"
    code, _, err = run(capsys, "memory", "sync", claude, "--keep", "-w", proj)
    assert code == 1 and "read-only" in err
    assert not claude.exists()
    assert (proj / "AGENTS.md").read_text() == OUTSIDE


def test_set_json_names_the_kept_file_it_could_not_write(proj, capsys):
    """``set --json`` carries the failure as ``kept_file_error`` (path and reason) beside the
    stderr line; once the file can be written again it is ``null``."""
    agents = proj / "AGENTS.md"
    assert run(capsys, "memory", "sync", agents, "--keep", "-w", proj)[0] == 0
    good = agents.read_text()
    agents.write_text(good + "<!-- yak:memory -->\n")
    (proj / "new.txt").write_text("- two\n")
    code, out, err = run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt", "--json")
    assert code == 0
    payload = json.loads(out)
    assert payload["version"] == 2 and payload["changed"] is True
    assert payload["kept_file_error"] == {
        "path": str(agents),
        "reason": "the file's <!-- yak:memory --> … <!-- /yak:memory --> markers are not one "
        "block (one of each, opening first); fix them by hand and sync again",
    }
    assert f"{agents} could not be kept in sync" in err

    agents.write_text(good)
    (proj / "new.txt").write_text("- three\n")
    code, out, err = run(capsys, "memory", "set", "-w", proj, "--file", proj / "new.txt", "--json")
    assert code == 0 and err == ""
    assert json.loads(out)["kept_file_error"] is None
    assert agents.read_text() == OUTSIDE + "\n" + block("- three\n")
