"""MemoryStore: versioned writes, the ceiling, append-only history, restore, clear, import,
export, watermarks, refresh attempts, orphans and re-attach, a database from a newer Yak.

Every refusal is checked against the stored document byte for byte, next to an accepted write.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace

import pytest

from yak.db import open_database
from yak.db.models import ChatSessionRow
from yak.domain import RefreshOutcome, RefreshStatus, RevisionSource, TokenUsage
from yak.errors import (
    CeilingExceeded,
    ConflictError,
    RevisionNotFound,
    SchemaTooNew,
    UsageError,
    WorkspaceNotFound,
)
from yak.ids import new_id
from yak.memory.store import MemoryStore


@pytest.fixture
def store(db):
    return MemoryStore(db)


@pytest.fixture
def ws(store, tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    return store.open_workspace(str(folder))


@pytest.fixture
def other(store, tmp_path):
    folder = tmp_path / "neighbour"
    folder.mkdir()
    return store.open_workspace(str(folder))


def snapshot(store, workspace_id):
    """What a user could observe: the document's bytes, its version, and the history ids."""
    document = store.read(workspace_id)
    return (document.content.encode("utf-8"), document.version,
            [r.id for r in store.history(workspace_id)])


# --- workspaces -----------------------------------------------------------------------------
def test_opening_a_missing_folder_or_a_file_is_refused(store, tmp_path):
    (tmp_path / "file.txt").write_text("x")
    for bad in (tmp_path / "missing", tmp_path / "file.txt"):
        with pytest.raises(WorkspaceNotFound, match="No such folder"):
            store.open_workspace(str(bad))
    assert store.find_workspace(str(tmp_path / "missing")) is None
    with pytest.raises(WorkspaceNotFound):
        store.get_workspace("ws_" + "f" * 32)


def test_a_new_workspace_reads_as_version_0_and_empty(store, ws):
    document = store.read(ws.id)
    assert (document.content, document.version, document.updated_at) == ("", 0, None)
    assert store.history(ws.id) == []
    assert store.list_documents() == []  # opened but no memory yet


def test_recent_workspaces_and_memory_enabled(store, ws, other):
    assert [w.id for w in store.recent_workspaces()] == [other.id, ws.id]
    store.open_workspace(ws.path)
    assert [w.id for w in store.recent_workspaces(limit=1)] == [ws.id]
    assert store.set_memory_enabled(ws.id, False).memory_enabled is False
    assert store.get_workspace(ws.id).memory_enabled is False
    assert store.get_workspace(other.id).memory_enabled is True


# --- writes, conflicts, the ceiling -----------------------------------------------------------
def test_write_stores_lf_counts_and_a_hand_revision(store, ws, other):
    document = store.write(ws.id, "one\r\ntwo\rthree\r\n", expected_version=0)
    assert (document.content, document.version, document.lines) == ("one\ntwo\nthree\n", 1, 3)
    [revision] = store.history(ws.id)
    assert (revision.source, revision.version, revision.lines, revision.chars) == (
        RevisionSource.HAND, 1, 3, 14)
    assert store.read(ws.id).content == "one\ntwo\nthree\n"
    assert snapshot(store, other.id) == (b"", 0, [])  # the neighbour sees nothing


def test_writing_the_same_text_adds_no_revision(store, ws):
    store.write(ws.id, "same\n", expected_version=0)
    before = snapshot(store, ws.id)
    assert store.write(ws.id, "same\r\n", expected_version=1).version == 1
    assert snapshot(store, ws.id) == before


def test_a_stale_version_is_a_conflict_and_writes_nothing(store, ws):
    store.write(ws.id, "theirs\n", expected_version=0)
    before = snapshot(store, ws.id)
    with pytest.raises(ConflictError) as caught:
        store.write(ws.id, "mine\n", expected_version=0)
    assert (caught.value.expected_version, caught.value.current_version) == (0, 1)
    assert "changed (version 1) since version 0" in str(caught.value)
    assert caught.value.exit_code == 5
    assert snapshot(store, ws.id) == before
    assert store.write(ws.id, "mine\n", expected_version=1).version == 2  # the fresh one works


def test_a_version_beyond_the_memory_says_which_version_exists(store, ws):
    """A base version the memory never reached is a conflict that names the current version;
    a negative one is bad input; neither writes; the current version writes."""
    store.write(ws.id, "one\n", expected_version=0)
    before = snapshot(store, ws.id)
    with pytest.raises(ConflictError) as caught:
        store.write(ws.id, "mine\n", expected_version=999)
    assert str(caught.value).startswith(
        "Version 999 does not exist; the memory is at version 1.")
    assert (caught.value.expected_version, caught.value.current_version) == (999, 1)
    with pytest.raises(UsageError, match="must be 0 or more"):
        store.write(ws.id, "mine\n", expected_version=-1)
    assert snapshot(store, ws.id) == before
    assert store.write(ws.id, "mine\n", expected_version=1).version == 2


def test_two_processes_cannot_both_win_the_same_version(data_dir, store, ws):
    """Two database handles (like the app and the CLI) read version 1; the first write wins,
    the second is a conflict and does not overwrite it."""
    store.write(ws.id, "v1\n", expected_version=0)
    second_db = open_database(data_dir)
    try:
        second = MemoryStore(second_db)
        base_a, base_b = store.read(ws.id).version, second.read(ws.id).version
        store.write(ws.id, "from the app\n", expected_version=base_a)
        with pytest.raises(ConflictError):
            second.write(ws.id, "from the cli\n", expected_version=base_b)
        assert second.read(ws.id).content == "from the app\n"
        assert [r.version for r in second.history(ws.id)] == [2, 1]
    finally:
        second_db.close()


@pytest.mark.parametrize("text", ["x\n" * 201, "x\n" * 200 + "tail", "y" * 25_001],
                         ids=["201 lines", "200 lines and a tail", "25,001 characters"])
def test_over_the_ceiling_is_refused_and_nothing_is_written_or_cut(store, ws, text):
    store.write(ws.id, "before\n", expected_version=0)
    before = snapshot(store, ws.id)
    with pytest.raises(CeilingExceeded, match="Nothing was saved"):
        store.write(ws.id, text, expected_version=1)
    assert snapshot(store, ws.id) == before


def test_exactly_the_ceiling_is_accepted_whole(store, ws):
    for text in ("x\n" * 200, "z" * 25_000):
        version = store.read(ws.id).version
        document = store.write(ws.id, text, expected_version=version)
        assert store.read(ws.id).content == text
        assert document.version == version + 1


def test_nul_characters_are_refused(store, ws):
    with pytest.raises(UsageError, match="NUL"):
        store.write(ws.id, "a\0b", expected_version=0)
    assert snapshot(store, ws.id) == (b"", 0, [])


# --- history, restore, clear ----------------------------------------------------------------
def test_revisions_are_append_only_with_their_sources(store, ws):
    store.write(ws.id, "hand\n", expected_version=0)
    store.import_bytes(ws.id, "imported\r\n".encode("utf-16"))
    store.apply_rewrite(ws.id, "rewritten\n", base_version=2, model="claude-haiku-4-5",
                        session_ids=("S1",), watermarks={}, flags=("redacted",))
    early = store.history(ws.id)
    store.clear(ws.id)
    store.restore(ws.id, early[-1].id)
    history = store.history(ws.id)
    assert [(r.version, r.source, r.content) for r in history] == [
        (5, RevisionSource.RESTORE, "hand\n"),
        (4, RevisionSource.CLEAR, ""),
        (3, RevisionSource.REFRESH, "rewritten\n"),
        (2, RevisionSource.IMPORT, "imported\n"),
        (1, RevisionSource.HAND, "hand\n"),
    ]
    assert history[2:] == early  # earlier revisions are untouched
    assert (history[2].model, history[2].session_ids, history[2].flags) == (
        "claude-haiku-4-5", ("S1",), ("redacted",))
    assert history[0].restored_from == early[-1].id


def test_restore_makes_a_new_revision_and_accepts_a_prefix(store, ws):
    store.write(ws.id, "first\n", expected_version=0)
    store.write(ws.id, "second\n", expected_version=1)
    first = store.history(ws.id)[-1]
    assert store.get_revision(ws.id, first.id.lower()).id == first.id
    restored = store.restore(ws.id, first.id[:-1], expected_version=2)
    assert (restored.content, restored.version) == ("first\n", 3)
    assert store.read(ws.id).content == "first\n"
    assert len(store.history(ws.id)) == 3


def test_restore_with_a_stale_version_or_an_unknown_id_writes_nothing(store, ws, other):
    store.write(ws.id, "first\n", expected_version=0)
    store.write(ws.id, "second\n", expected_version=1)
    first = store.history(ws.id)[-1]
    before = snapshot(store, ws.id)
    with pytest.raises(ConflictError):
        store.restore(ws.id, first.id, expected_version=1)
    for bad in ("ZZZZZZZZ", "01J", "", "not an id", "7", "0", "-1"):
        with pytest.raises(RevisionNotFound):
            store.restore(ws.id, bad)
    with pytest.raises(RevisionNotFound):  # a revision of another workspace is not found here
        store.restore(other.id, first.id)
    assert snapshot(store, ws.id) == before
    assert snapshot(store, other.id) == (b"", 0, [])


def test_a_version_number_names_the_revision_that_produced_it(store, ws, other):
    """``"2"`` is the revision of version 2 (``restore 2``); ``"02"`` too; another workspace's
    version 2 is not this one's."""
    for i, text in enumerate(("a\n", "b\n", "c\n")):
        store.write(ws.id, text, expected_version=i)
    store.write(other.id, "x\n", expected_version=0)
    store.write(other.id, "y\n", expected_version=1)
    assert store.get_revision(ws.id, "2").content == "b\n"
    assert store.get_revision(ws.id, " 02 ").version == 2
    restored = store.restore(ws.id, "1", expected_version=3)
    assert (restored.version, restored.content) == (4, "a\n")
    assert store.history(ws.id)[0].restored_from == store.get_revision(ws.id, "1").id
    assert store.read(other.id).content == "y\n"


def test_a_version_two_merged_histories_share_is_refused(store, ws, tmp_path):
    """After a re-attach merges two histories a version number can name two revisions: the
    id is asked for and nothing is written."""
    (tmp_path / "moved").mkdir()
    moved = store.open_workspace(str(tmp_path / "moved"))
    store.write(moved.id, "cleared later\n", expected_version=0)
    store.clear(moved.id, expected_version=1)
    store.write(ws.id, "the memory\n", expected_version=0)
    shutil.rmtree(ws.path)
    merged = store.reattach(ws.id, str(tmp_path / "moved"))
    before = snapshot(store, merged.id)
    with pytest.raises(RevisionNotFound, match="Several revisions produced version 1"):
        store.restore(merged.id, "1")
    assert snapshot(store, merged.id) == before


def test_an_ambiguous_prefix_is_refused(store, ws, monkeypatch):
    """A prefix two revision ids share names neither; one more character names one."""
    ids = iter(["01AAAAAAAAAAAAAAAAAAAAAAA1", "01AAAAAAAAAAAAAAAAAAAAAAA2"])
    monkeypatch.setattr("yak.memory.store.new_id", lambda: next(ids))
    store.write(ws.id, "a\n", expected_version=0)
    store.write(ws.id, "b\n", expected_version=1)
    with pytest.raises(RevisionNotFound, match="several revisions"):
        store.get_revision(ws.id, "01AAAAAAAAAAAAAAAAAAAAAAA")
    assert store.get_revision(ws.id, "01aaaaaaaaaaaaaaaaaaaaaaa2").content == "b\n"


def test_clear_is_recorded_and_restorable(store, ws):
    store.write(ws.id, "keep me\n", expected_version=0)
    cleared = store.clear(ws.id)
    assert (cleared.content, cleared.version) == ("", 2)
    assert store.history(ws.id)[0].source is RevisionSource.CLEAR
    assert [s.workspace.id for s in store.list_documents()] == [ws.id]  # still listed
    store.restore(ws.id, store.history(ws.id)[1].id)
    assert store.read(ws.id).content == "keep me\n"
    assert store.clear(ws.id, expected_version=3).version == 4
    assert store.clear(ws.id).version == 4  # already empty: nothing new


# --- import and export ----------------------------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16-le-bom", "utf-16-be-bom", "utf-32",
                                      "utf-8"])
def test_import_of_unicode_files_with_crlf(store, ws, encoding):
    text = "Yak — café\r\n- 中文\r\n- 🦬\r\n"
    if encoding.endswith("-bom"):
        codec = encoding[:-4]
        data = "\ufeff".encode(codec) + text.encode(codec)
    else:
        data = text.encode(encoding)
    document = store.import_bytes(ws.id, data)
    assert store.read(ws.id).content == "Yak — café\n- 中文\n- 🦬\n"
    assert document.version == 1
    assert store.history(ws.id)[0].source is RevisionSource.IMPORT


def test_import_of_garbage_or_over_the_ceiling_changes_nothing(store, ws):
    store.write(ws.id, "precious\n", expected_version=0)
    before = snapshot(store, ws.id)
    with pytest.raises(UsageError, match="notes.bin is not UTF-8/UTF-16/UTF-32 text"):
        store.import_bytes(ws.id, bytes(range(256)) * 8, source_name="notes.bin")
    with pytest.raises(CeilingExceeded):
        store.import_bytes(ws.id, b"line\r\n" * 250)
    with pytest.raises(ConflictError):
        store.import_bytes(ws.id, b"fine\n", expected_version=0)
    assert snapshot(store, ws.id) == before
    assert store.import_bytes(ws.id, b"fine\n", expected_version=1).version == 2


def test_export_text_is_exactly_the_stored_bytes(store, ws):
    store.import_bytes(ws.id, "\ufeffé\r\nline two\r\n".encode("utf-16"))
    data = store.export_bytes(ws.id, "text")
    assert data == store.read(ws.id).content.encode("utf-8") == "é\nline two\n".encode()
    assert not data.startswith(b"\xef\xbb\xbf") and b"\r" not in data


def test_export_markdown_and_json(store, ws):
    store.write(ws.id, "- one\n", expected_version=0)
    store.write(ws.id, "- one\n- two\n", expected_version=1)
    assert store.export_bytes(ws.id, "markdown") == b"# proj\n\n- one\n- two\n"
    data = json.loads(store.export_bytes(ws.id, "json").decode("utf-8"))
    assert (data["workspace"], data["workspace_id"], data["version"], data["lines"]) == (
        ws.path, ws.id, 2, 2)
    assert data["content"] == "- one\n- two\n"
    assert [(r["version"], r["source"], r["content"]) for r in data["history"]] == [
        (2, "hand", "- one\n- two\n"), (1, "hand", "- one\n")]
    with pytest.raises(UsageError, match="Unknown export format"):
        store.export_bytes(ws.id, "docx")


# --- rewrites and watermarks ----------------------------------------------------------------
def _session(db, workspace_id, folded_through=None):
    session_id = new_id()
    with db.session() as s:
        s.add(ChatSessionRow(id=session_id, workspace_id=workspace_id,
                             folded_through=folded_through))
    return session_id


def _watermark(db, session_id):
    with db.session() as s:
        return s.get(ChatSessionRow, session_id).folded_through


def test_apply_rewrite_advances_watermarks_and_a_superseded_one_does_not(db, store, ws):
    s1, s2 = _session(db, ws.id), _session(db, ws.id)
    m1, m2 = new_id(), new_id()
    store.apply_rewrite(ws.id, "rewrite one\n", base_version=0, model="m", session_ids=(s1, s2),
                        watermarks={s1: m1, s2: m2})
    assert (_watermark(db, s1), _watermark(db, s2)) == (m1, m2)
    before = snapshot(store, ws.id)
    with pytest.raises(ConflictError):
        store.apply_rewrite(ws.id, "stale\n", base_version=0, model="m", session_ids=(s1,),
                            watermarks={s1: new_id()})
    assert snapshot(store, ws.id) == before
    assert _watermark(db, s1) == m1


def test_an_identical_rewrite_adds_no_revision_but_folds(db, store, ws):
    session = _session(db, ws.id)
    store.write(ws.id, "same\n", expected_version=0)
    before = snapshot(store, ws.id)
    message = new_id()
    store.apply_rewrite(ws.id, "same\n", base_version=1, model="m", session_ids=(session,),
                        watermarks={session: message})
    assert snapshot(store, ws.id) == before
    assert _watermark(db, session) == message


def test_a_watermark_never_moves_backwards(db, store, ws):
    older, newer = new_id(), new_id()
    session = _session(db, ws.id, folded_through=newer)
    store.advance_watermarks({session: older})
    assert _watermark(db, session) == newer
    newest = new_id()
    store.advance_watermarks({session: newest})
    assert _watermark(db, session) == newest


def test_a_rewrite_over_the_ceiling_is_refused(db, store, ws):
    session = _session(db, ws.id)
    with pytest.raises(CeilingExceeded):
        store.apply_rewrite(ws.id, "x\n" * 300, base_version=0, model="m",
                            session_ids=(session,), watermarks={session: new_id()})
    assert snapshot(store, ws.id) == (b"", 0, [])
    assert _watermark(db, session) is None


# --- refresh attempts -----------------------------------------------------------------------
def test_refresh_attempts_are_recorded_newest_first(store, ws, other):
    refused = RefreshOutcome(status=RefreshStatus.REFUSED_FLOOR, reason="too short",
                             workspace_id=ws.id, version=0, lines=0, reply="tiny",
                             model="m", usage=TokenUsage(10, 2), duration_s=1.5,
                             session_ids=("S",), flags=("floor",))
    first = store.record_attempt(refused, base_version=0)
    applied = RefreshOutcome(status=RefreshStatus.APPLIED, reason="", workspace_id=ws.id,
                             version=1, lines=3, attempt_id=new_id())
    second = store.record_attempt(applied, base_version=0, rebuild=True)
    assert second.id == applied.attempt_id
    assert [a.id for a in store.attempts(ws.id)] == [second.id, first.id]
    assert store.last_attempt(ws.id) == second
    assert (first.status, first.reply, first.usage.input_tokens, first.result_version) == (
        RefreshStatus.REFUSED_FLOOR, "tiny", 10, None)
    assert second.result_version == 1
    assert store.last_attempt(other.id) is None


def test_an_attempt_is_found_by_id_or_prefix_in_its_own_workspace_only(store, ws, other):
    """``get_attempt`` takes a full id (any case) or a unique prefix; another workspace's
    attempt, an unknown id and a short prefix are refused; ``attempts(limit=None)`` is all."""
    outcome = RefreshOutcome(status=RefreshStatus.REFUSED_CEILING, reason="240 lines",
                             workspace_id=ws.id, version=0, lines=0, reply="- kept\n")
    ids = [store.record_attempt(outcome, base_version=0).id for _ in range(55)]
    assert len(store.attempts(ws.id)) == 50
    assert [a.id for a in store.attempts(ws.id, limit=None)] == ids[::-1]
    found = store.get_attempt(ws.id, ids[3].lower())
    assert (found.id, found.reply) == (ids[3], "- kept\n")
    with pytest.raises(UsageError, match="no refresh attempt"):
        store.get_attempt(other.id, ids[3])
    with pytest.raises(UsageError, match="no refresh attempt"):
        store.get_attempt(ws.id, "ZZZZZZZZ")
    with pytest.raises(UsageError, match="at least 6 characters"):
        store.get_attempt(ws.id, ids[3][:5])
    for suffix in "12":
        store.record_attempt(replace(outcome, attempt_id="01AAAAAAAAAAAAAAAAAAAAAAA" + suffix),
                             base_version=0)
    with pytest.raises(UsageError, match="several refresh attempts"):
        store.get_attempt(ws.id, "01AAAAAAAAAAAAAAAAAAAAAAA")
    assert store.get_attempt(ws.id, "01aaaaaaaaaaaaaaaaaaaaaaa2").id.endswith("2")


# --- orphans and re-attach ------------------------------------------------------------------
def test_orphaned_memory_is_listed_and_reattached_with_its_history(store, ws, tmp_path):
    store.write(ws.id, "notes\n", expected_version=0)
    store.write(ws.id, "notes v2\n", expected_version=1)
    shutil.rmtree(ws.path)
    [summary] = store.list_documents()
    assert summary.orphaned and summary.lines == 1
    assert store.find_workspace(ws.path).id == ws.id  # found by key though the folder is gone

    moved_to = tmp_path / "moved"
    moved_to.mkdir()
    moved = store.reattach(ws.id, str(moved_to))
    assert moved.path == str(moved_to) and moved.id != ws.id
    assert store.read(moved.id).content == "notes v2\n"
    assert [r.version for r in store.history(moved.id)] == [2, 1]
    assert [(s.workspace.id, s.orphaned) for s in store.list_documents()] == [(moved.id, False)]
    with pytest.raises(WorkspaceNotFound):
        store.get_workspace(ws.id)


def test_reattach_refuses_a_folder_with_its_own_memory_or_a_missing_folder(store, ws, other,
                                                                          tmp_path):
    store.write(ws.id, "mine\n", expected_version=0)
    store.write(other.id, "theirs\n", expected_version=0)
    before = snapshot(store, ws.id), snapshot(store, other.id)
    with pytest.raises(UsageError, match="already has its own memory"):
        store.reattach(ws.id, other.path)
    with pytest.raises(WorkspaceNotFound):
        store.reattach(ws.id, str(tmp_path / "nowhere"))
    assert (snapshot(store, ws.id), snapshot(store, other.id)) == before


# --- a database from a newer Yak ------------------------------------------------------------
def test_a_database_from_a_newer_yak_is_refused_and_left_untouched(data_dir):
    db = open_database(data_dir)
    store = MemoryStore(db)
    folder = data_dir / "proj"
    folder.mkdir()
    workspace = store.open_workspace(str(folder))
    store.write(workspace.id, "kept\n", expected_version=0)
    db.close()
    with sqlite3.connect(data_dir / "yak.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    conn.close()
    before = (data_dir / "yak.db").read_bytes()

    with pytest.raises(SchemaTooNew, match="newer version of Yak") as caught:
        open_database(data_dir)
    assert caught.value.exit_code == 1
    assert (data_dir / "yak.db").read_bytes() == before
    with sqlite3.connect(data_dir / "yak.db") as conn:
        assert conn.execute("SELECT content FROM memory_documents").fetchall() == [("kept\n",)]
    conn.close()


@pytest.mark.parametrize("data", [b"", b"\n \n", "\ufeff\r\n".encode("utf-16")])
def test_importing_an_empty_file_is_refused_and_writes_nothing(store, ws, data):
    store.write(ws.id, "keep\n", expected_version=0)
    before = snapshot(store, ws.id)
    with pytest.raises(UsageError, match="The input is empty; nothing was saved"):
        store.import_bytes(ws.id, data, source_name="empty.txt")
    assert snapshot(store, ws.id) == before
    assert store.import_bytes(ws.id, b"x\n").content == "x\n"  # positive beside it


@pytest.mark.parametrize("fmt, name", [("text", "m.txt"), ("markdown", "m.md"),
                                       ("json", "m.json")])
def test_an_export_round_trips_through_import_byte_for_byte(store, ws, other, fmt, name):
    content = "Project\n\n# kept\n- \u00fcn\u00efcode\n"
    store.write(ws.id, content, expected_version=0)
    data = store.export_bytes(ws.id, fmt)
    assert store.import_bytes(other.id, data, source_name=name).content == content
    assert store.read(other.id).content.encode() == content.encode()


def test_a_json_export_of_an_empty_memory_is_refused_as_empty(store, ws, other):
    store.write(other.id, "keep\n", expected_version=0)
    data = store.export_bytes(ws.id, "json")
    with pytest.raises(UsageError, match="The input is empty"):
        store.import_bytes(other.id, data, source_name="m.json")
    assert store.read(other.id).content == "keep\n"
