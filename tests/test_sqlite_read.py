"""The plain ``sqlite3`` read path (``yak.db.sqlite_read``) gives commands that only read the
same answers as the SQLAlchemy repositories: the same domain objects from each port method it
implements, the same bytes from ``yak memory show``/``list``/``history`` in every form, and the
same refusals; it is chosen only for a local database whose schema is current."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.support.builders import seed_document, workspace_with_document
from yak.cli import main
from yak.db.attempts import SqlAttemptRepository
from yak.db.documents import SqlDocumentRepository
from yak.db.engine import open_database
from yak.db.proposals import ProposalRepository
from yak.db.sqlite_read import (
    AttemptReader,
    DocumentReader,
    ProposalReader,
    WorkspaceReader,
    open_reader,
)
from yak.db.workspaces import SqlWorkspaceRepository
from yak.domain import RefreshOutcome, RefreshStatus, TokenUsage
from yak.errors import UnreadableDocument, UsageError, WorkspaceNotFound


@pytest.fixture
def stored(core, loop, tmp_path):
    """A database holding a workspace with a refresh-written document, a hand edit, three
    refresh attempts (one refused with its reply and flags), a pending proposal; a second
    workspace with an empty document; and a third whose folder is gone (orphaned). Returns
    the three folders."""
    folders = [tmp_path / name for name in ("app", "empty", "gone")]
    for folder in folders:
        folder.mkdir()

    async def build() -> None:
        app = await workspace_with_document(core, folders[0], "- uses uv\n", by_hand=False)
        await core.memory.save(app.id, "- uses uv\n- tabs, café ✓\n", expected_version=None)
        for i, status in enumerate((RefreshStatus.APPLIED, RefreshStatus.REFUSED_FLOOR) * 2):
            await core.memory.record_attempt(
                RefreshOutcome(
                    status=status,
                    reason=f"reason {i}",
                    workspace_id=app.id,
                    version=2,
                    lines=2,
                    reply=None if status is RefreshStatus.APPLIED else f"reply {i}\n",
                    model="m",
                    usage=TokenUsage(input_tokens=10 + i, output_tokens=i),
                    duration_s=0.5 * i,
                    session_ids=("s1", "s2"),
                    flags=("redacted:password",) if i else (),
                    added=i,
                    removed=1,
                ),
                base_version=1,
            )
        await core.review.propose_from_agent(
            app.id, text="- deploy with make ship", reason="seen in the Makefile", origin="a test"
        )
        await workspace_with_document(core, folders[1])
        gone = await workspace_with_document(core, folders[2])
        await seed_document(core, gone.id, "- an old project\n")

    loop.run_until_complete(build())
    folders[2].rmdir()
    return folders


@pytest.fixture
def both(stored, data_dir):
    """``(fast, full)``: the sqlite3 readers and the SQLAlchemy repositories on ``data_dir``
    (workspaces, documents, attempts, proposals)."""
    reader = open_reader(data_dir)
    assert reader is not None
    database = open_database(data_dir)
    full = (
        SqlWorkspaceRepository(database),
        SqlDocumentRepository(database),
        SqlAttemptRepository(database),
        ProposalRepository(database),
    )
    fast = (
        WorkspaceReader(reader, lambda: full[0]),
        DocumentReader(reader, lambda: full[1]),
        AttemptReader(reader, lambda: full[2]),
        ProposalReader(reader, lambda: full[3]),
    )
    yield fast, full
    reader.close()
    database.close()


def test_each_read_returns_what_the_sqlalchemy_repository_returns(stored, both):
    """For every stored workspace (and an unknown folder), ``find``, ``get``, ``linked_to``,
    ``read``, ``read_raw``, ``history``, ``revisions_since``, ``proposals`` and ``list`` are
    equal, field for field, to the SQLAlchemy repositories' answers; so are the memory list,
    the newest attempts, and ``get`` of an attempt or a revision by an id prefix."""
    (fast_ws, fast_docs, fast_attempts, fast_props), (ws, docs, attempts, props) = both
    assert fast_ws.find(str(stored[0].parent / "unknown")) is None
    for folder in stored:
        workspace = ws.find(str(folder))
        assert workspace is not None and fast_ws.find(str(folder)) == workspace
        assert fast_ws.get(workspace.id) == ws.get(workspace.id)
        assert fast_ws.linked_to(workspace.id) == ws.linked_to(workspace.id)
        assert fast_docs.read(workspace.id) == docs.read(workspace.id)
        assert fast_docs.read_raw(workspace.id) == docs.read_raw(workspace.id)
        assert fast_docs.history(workspace.id) == docs.history(workspace.id)
        assert fast_docs.revisions_since(workspace.id, 1) == docs.revisions_since(workspace.id, 1)
        for pending_only in (True, False):
            assert fast_props.proposals(workspace.id, pending_only=pending_only) == (
                props.proposals(workspace.id, pending_only=pending_only)
            )
        for limit in (None, 1, 50):
            assert fast_attempts.list(workspace.id, limit) == attempts.list(workspace.id, limit)
    assert fast_docs.summaries() == docs.summaries()
    assert fast_attempts.latest() == attempts.latest()
    keys = [str(folder) for folder in stored]
    assert fast_ws.memories_at(keys) == ws.memories_at(keys)
    assert fast_ws.orphans_named("gone") == ws.orphans_named("gone") != []
    app = ws.find(str(stored[0]))
    assert app is not None
    assert len(props.proposals(app.id)) == 1 and len(attempts.list(app.id)) == 4
    newest = attempts.list(app.id, 1)[0]
    # The shortest prefix no other attempt shares: ids made in the same millisecond differ only
    # in their last characters (monotonic ULIDs).
    others = [a.id for a in attempts.list(app.id) if a.id != newest.id]
    unique = next(
        newest.id[:n] for n in range(6, 27) if not any(o.startswith(newest.id[:n]) for o in others)
    )
    assert fast_attempts.get(app.id, unique.lower()) == attempts.get(app.id, newest.id)
    first = docs.history(app.id)[-1]
    assert fast_docs.get_revision(app.id, first.id.lower()) == docs.get_revision(app.id, "1")


def test_refusals_are_the_same_sentences(stored, both):
    """An unknown workspace id, a too short or unknown attempt id give the same error and
    sentence both ways."""
    (fast_ws, fast_docs, fast_attempts, _), (ws, docs, attempts, _) = both
    app = ws.find(str(stored[0]))
    assert app is not None
    cases = [
        (lambda r: r.get("ws_unknown"), fast_ws, ws, WorkspaceNotFound),
        (lambda r: r.read("ws_unknown"), fast_docs, docs, WorkspaceNotFound),
        (lambda r: r.get(app.id, "01AB"), fast_attempts, attempts, UsageError),
        (lambda r: r.get(app.id, "ZZZZZZZZ"), fast_attempts, attempts, UsageError),
    ]
    for call, fast, full, error in cases:
        with pytest.raises(error) as expected:
            call(full)
        with pytest.raises(error) as got:
            call(fast)
        assert str(got.value) == str(expected.value)


def test_a_document_that_is_not_utf8_is_refused_the_same_way(stored, both, data_dir):
    """Stored bytes that are not UTF-8: ``read`` raises the same ``UnreadableDocument`` both
    ways and ``read_raw`` gives the same bytes."""
    (_fast_ws, fast_docs, _, _), (ws, docs, _, _) = both
    app = ws.find(str(stored[0]))
    assert app is not None
    with sqlite3.connect(data_dir / "yak.db") as connection:
        connection.execute(
            "UPDATE memory_documents SET content = CAST(? AS TEXT) WHERE workspace_id = ?",
            (b"caf\xe9\n", app.id),
        )
    with pytest.raises(UnreadableDocument) as expected:
        docs.read(app.id)
    with pytest.raises(UnreadableDocument) as got:
        fast_docs.read(app.id)
    assert str(got.value) == str(expected.value)
    assert fast_docs.read_raw(app.id) == docs.read_raw(app.id) == b"caf\xe9\n"


def test_methods_it_does_not_implement_are_the_sqlalchemy_repository(stored, both):
    """A method the fast readers do not answer themselves (the watcher's versions, the
    tombstones, the pending counts, the recent workspaces) is answered by the SQLAlchemy
    repository, built on first use."""
    (fast_ws, fast_docs, _, fast_props), (ws, docs, _, props) = both
    app = ws.find(str(stored[0]))
    assert app is not None
    assert fast_docs.versions() == docs.versions()
    assert fast_docs.tombstones(app.id) == docs.tombstones(app.id)
    assert fast_props.pending_counts() == props.pending_counts() == {app.id: 1}
    assert fast_ws.recent(5) == ws.recent(5)


def test_the_commands_print_the_same_bytes_either_way(stored, data_dir, capsysbinary, monkeypatch):
    """``yak memory show`` (plain, ``--json``, ``--raw``, ``--reply``), ``list --json``,
    ``history --json`` and ``history --refreshes --json`` print byte-identical stdout and exit
    codes on the fast path and with the composition root made to use SQLAlchemy; an unknown
    reply id is the same one line."""
    import yak.bootstrap

    app = str(stored[0])
    gone = str(stored[2])
    attempts = json.loads(
        _run(capsysbinary, "memory", "history", "-w", app, "--refreshes", "--json")[1]
    )
    refused = next(a["id"] for a in attempts if a["status"] != "applied")
    commands = [
        ("memory", "show", "-w", app),
        ("memory", "show", "-w", app, "--json"),
        ("memory", "show", "-w", app, "--raw"),
        ("memory", "show", "-w", gone, "--json"),
        ("memory", "show", "-w", str(stored[1]), "--json"),
        ("memory", "show", "-w", app, "--reply", refused),
        ("memory", "show", "-w", app, "--reply", refused.lower(), "--json"),
        ("memory", "show", "-w", app, "--reply", "ZZZZZZZZ"),
        ("memory", "list", "--json"),
        ("memory", "history", "-w", app, "--json"),
        ("memory", "history", "-w", app, "--refreshes", "--json"),
    ]
    fast = [_run(capsysbinary, *argv) for argv in commands]
    monkeypatch.setattr(yak.bootstrap, "_fast_reader", lambda *_args: None)
    full = [_run(capsysbinary, *argv) for argv in commands]
    assert fast == full
    assert fast[0] == (0, "- uses uv\n- tabs, café ✓\n".encode(), "")
    assert fast[5][1] == b"reply 3\n"  # the newest refused attempt
    assert fast[7][0] == 2 and fast[7][2].count("\n") == 1


def test_no_fast_path_without_a_current_local_database(data_dir, tmp_path, monkeypatch):
    """No file, or a schema at another revision: no fast reader, so the usual path (which
    migrates or refuses) serves."""
    assert open_reader(data_dir) is None
    open_database(data_dir).close()
    assert open_reader(data_dir) is not None
    with sqlite3.connect(data_dir / "yak.db") as connection:
        connection.execute("UPDATE alembic_version SET version_num = 'older'")
    assert open_reader(data_dir) is None


def _run(capsysbinary, *argv):
    """``yak ARGS`` in this process: (exit code, stdout bytes, stderr text)."""
    code = main(list(argv))
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode("utf-8")
