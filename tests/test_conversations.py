"""The conversation repository (``core.chat.conversations``): sessions, messages in creation
order, and the queries a memory refresh reads (unfolded messages past each session's watermark,
which only the memory service advances)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.support import project_folder
from yak.domain import TokenUsage
from yak.errors import UsageError, WorkspaceNotFound

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


@pytest.fixture
def store(core, loop, tmp_path):
    """The repository (``repo``), two workspaces (``a``, ``b``: their ids) and the memory
    service that moves the watermarks (``memory``)."""

    async def open_two():
        a = await core.workspaces.open(str(project_folder(tmp_path, "a")))
        b = await core.workspaces.open(str(project_folder(tmp_path, "b")))
        return a.id, b.id

    a, b = loop.run_until_complete(open_two())
    return SimpleNamespace(repo=core.chat.conversations, memory=core.memory, a=a, b=b)


async def test_create_list_rename_delete_sessions(store):
    """Sessions are listed newest activity first; rename keeps the order; delete removes them and
    their messages while the other workspace's sessions stay."""
    first = store.repo.create_session(store.a)
    second = store.repo.create_session(store.a, "Second")
    other = store.repo.create_session(store.b, "B only")
    assert first.title == "New conversation"
    assert [s.id for s in store.repo.sessions(store.a)] == [second.id, first.id]
    store.repo.add_message(first.id, "user", text("hello"))
    assert [s.id for s in store.repo.sessions(store.a)] == [first.id, second.id]

    renamed = store.repo.rename_session(second.id, "  Fix   the\nbuild  ")
    assert renamed.title == "Fix the build"
    assert store.repo.get_session(second.id).title == "Fix the build"
    assert [s.id for s in store.repo.sessions(store.a)] == [first.id, second.id]

    store.repo.delete_session(first.id)
    assert [s.id for s in store.repo.sessions(store.a)] == [second.id]
    with pytest.raises(UsageError):
        store.repo.messages(first.id)
    assert [s.id for s in store.repo.sessions(store.b)] == [other.id]


async def test_bad_titles_and_unknown_ids_are_usage_errors(store):
    """A blank title, an unknown session or an unknown workspace is refused with a sentence."""
    session = store.repo.create_session(store.a, "Keep")
    with pytest.raises(UsageError, match="cannot be empty"):
        store.repo.rename_session(session.id, "   ")
    assert store.repo.get_session(session.id).title == "Keep"
    with pytest.raises(UsageError, match="No conversation"):
        store.repo.get_session("01NOPE")
    with pytest.raises(UsageError):
        store.repo.add_message("01NOPE", "user", text("x"))
    with pytest.raises(WorkspaceNotFound):
        store.repo.create_session("ws_" + "0" * 32)
    long = store.repo.create_session(store.a, "x" * 500)
    assert len(long.title) == 200 and long.title.endswith("…")


async def test_messages_keep_blocks_order_model_and_usage(store):
    """Content blocks (text, tool_use, tool_result) round-trip; order is creation order; the
    usage keeps its cache writes and reads."""
    session = store.repo.create_session(store.a)
    store.repo.add_message(session.id, "user", text("list files"))
    tool_use = {"type": "tool_use", "id": "tu_1", "name": "list_directory", "input": {"path": "."}}
    store.repo.add_message(
        session.id,
        "assistant",
        [{"type": "text", "text": "Looking."}, tool_use],
        model="claude-x",
        usage=TokenUsage(12, 7, cache_creation_input_tokens=300, cache_read_input_tokens=900),
    )
    store.repo.add_message(
        session.id,
        "user",
        [{"type": "tool_result", "tool_use_id": "tu_1", "content": "a.txt\nb.txt"}],
    )
    got = store.repo.messages(session.id)
    assert [m.role for m in got] == ["user", "assistant", "user"]
    assert got[0].text == "list files"
    assert got[1].content[1] == tool_use
    assert got[1].model == "claude-x"
    assert got[1].usage == TokenUsage(12, 7, 300, 900)
    assert got[0].usage == TokenUsage()
    assert got[2].content[0]["tool_use_id"] == "tu_1"
    assert all(m.workspace_id == store.a for m in got)
    assert [m.id for m in got] == sorted(m.id for m in got)


async def test_add_message_rejects_bad_role_and_content(store):
    """Programming errors crash loudly and store nothing."""
    session = store.repo.create_session(store.a)
    with pytest.raises(ValueError):
        store.repo.add_message(session.id, "system", text("x"))
    with pytest.raises(ValueError):
        store.repo.add_message(session.id, "user", "just a string")  # type: ignore[arg-type]
    assert store.repo.messages(session.id) == []


async def test_unfolded_messages_span_sessions_oldest_first_and_respect_watermarks(store):
    """Unfolded = after each session's watermark, from all sessions, interleaved by id; the
    other workspace's messages never appear."""
    s1 = store.repo.create_session(store.a)
    s2 = store.repo.create_session(store.a)
    sb = store.repo.create_session(store.b)
    m1 = store.repo.add_message(s1.id, "user", text("one"))
    m2 = store.repo.add_message(s2.id, "user", text("two"))
    m3 = store.repo.add_message(s1.id, "assistant", text("three"))
    store.repo.add_message(sb.id, "user", text("b"))
    m4 = store.repo.add_message(s2.id, "assistant", text("four"))

    assert [m.text for m in store.repo.unfolded_messages(store.a)] == [
        "one",
        "two",
        "three",
        "four",
    ]

    await store.memory.advance_watermarks({s1.id: m1.id})
    assert [m.text for m in store.repo.unfolded_messages(store.a)] == ["two", "three", "four"]
    await store.memory.advance_watermarks({s2.id: m4.id})
    assert [m.id for m in store.repo.unfolded_messages(store.a)] == [m3.id]
    await store.memory.advance_watermarks({s1.id: m3.id})
    assert store.repo.unfolded_messages(store.a) == []
    assert [m.text for m in store.repo.unfolded_messages(store.b)] == ["b"]
    assert m2.id < m3.id


async def test_workspaces_with_unfolded(store):
    """Only workspaces with messages past a watermark are listed; empty sessions do not count."""
    assert store.repo.workspaces_with_unfolded() == []
    sa = store.repo.create_session(store.a)
    store.repo.create_session(store.b)  # empty
    assert store.repo.workspaces_with_unfolded() == []
    last = store.repo.add_message(sa.id, "user", text("hi"))
    assert store.repo.workspaces_with_unfolded() == [store.a]
    await store.memory.advance_watermarks({sa.id: last.id})
    assert store.repo.workspaces_with_unfolded() == []
    store.repo.add_message(sa.id, "assistant", text("again"))
    assert store.repo.workspaces_with_unfolded() == [store.a]


async def test_recent_messages_ignore_watermarks_and_keep_the_newest(store):
    """``recent_messages`` returns the newest ``limit`` of the workspace, oldest first."""
    s1 = store.repo.create_session(store.a)
    s2 = store.repo.create_session(store.a)
    ids = [
        store.repo.add_message(s, "user", text(str(i))).id
        for i, s in enumerate([s1.id, s2.id, s1.id, s2.id])
    ]
    await store.memory.advance_watermarks({s1.id: ids[2]})
    await store.memory.advance_watermarks({s2.id: ids[3]})
    assert [m.text for m in store.repo.recent_messages(store.a)] == ["0", "1", "2", "3"]
    assert [m.text for m in store.repo.recent_messages(store.a, limit=2)] == ["2", "3"]
    assert store.repo.recent_messages(store.a, limit=0) == []
    assert store.repo.recent_messages(store.b) == []


async def test_deleting_a_session_removes_its_unfolded_messages(store):
    """A deleted session's messages no longer feed the memory refresh."""
    s1 = store.repo.create_session(store.a)
    s2 = store.repo.create_session(store.a)
    store.repo.add_message(s1.id, "user", text("gone"))
    store.repo.add_message(s2.id, "user", text("kept"))
    store.repo.delete_session(s1.id)
    assert [m.text for m in store.repo.unfolded_messages(store.a)] == ["kept"]


async def test_the_prompt_snapshot_is_taken_once_and_notes_only_move_forward(store):
    """The first snapshot of a session stays (a second one is ignored and the stored one
    returned); the noted memory version never goes back; an unknown session is refused."""
    session = store.repo.create_session(store.a)
    assert (session.prompt_snapshot, session.snapshot_memory_version) == (None, None)
    taken = store.repo.take_prompt_snapshot(session.id, "block one", 3)
    again = store.repo.take_prompt_snapshot(session.id, "block two", 5)
    assert (taken.prompt_snapshot, taken.snapshot_memory_version) == ("block one", 3)
    assert (again.prompt_snapshot, again.snapshot_memory_version) == ("block one", 3)
    store.repo.note_memory_version(session.id, 6)
    store.repo.note_memory_version(session.id, 4)
    stored = store.repo.get_session(session.id)
    assert (stored.prompt_snapshot, stored.noted_memory_version) == ("block one", 6)
    with pytest.raises(UsageError):
        store.repo.take_prompt_snapshot("01NOSUCHSESSION00000000000", "x", 1)


@pytest.mark.sqlite_only  # builds an old SQLite file
def test_a_database_from_before_prompt_caching_keeps_its_conversations(data_dir, loop):
    """A database at the first schema upgrades on open: its messages read back with no cache
    tokens, and its sessions have no prompt snapshot yet (their next turn takes one)."""
    from alembic import command
    from sqlalchemy import text as sql

    from yak.bootstrap import open_core
    from yak.db.engine import open_database
    from yak.db.migrate import alembic_config

    old = open_database(data_dir, migrate=False)
    with old.engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0001")
        conn.execute(
            sql(
                "INSERT INTO workspaces (id, path, memory_enabled, created_at) "
                "VALUES ('ws_1', '/old/project', 1, '2026-01-01 00:00:00')"
            )
        )
        conn.execute(
            sql(
                "INSERT INTO chat_sessions (id, workspace_id, title, created_at, updated_at) "
                "VALUES ('01OLDSESSION00000000000000', 'ws_1', 'Old', "
                "'2026-01-01 00:00:00', '2026-01-01 00:00:00')"
            )
        )
        conn.execute(
            sql(
                "INSERT INTO chat_messages (id, session_id, workspace_id, role, content, "
                "input_tokens, output_tokens, created_at) VALUES ('01OLDMESSAGE00000000000000', "
                "'01OLDSESSION00000000000000', 'ws_1', 'assistant', "
                """'[{"type": "text", "text": "hi"}]', 40, 2, '2026-01-01 00:00:00')"""
            )
        )
    old.close()

    core = open_core(data_dir)
    try:
        [message] = core.chat.conversations.messages("01OLDSESSION00000000000000")
        session = core.chat.conversations.get_session("01OLDSESSION00000000000000")
    finally:
        loop.run_until_complete(core.aclose())
    assert (message.text, message.usage) == ("hi", TokenUsage(40, 2, 0, 0))
    assert (session.prompt_snapshot, session.snapshot_memory_version) == (None, None)
