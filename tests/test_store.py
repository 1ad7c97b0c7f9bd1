"""Memory storage through the core (``core.memory`` and ``core.workspaces``; the document, attempt
and workspace repositories underneath): versioned writes, the ceiling, append-only history,
restore, clear, import, export, watermarks, refresh attempts, orphans and re-attach, and a
database from a newer Yak.

Every refusal is checked against the stored document byte for byte, next to an accepted write.
A second core on the same database stands for another process (the command line beside the app).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from dataclasses import replace

import pytest

from tests.support import project_folder, say
from yak.bootstrap import open_core
from yak.domain import RefreshOutcome, RefreshStatus, RevisionSource, TokenUsage
from yak.errors import (
    CeilingExceeded,
    ConflictError,
    RevisionNotFound,
    SchemaTooNew,
    StoreError,
    UsageError,
    WorkspaceNotFound,
)
from yak.ids import new_id

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases


@pytest.fixture
def ws(core, loop, tmp_path):
    """The workspace of the folder ``proj``, opened (no memory yet)."""
    return loop.run_until_complete(core.workspaces.open(str(project_folder(tmp_path, "proj"))))


@pytest.fixture
def other(core, loop, tmp_path):
    """A neighbouring workspace, ``neighbour``."""
    folder = project_folder(tmp_path, "neighbour")
    return loop.run_until_complete(core.workspaces.open(str(folder)))


async def snapshot(core, workspace_id):
    """What a user could observe: the document's bytes, its version, and the history ids."""
    document = await core.memory.read(workspace_id)
    history = await core.memory.history(workspace_id)
    return document.content.encode("utf-8"), document.version, [r.id for r in history]


def unfolded(core, workspace_id) -> list[str]:
    """The ids of the messages not yet folded into the memory (past their session's watermark)."""
    return [m.id for m in core.chat.conversations.unfolded_messages(workspace_id)]


def last_message(core, session_id) -> str:
    return core.chat.conversations.messages(session_id)[-1].id


# --- workspaces -----------------------------------------------------------------------------
async def test_opening_a_missing_folder_or_a_file_is_refused(core, tmp_path):
    """Opening names what is wrong with the path; nothing is stored for it; an unknown id is
    ``WorkspaceNotFound``."""
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(WorkspaceNotFound, match="no such folder: .*missing"):
        await core.workspaces.open(str(tmp_path / "missing"))
    with pytest.raises(WorkspaceNotFound, match="file.txt is a file, not a folder"):
        await core.workspaces.open(str(tmp_path / "file.txt"))
    assert await core.workspaces.find(str(tmp_path / "missing")) is None
    assert await core.workspaces.recent() == []
    with pytest.raises(WorkspaceNotFound, match="No workspace has the id"):
        await core.workspaces.get("ws_" + "f" * 32)


async def test_a_new_workspace_reads_as_version_0_and_empty(core, ws):
    """An opened workspace without memory: version 0, empty, no history, not in the memory list."""
    document = await core.memory.read(ws.id)
    assert (document.content, document.version, document.updated_at) == ("", 0, None)
    assert await core.memory.history(ws.id) == []
    assert await core.memory.list_documents() == []  # opened but no memory yet


async def test_recent_workspaces_and_memory_enabled(core, ws, other):
    """Recent is most recently opened first (re-opening moves it up); the memory switch is per
    workspace."""
    assert [w.id for w in await core.workspaces.recent()] == [other.id, ws.id]
    await core.workspaces.open(ws.path)
    assert [w.id for w in await core.workspaces.recent(limit=1)] == [ws.id]
    turned_off = await core.workspaces.set_memory_enabled(ws.id, enabled=False)
    assert turned_off.memory_enabled is False
    assert (await core.workspaces.get(ws.id)).memory_enabled is False
    assert (await core.workspaces.get(other.id)).memory_enabled is True


# --- writes, conflicts, the ceiling -----------------------------------------------------------
async def test_write_stores_lf_counts_and_a_hand_revision(core, ws, other):
    """A hand save stores LF line endings and appends a ``hand`` revision with its counts; the
    neighbour sees nothing."""
    document = await core.memory.save(ws.id, "one\r\ntwo\rthree\r\n", expected_version=0)
    assert (document.content, document.version, document.lines) == ("one\ntwo\nthree\n", 1, 3)
    [revision] = await core.memory.history(ws.id)
    assert (revision.source, revision.version, revision.lines, revision.chars) == (
        RevisionSource.HAND,
        1,
        3,
        14,
    )
    assert (await core.memory.read(ws.id)).content == "one\ntwo\nthree\n"
    assert await snapshot(core, other.id) == (b"", 0, [])  # the neighbour sees nothing


async def test_writing_the_same_text_adds_no_revision(core, ws):
    """Saving the stored text again (CRLF or not) keeps the version and adds no revision."""
    await core.memory.save(ws.id, "same\n", expected_version=0)
    before = await snapshot(core, ws.id)
    assert (await core.memory.save(ws.id, "same\r\n", expected_version=1)).version == 1
    assert await snapshot(core, ws.id) == before


async def test_a_stale_version_is_a_conflict_and_writes_nothing(core, ws):
    """A save based on an old version is a conflict (exit code 5) naming both versions; the
    fresh version then saves."""
    await core.memory.save(ws.id, "theirs\n", expected_version=0)
    before = await snapshot(core, ws.id)
    with pytest.raises(ConflictError) as caught:
        await core.memory.save(ws.id, "mine\n", expected_version=0)
    assert (caught.value.expected_version, caught.value.current_version) == (0, 1)
    assert "changed (version 1) since version 0" in str(caught.value)
    assert caught.value.exit_code == 5
    assert await snapshot(core, ws.id) == before
    assert (await core.memory.save(ws.id, "mine\n", expected_version=1)).version == 2


async def test_a_version_beyond_the_memory_says_which_version_exists(core, ws):
    """A base version the memory never reached is a conflict that names the current version;
    a negative one is bad input; neither writes; the current version writes."""
    await core.memory.save(ws.id, "one\n", expected_version=0)
    before = await snapshot(core, ws.id)
    with pytest.raises(ConflictError) as caught:
        await core.memory.save(ws.id, "mine\n", expected_version=999)
    assert str(caught.value).startswith("Version 999 does not exist; the memory is at version 1.")
    assert (caught.value.expected_version, caught.value.current_version) == (999, 1)
    with pytest.raises(UsageError, match="must be 0 or more"):
        await core.memory.save(ws.id, "mine\n", expected_version=-1)
    assert await snapshot(core, ws.id) == before
    assert (await core.memory.save(ws.id, "mine\n", expected_version=1)).version == 2


async def test_two_processes_cannot_both_win_the_same_version(core, make_core, ws):
    """Two cores on one database (like the app and the CLI) read version 1; the first write
    wins, the second is a conflict and does not overwrite it."""
    await core.memory.save(ws.id, "v1\n", expected_version=0)
    cli = make_core()
    base_app = (await core.memory.read(ws.id)).version
    base_cli = (await cli.memory.read(ws.id)).version
    await core.memory.save(ws.id, "from the app\n", expected_version=base_app)
    with pytest.raises(ConflictError):
        await cli.memory.save(ws.id, "from the cli\n", expected_version=base_cli)
    assert (await cli.memory.read(ws.id)).content == "from the app\n"
    assert [r.version for r in await cli.memory.history(ws.id)] == [2, 1]


async def test_two_processes_saving_at_once_on_one_version_lose_no_write(core, make_core, ws):
    """The race itself: two cores save on version 1 at the same time, each on its own worker
    thread and connection; exactly one wins, the other gets a conflict, and the stored document
    and history are the winner's alone."""
    await core.memory.save(ws.id, "v1\n", expected_version=0)
    cli = make_core()
    for round_ in range(5):
        version = (await core.memory.read(ws.id)).version
        results = await asyncio.gather(
            core.memory.save(ws.id, f"app {round_}\n", expected_version=version),
            cli.memory.save(ws.id, f"cli {round_}\n", expected_version=version),
            return_exceptions=True,
        )
        won = [r for r in results if not isinstance(r, BaseException)]
        lost = [r for r in results if isinstance(r, BaseException)]
        assert len(won) == 1 and len(lost) == 1 and isinstance(lost[0], ConflictError)
        stored = await cli.memory.read(ws.id)
        assert (stored.content, stored.version) == (won[0].content, version + 1)
        assert (await core.memory.history(ws.id))[0].content == won[0].content
    assert [r.version for r in await core.memory.history(ws.id)] == [6, 5, 4, 3, 2, 1]


@pytest.mark.parametrize(
    "text",
    ["x\n" * 201, "x\n" * 200 + "tail", "y" * 25_001],
    ids=["201 lines", "200 lines and a tail", "25,001 characters"],
)
async def test_over_the_ceiling_is_refused_and_nothing_is_written_or_cut(core, ws, text):
    """Over 200 lines or 25,000 characters: refused with "Nothing was saved", nothing cut."""
    await core.memory.save(ws.id, "before\n", expected_version=0)
    before = await snapshot(core, ws.id)
    with pytest.raises(CeilingExceeded, match="Nothing was saved"):
        await core.memory.save(ws.id, text, expected_version=1)
    assert await snapshot(core, ws.id) == before


async def test_exactly_the_ceiling_is_accepted_whole(core, ws):
    """200 lines, or 25,000 characters, is stored whole."""
    for text in ("x\n" * 200, "z" * 25_000):
        version = (await core.memory.read(ws.id)).version
        document = await core.memory.save(ws.id, text, expected_version=version)
        assert (await core.memory.read(ws.id)).content == text
        assert document.version == version + 1


async def test_nul_characters_are_refused(core, ws):
    """Text with a NUL character is not plain text: refused, nothing written."""
    with pytest.raises(UsageError, match="NUL"):
        await core.memory.save(ws.id, "a\0b", expected_version=0)
    assert await snapshot(core, ws.id) == (b"", 0, [])


# --- history, restore, clear ----------------------------------------------------------------
async def test_revisions_are_append_only_with_their_sources(core, ws):
    """Hand, import, refresh, clear and restore each append a revision with its source (the
    refresh's model, sessions and flags kept; a restore names what it restored); earlier
    revisions never change."""
    memory = core.memory
    await memory.save(ws.id, "hand\n", expected_version=0)
    await memory.import_bytes(ws.id, "imported\r\n".encode("utf-16"))
    await memory.apply_rewrite(
        ws.id,
        "rewritten\n",
        base_version=2,
        model="claude-haiku-4-5",
        session_ids=("S1",),
        watermarks={},
        flags=("redacted",),
    )
    early = await memory.history(ws.id)
    await memory.clear(ws.id)
    await memory.restore(ws.id, early[-1].id)
    history = await memory.history(ws.id)
    assert [(r.version, r.source, r.content) for r in history] == [
        (5, RevisionSource.RESTORE, "hand\n"),
        (4, RevisionSource.CLEAR, ""),
        (3, RevisionSource.REFRESH, "rewritten\n"),
        (2, RevisionSource.IMPORT, "imported\n"),
        (1, RevisionSource.HAND, "hand\n"),
    ]
    assert history[2:] == early  # earlier revisions are untouched
    assert (history[2].model, history[2].session_ids, history[2].flags) == (
        "claude-haiku-4-5",
        ("S1",),
        ("redacted",),
    )
    assert history[0].restored_from == early[-1].id


async def test_restore_makes_a_new_revision_and_accepts_a_prefix(core, ws):
    """A revision is found by its id in any case or by a unique prefix; restoring it writes a
    new version."""
    await core.memory.save(ws.id, "first\n", expected_version=0)
    await core.memory.save(ws.id, "second\n", expected_version=1)
    first = (await core.memory.history(ws.id))[-1]
    assert (await core.memory.get_revision(ws.id, first.id.lower())).id == first.id
    restored = await core.memory.restore(ws.id, first.id[:-1], expected_version=2)
    assert (restored.content, restored.version) == ("first\n", 3)
    assert (await core.memory.read(ws.id)).content == "first\n"
    assert len(await core.memory.history(ws.id)) == 3


async def test_restore_with_a_stale_version_or_an_unknown_id_writes_nothing(core, ws, other):
    """A stale base version, an unknown or too short id, a version never reached, or another
    workspace's revision: refused, nothing written anywhere."""
    await core.memory.save(ws.id, "first\n", expected_version=0)
    await core.memory.save(ws.id, "second\n", expected_version=1)
    first = (await core.memory.history(ws.id))[-1]
    before = await snapshot(core, ws.id)
    with pytest.raises(ConflictError):
        await core.memory.restore(ws.id, first.id, expected_version=1)
    for bad in ("ZZZZZZZZ", "01J", "", "not an id", "7", "0", "-1"):
        with pytest.raises(RevisionNotFound):
            await core.memory.restore(ws.id, bad)
    with pytest.raises(RevisionNotFound):  # a revision of another workspace is not found here
        await core.memory.restore(other.id, first.id)
    assert await snapshot(core, ws.id) == before
    assert await snapshot(core, other.id) == (b"", 0, [])


async def test_a_version_number_names_the_revision_that_produced_it(core, ws, other):
    """``"2"`` is the revision of version 2 (``restore 2``); ``"02"`` too; another workspace's
    version 2 is not this one's."""
    for i, text in enumerate(("a\n", "b\n", "c\n")):
        await core.memory.save(ws.id, text, expected_version=i)
    await core.memory.save(other.id, "x\n", expected_version=0)
    await core.memory.save(other.id, "y\n", expected_version=1)
    assert (await core.memory.get_revision(ws.id, "2")).content == "b\n"
    assert (await core.memory.get_revision(ws.id, " 02 ")).version == 2
    restored = await core.memory.restore(ws.id, "1", expected_version=3)
    assert (restored.version, restored.content) == (4, "a\n")
    first = await core.memory.get_revision(ws.id, "1")
    assert (await core.memory.history(ws.id))[0].restored_from == first.id
    assert (await core.memory.read(other.id)).content == "y\n"


async def test_a_reattach_onto_a_memory_emptied_since_is_refused(core, ws, tmp_path):
    """A folder whose memory was written and then emptied keeps its history; re-attaching
    another memory onto it would give two revisions one version number (and the version would
    go back), so it is refused and neither history changes."""
    moved = await core.workspaces.open(str(project_folder(tmp_path, "moved")))
    await core.memory.save(moved.id, "cleared later\n", expected_version=0)
    await core.memory.clear(moved.id, expected_version=1)
    await core.memory.save(ws.id, "the memory\n", expected_version=0)
    shutil.rmtree(ws.path)
    before = await snapshot(core, ws.id), await snapshot(core, moved.id)
    with pytest.raises(UsageError, match="has a memory history of its own .version 2."):
        await core.workspaces.reattach(ws.id, str(tmp_path / "moved"))
    assert (await snapshot(core, ws.id), await snapshot(core, moved.id)) == before


@pytest.mark.sqlite_only
async def test_a_version_two_revisions_share_is_refused(core, ws, data_dir):
    """A database an earlier Yak wrote can hold two revisions of one version (it merged two
    histories on a re-attach): restoring by that number asks for the id, and nothing is
    written."""
    await core.memory.save(ws.id, "one\n", expected_version=0)
    await core.memory.save(ws.id, "two\n", expected_version=1)
    with sqlite3.connect(data_dir / "yak.db") as conn:
        conn.execute(
            "INSERT INTO memory_revisions (id, workspace_id, version, source, content, lines, "
            "chars, flags, model, session_ids, restored_from, created_at, added, removed) "
            "SELECT ?, workspace_id, version, source, 'other one' || char(10), lines, chars, "
            "flags, model, session_ids, restored_from, created_at, added, removed "
            "FROM memory_revisions WHERE workspace_id = ? AND version = 1",
            (new_id(), ws.id),
        )
    before = await snapshot(core, ws.id)
    with pytest.raises(RevisionNotFound, match="Several revisions produced version 1"):
        await core.memory.restore(ws.id, "1")
    assert await snapshot(core, ws.id) == before


async def test_an_ambiguous_prefix_is_refused(core, ws, monkeypatch):
    """A prefix two revision ids share names neither; one more character names one."""
    ids = iter(["01AAAAAAAAAAAAAAAAAAAAAAA1", "01AAAAAAAAAAAAAAAAAAAAAAA2"])
    monkeypatch.setattr("yak.db.documents.new_id", lambda: next(ids))
    await core.memory.save(ws.id, "a\n", expected_version=0)
    await core.memory.save(ws.id, "b\n", expected_version=1)
    with pytest.raises(RevisionNotFound, match="several revisions"):
        await core.memory.get_revision(ws.id, "01AAAAAAAAAAAAAAAAAAAAAAA")
    found = await core.memory.get_revision(ws.id, "01aaaaaaaaaaaaaaaaaaaaaaa2")
    assert found.content == "b\n"


async def test_clear_is_recorded_and_restorable(core, ws):
    """Clearing writes an empty ``clear`` revision; the workspace stays in the memory list; the
    cleared text is restorable; clearing an empty document writes nothing."""
    await core.memory.save(ws.id, "keep me\n", expected_version=0)
    cleared = await core.memory.clear(ws.id)
    assert (cleared.content, cleared.version) == ("", 2)
    assert (await core.memory.history(ws.id))[0].source is RevisionSource.CLEAR
    assert [s.workspace.id for s in await core.memory.list_documents()] == [ws.id]
    await core.memory.restore(ws.id, (await core.memory.history(ws.id))[1].id)
    assert (await core.memory.read(ws.id)).content == "keep me\n"
    assert (await core.memory.clear(ws.id, expected_version=3)).version == 4
    assert (await core.memory.clear(ws.id)).version == 4  # already empty: nothing new


# --- import and export ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "encoding", ["utf-8-sig", "utf-16-le-bom", "utf-16-be-bom", "utf-32", "utf-8"]
)
async def test_import_of_unicode_files_with_crlf(core, ws, encoding):
    """UTF-8/16/32 files, with or without a BOM, with CRLF, import as the same LF text."""
    text = "Yak — café\r\n- 中文\r\n- 🦬\r\n"
    if encoding.endswith("-bom"):
        codec = encoding[:-4]
        data = "\ufeff".encode(codec) + text.encode(codec)
    else:
        data = text.encode(encoding)
    document = await core.memory.import_bytes(ws.id, data)
    assert (await core.memory.read(ws.id)).content == "Yak — café\n- 中文\n- 🦬\n"
    assert document.version == 1
    assert (await core.memory.history(ws.id))[0].source is RevisionSource.IMPORT


async def test_import_of_garbage_or_over_the_ceiling_changes_nothing(core, ws):
    """Binary data (named in the error), an import over the ceiling or on a stale version is
    refused and writes nothing; a good import on the current version is stored."""
    await core.memory.save(ws.id, "precious\n", expected_version=0)
    before = await snapshot(core, ws.id)
    with pytest.raises(UsageError, match="notes.bin is not UTF-8/UTF-16/UTF-32 text"):
        await core.memory.import_bytes(ws.id, bytes(range(256)) * 8, source_name="notes.bin")
    with pytest.raises(CeilingExceeded):
        await core.memory.import_bytes(ws.id, b"line\r\n" * 250)
    with pytest.raises(ConflictError):
        await core.memory.import_bytes(ws.id, b"fine\n", expected_version=0)
    assert await snapshot(core, ws.id) == before
    assert (await core.memory.import_bytes(ws.id, b"fine\n", expected_version=1)).version == 2


async def test_export_text_is_exactly_the_stored_bytes(core, ws):
    """A text export is the stored UTF-8 bytes: no BOM, no CR."""
    await core.memory.import_bytes(ws.id, "\ufeffé\r\nline two\r\n".encode("utf-16"))
    data = await core.memory.export_bytes(ws, "text")
    stored = (await core.memory.read(ws.id)).content.encode("utf-8")
    assert data == stored == "é\nline two\n".encode()
    assert not data.startswith(b"\xef\xbb\xbf") and b"\r" not in data


async def test_export_markdown_and_json(core, ws):
    """Markdown puts the folder's name as a title; JSON carries the path, id, version, lines,
    content and the history newest first; an unknown format is refused."""
    await core.memory.save(ws.id, "- one\n", expected_version=0)
    await core.memory.save(ws.id, "- one\n- two\n", expected_version=1)
    assert await core.memory.export_bytes(ws, "markdown") == b"# Yak memory: proj\n\n- one\n- two\n"
    data = json.loads((await core.memory.export_bytes(ws, "json")).decode("utf-8"))
    assert (data["workspace"], data["workspace_id"], data["version"], data["lines"]) == (
        ws.path,
        ws.id,
        2,
        2,
    )
    assert data["content"] == "- one\n- two\n"
    assert [(r["version"], r["source"], r["content"]) for r in data["history"]] == [
        (2, "hand", "- one\n- two\n"),
        (1, "hand", "- one\n"),
    ]
    with pytest.raises(UsageError, match="Unknown export format"):
        await core.memory.export_bytes(ws, "docx")


@pytest.mark.parametrize("data", [b"", b"\n \n", "\ufeff\r\n".encode("utf-16")])
async def test_importing_an_empty_file_is_refused_and_writes_nothing(core, ws, data):
    """An empty (or blank) file would wipe the memory: refused with a sentence."""
    await core.memory.save(ws.id, "keep\n", expected_version=0)
    before = await snapshot(core, ws.id)
    with pytest.raises(UsageError, match="The input is empty; nothing was saved"):
        await core.memory.import_bytes(ws.id, data, source_name="empty.txt")
    assert await snapshot(core, ws.id) == before
    assert (await core.memory.import_bytes(ws.id, b"x\n")).content == "x\n"  # positive beside it


@pytest.mark.parametrize("fmt, name", [("text", "m.txt"), ("markdown", "m.md"), ("json", "m.json")])
async def test_an_export_round_trips_through_import_byte_for_byte(core, ws, other, fmt, name):
    """Yak's own exports import as the document they hold (the Markdown title and the JSON
    wrapping are unwrapped), byte for byte."""
    content = "Project\n\n# kept\n- \u00fcn\u00efcode\n"
    await core.memory.save(ws.id, content, expected_version=0)
    data = await core.memory.export_bytes(ws, fmt)
    imported = await core.memory.import_bytes(other.id, data, source_name=name)
    assert imported.content == content
    assert (await core.memory.read(other.id)).content.encode() == content.encode()


async def test_a_json_export_of_an_empty_memory_is_refused_as_empty(core, ws, other):
    """The JSON export of an empty memory imports as empty: refused, the target kept."""
    await core.memory.save(other.id, "keep\n", expected_version=0)
    data = await core.memory.export_bytes(ws, "json")
    with pytest.raises(UsageError, match="The input is empty"):
        await core.memory.import_bytes(other.id, data, source_name="m.json")
    assert (await core.memory.read(other.id)).content == "keep\n"


# --- rewrites and watermarks ----------------------------------------------------------------
async def test_apply_rewrite_advances_watermarks_and_a_superseded_one_does_not(core, ws):
    """An applied rewrite folds the sessions' messages up to the watermarks it carries; a
    rewrite on a stale version writes nothing and folds nothing."""
    s1 = say(core, ws.id, "one", "two")
    s2 = say(core, ws.id, "three")
    await core.memory.apply_rewrite(
        ws.id,
        "rewrite one\n",
        base_version=0,
        model="m",
        session_ids=(s1, s2),
        watermarks={s1: last_message(core, s1), s2: last_message(core, s2)},
    )
    assert unfolded(core, ws.id) == []
    say(core, ws.id, "later", session_id=s1)
    later = last_message(core, s1)
    before = await snapshot(core, ws.id)
    with pytest.raises(ConflictError):
        await core.memory.apply_rewrite(
            ws.id,
            "stale\n",
            base_version=0,
            model="m",
            session_ids=(s1,),
            watermarks={s1: later},
        )
    assert await snapshot(core, ws.id) == before
    assert unfolded(core, ws.id) == [later]


async def test_an_identical_rewrite_adds_no_revision_but_folds(core, ws):
    """A rewrite equal to the stored text writes no version but still folds the messages."""
    session = say(core, ws.id, "nothing new", "ok")
    await core.memory.save(ws.id, "same\n", expected_version=0)
    before = await snapshot(core, ws.id)
    await core.memory.apply_rewrite(
        ws.id,
        "same\n",
        base_version=1,
        model="m",
        session_ids=(session,),
        watermarks={session: last_message(core, session)},
    )
    assert await snapshot(core, ws.id) == before
    assert unfolded(core, ws.id) == []


async def test_a_watermark_never_moves_backwards(core, ws):
    """Advancing a session's watermark to an older message leaves it where it is; a newer one
    moves it."""
    session = say(core, ws.id, "older", "newer")
    older, newer = [m.id for m in core.chat.conversations.messages(session)]
    await core.memory.advance_watermarks({session: newer})
    await core.memory.advance_watermarks({session: older})
    assert unfolded(core, ws.id) == []  # "newer" was not unfolded again
    say(core, ws.id, "newest", session_id=session)
    newest = last_message(core, session)
    assert unfolded(core, ws.id) == [newest]
    await core.memory.advance_watermarks({session: newest})
    assert unfolded(core, ws.id) == []


async def test_a_rewrite_over_the_ceiling_is_refused(core, ws):
    """A rewrite over the ceiling is refused as a last net: nothing written, nothing folded."""
    session = say(core, ws.id, "tell me everything")
    with pytest.raises(CeilingExceeded):
        await core.memory.apply_rewrite(
            ws.id,
            "x\n" * 300,
            base_version=0,
            model="m",
            session_ids=(session,),
            watermarks={session: last_message(core, session)},
        )
    assert await snapshot(core, ws.id) == (b"", 0, [])
    assert unfolded(core, ws.id) == [last_message(core, session)]


# --- refresh attempts -----------------------------------------------------------------------
async def test_refresh_attempts_are_recorded_newest_first(core, ws, other):
    """Every attempt is kept with its outcome, reply and usage; an applied one records the
    version it produced; the newest comes first and per workspace."""
    refused = RefreshOutcome(
        status=RefreshStatus.REFUSED_FLOOR,
        reason="too short",
        workspace_id=ws.id,
        version=0,
        lines=0,
        reply="tiny",
        model="m",
        usage=TokenUsage(10, 2),
        duration_s=1.5,
        session_ids=("S",),
        flags=("floor",),
    )
    first = await core.memory.record_attempt(refused, base_version=0)
    applied = RefreshOutcome(
        status=RefreshStatus.APPLIED,
        reason="",
        workspace_id=ws.id,
        version=1,
        lines=3,
        attempt_id=new_id(),
    )
    second = await core.memory.record_attempt(applied, base_version=0, rebuild=True)
    assert second.id == applied.attempt_id
    assert [a.id for a in await core.memory.attempts(ws.id)] == [second.id, first.id]
    assert await core.memory.last_attempt(ws.id) == second
    assert (first.status, first.reply, first.usage.input_tokens, first.result_version) == (
        RefreshStatus.REFUSED_FLOOR,
        "tiny",
        10,
        None,
    )
    assert second.result_version == 1
    assert await core.memory.last_attempt(other.id) is None


async def test_an_attempt_is_found_by_id_or_prefix_in_its_own_workspace_only(core, ws, other):
    """``get_attempt`` takes a full id (any case) or a unique prefix; another workspace's
    attempt, an unknown id and a short prefix are refused; ``attempts(limit=None)`` is all."""
    outcome = RefreshOutcome(
        status=RefreshStatus.REFUSED_CEILING,
        reason="240 lines",
        workspace_id=ws.id,
        version=0,
        lines=0,
        reply="- kept\n",
    )
    ids = [(await core.memory.record_attempt(outcome, base_version=0)).id for _ in range(55)]
    assert len(await core.memory.attempts(ws.id)) == 50
    assert [a.id for a in await core.memory.attempts(ws.id, limit=None)] == ids[::-1]
    found = await core.memory.get_attempt(ws.id, ids[3].lower())
    assert (found.id, found.reply) == (ids[3], "- kept\n")
    with pytest.raises(UsageError, match="no refresh attempt"):
        await core.memory.get_attempt(other.id, ids[3])
    with pytest.raises(UsageError, match="no refresh attempt"):
        await core.memory.get_attempt(ws.id, "ZZZZZZZZ")
    with pytest.raises(UsageError, match="at least 6 characters"):
        await core.memory.get_attempt(ws.id, ids[3][:5])
    for suffix in "12":
        await core.memory.record_attempt(
            replace(outcome, attempt_id="01AAAAAAAAAAAAAAAAAAAAAAA" + suffix), base_version=0
        )
    with pytest.raises(UsageError, match="several refresh attempts"):
        await core.memory.get_attempt(ws.id, "01AAAAAAAAAAAAAAAAAAAAAAA")
    found = await core.memory.get_attempt(ws.id, "01aaaaaaaaaaaaaaaaaaaaaaa2")
    assert found.id.endswith("2")


# --- orphans and re-attach ------------------------------------------------------------------
async def test_orphaned_memory_is_listed_and_reattached_with_its_history(core, ws, tmp_path):
    """A memory whose folder is gone is listed as orphaned and still found by its path;
    re-attached to another folder it keeps its text and history under the new id."""
    await core.memory.save(ws.id, "notes\n", expected_version=0)
    await core.memory.save(ws.id, "notes v2\n", expected_version=1)
    shutil.rmtree(ws.path)
    [summary] = await core.memory.list_documents()
    assert summary.orphaned and summary.lines == 1
    assert (await core.workspaces.find(ws.path)).id == ws.id  # found by key, folder gone

    moved_to = project_folder(tmp_path, "moved")
    moved = await core.workspaces.reattach(ws.id, str(moved_to))
    assert moved.path == str(moved_to) and moved.id != ws.id
    assert (await core.memory.read(moved.id)).content == "notes v2\n"
    assert [r.version for r in await core.memory.history(moved.id)] == [2, 1]
    summaries = await core.memory.list_documents()
    assert [(s.workspace.id, s.orphaned) for s in summaries] == [(moved.id, False)]
    with pytest.raises(WorkspaceNotFound):
        await core.workspaces.get(ws.id)


async def test_reattach_refuses_a_folder_with_its_own_memory_or_a_missing_folder(
    core, ws, other, tmp_path
):
    """Re-attaching onto a folder that has its own memory, or onto no folder, is refused with a
    sentence; neither memory changes."""
    await core.memory.save(ws.id, "mine\n", expected_version=0)
    await core.memory.save(other.id, "theirs\n", expected_version=0)
    before = await snapshot(core, ws.id), await snapshot(core, other.id)
    with pytest.raises(UsageError, match="has a memory history of its own"):
        await core.workspaces.reattach(ws.id, other.path)
    with pytest.raises(WorkspaceNotFound, match="no such folder: .*nowhere"):
        await core.workspaces.reattach(ws.id, str(tmp_path / "nowhere"))
    assert (await snapshot(core, ws.id), await snapshot(core, other.id)) == before


# --- a database from a newer Yak ------------------------------------------------------------
@pytest.mark.sqlite_only
async def test_a_database_from_a_newer_yak_is_refused_and_left_untouched(data_dir, tmp_path):
    """A database whose schema is newer than this Yak: ``open_core`` refuses it (exit code 1)
    and the file is not changed by a byte."""
    core = open_core(data_dir)
    workspace = await core.workspaces.open(str(project_folder(tmp_path, "proj")))
    await core.memory.save(workspace.id, "kept\n", expected_version=0)
    await core.aclose()
    with sqlite3.connect(data_dir / "yak.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    conn.close()
    before = (data_dir / "yak.db").read_bytes()

    with pytest.raises(SchemaTooNew, match="newer version of Yak") as caught:
        open_core(data_dir)
    assert caught.value.exit_code == 1
    assert (data_dir / "yak.db").read_bytes() == before
    with sqlite3.connect(data_dir / "yak.db") as conn:
        assert conn.execute("SELECT content FROM memory_documents").fetchall() == [("kept\n",)]
    conn.close()


async def test_the_memory_list_row_agrees_with_the_document_and_workspace_read_alone(core, ws):
    """The Settings list reads its rows in one lean query; each row says what reading the
    document and the workspace one by one says: version, lines, characters, flags, and the
    times (timezone-aware UTC, to the microsecond)."""
    await core.memory.save(ws.id, "one\ntwo\n", expected_version=0)
    await core.memory.apply_rewrite(
        ws.id,
        "one\ntwo\nthree",
        base_version=1,
        model="m",
        session_ids=(),
        watermarks={},
        flags=("redacted:url_password", "dropped_over_budget"),
    )
    [summary] = await core.memory.list_documents()
    document = await core.memory.read(ws.id)
    workspace = await core.workspaces.get(ws.id)
    assert (summary.version, summary.lines, summary.chars) == (2, 3, len("one\ntwo\nthree"))
    assert (summary.version, summary.lines, summary.chars) == (
        document.version,
        document.lines,
        document.chars,
    )
    assert summary.flags == document.flags == ("redacted:url_password", "dropped_over_budget")
    assert summary.updated_at == document.updated_at
    assert summary.updated_at is not None and summary.updated_at.utcoffset() is not None
    assert summary.workspace == workspace


def test_repository_calls_together_are_one_transaction_and_an_error_rolls_them_back(tmp_path):
    """``Database.together``: the repository calls inside share one transaction (a refresh's
    reads before the model call); a database error inside is a ``StoreError`` and undoes what
    was done inside; the database stays usable."""
    from sqlalchemy import text

    from yak.db.engine import open_database
    from yak.db.workspaces import SqlWorkspaceRepository

    (tmp_path / "data").mkdir()
    db = open_database(tmp_path / "data")
    try:
        workspaces = SqlWorkspaceRepository(db)
        folder = project_folder(tmp_path, "proj")

        def open_then_fail() -> None:
            workspaces.open(str(folder))
            with db.session() as s:
                s.execute(text("SELECT * FROM no_such_table"))

        with pytest.raises(StoreError):
            db.together(open_then_fail)
        assert workspaces.find(str(folder)) is None  # rolled back with the failure

        opened = db.together(lambda: db.together(lambda: workspaces.open(str(folder))))
        assert workspaces.get(opened.id) == opened
    finally:
        db.close()
