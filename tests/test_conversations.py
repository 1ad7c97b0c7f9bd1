"""ConversationStore: sessions, messages in creation order, and the memory watermark queries."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from yak.db.conversations import ConversationStore
from yak.db.models import ChatSessionRow, WorkspaceRow
from yak.domain import TokenUsage
from yak.errors import UsageError, WorkspaceNotFound


def add_workspace(db, workspace_id: str, path: str) -> str:
    """Register a workspace row directly (the memory store owns the real path)."""
    with db.session() as s:
        s.add(WorkspaceRow(id=workspace_id, path=path))
    return workspace_id


def set_watermark(db, session_id: str, message_id: str | None) -> None:
    """What the memory store does when a rewrite is applied."""
    with db.session() as s:
        s.execute(update(ChatSessionRow).where(ChatSessionRow.id == session_id)
                  .values(folded_through=message_id))


def text(t: str) -> list[dict]:
    return [{"type": "text", "text": t}]


@pytest.fixture
def store(db):
    add_workspace(db, "ws_a", "/p/a")
    add_workspace(db, "ws_b", "/p/b")
    return ConversationStore(db)


def test_create_list_rename_delete_sessions(store):
    """Sessions are listed newest activity first; rename keeps the order; delete removes them and
    their messages while the other workspace's sessions stay."""
    first = store.create_session("ws_a")
    second = store.create_session("ws_a", "Second")
    other = store.create_session("ws_b", "B only")
    assert first.title == "New conversation"
    assert [s.id for s in store.sessions("ws_a")] == [second.id, first.id]
    store.add_message(first.id, "user", text("hello"))
    assert [s.id for s in store.sessions("ws_a")] == [first.id, second.id]

    renamed = store.rename_session(second.id, "  Fix   the\nbuild  ")
    assert renamed.title == "Fix the build"
    assert store.get_session(second.id).title == "Fix the build"
    assert [s.id for s in store.sessions("ws_a")] == [first.id, second.id]

    store.delete_session(first.id)
    assert [s.id for s in store.sessions("ws_a")] == [second.id]
    with pytest.raises(UsageError):
        store.messages(first.id)
    assert [s.id for s in store.sessions("ws_b")] == [other.id]


def test_bad_titles_and_unknown_ids_are_usage_errors(store):
    """A blank title, an unknown session or an unknown workspace is refused with a sentence."""
    session = store.create_session("ws_a", "Keep")
    with pytest.raises(UsageError, match="cannot be empty"):
        store.rename_session(session.id, "   ")
    assert store.get_session(session.id).title == "Keep"
    with pytest.raises(UsageError, match="No conversation"):
        store.get_session("01NOPE")
    with pytest.raises(UsageError):
        store.add_message("01NOPE", "user", text("x"))
    with pytest.raises(WorkspaceNotFound):
        store.create_session("ws_missing")
    long = store.create_session("ws_a", "x" * 500)
    assert len(long.title) == 200 and long.title.endswith("…")


def test_messages_keep_blocks_order_model_and_usage(store):
    """Content blocks (text, tool_use, tool_result) round-trip; order is creation order."""
    session = store.create_session("ws_a")
    store.add_message(session.id, "user", text("list files"))
    tool_use = {"type": "tool_use", "id": "tu_1", "name": "list_directory",
                "input": {"path": "."}}
    store.add_message(session.id, "assistant", [{"type": "text", "text": "Looking."}, tool_use],
                      model="claude-x", usage=TokenUsage(input_tokens=12, output_tokens=7))
    store.add_message(session.id, "user", [{"type": "tool_result", "tool_use_id": "tu_1",
                                            "content": "a.txt\nb.txt"}])
    got = store.messages(session.id)
    assert [m.role for m in got] == ["user", "assistant", "user"]
    assert got[0].text == "list files"
    assert got[1].content[1] == tool_use
    assert got[1].model == "claude-x"
    assert got[1].usage == TokenUsage(input_tokens=12, output_tokens=7)
    assert got[2].content[0]["tool_use_id"] == "tu_1"
    assert all(m.workspace_id == "ws_a" for m in got)
    assert [m.id for m in got] == sorted(m.id for m in got)


def test_add_message_rejects_bad_role_and_content(store):
    """Programming errors crash loudly and store nothing."""
    session = store.create_session("ws_a")
    with pytest.raises(ValueError):
        store.add_message(session.id, "system", text("x"))
    with pytest.raises(ValueError):
        store.add_message(session.id, "user", "just a string")  # type: ignore[arg-type]
    assert store.messages(session.id) == []


def test_unfolded_messages_span_sessions_oldest_first_and_respect_watermarks(store):
    """Unfolded = after each session's watermark, from all sessions, interleaved by id; the
    other workspace's messages never appear."""
    s1 = store.create_session("ws_a")
    s2 = store.create_session("ws_a")
    sb = store.create_session("ws_b")
    m1 = store.add_message(s1.id, "user", text("one"))
    m2 = store.add_message(s2.id, "user", text("two"))
    m3 = store.add_message(s1.id, "assistant", text("three"))
    store.add_message(sb.id, "user", text("b"))
    m4 = store.add_message(s2.id, "assistant", text("four"))

    assert [m.text for m in store.unfolded_messages("ws_a")] == ["one", "two", "three", "four"]

    set_watermark(store.db, s1.id, m1.id)
    assert [m.text for m in store.unfolded_messages("ws_a")] == ["two", "three", "four"]
    set_watermark(store.db, s2.id, m4.id)
    assert [m.id for m in store.unfolded_messages("ws_a")] == [m3.id]
    set_watermark(store.db, s1.id, m3.id)
    assert store.unfolded_messages("ws_a") == []
    assert [m.text for m in store.unfolded_messages("ws_b")] == ["b"]
    assert m2.id < m3.id


def test_workspaces_with_unfolded(store):
    """Only workspaces with messages past a watermark are listed; empty sessions do not count."""
    assert store.workspaces_with_unfolded() == []
    sa = store.create_session("ws_a")
    store.create_session("ws_b")  # empty
    assert store.workspaces_with_unfolded() == []
    last = store.add_message(sa.id, "user", text("hi"))
    assert store.workspaces_with_unfolded() == ["ws_a"]
    set_watermark(store.db, sa.id, last.id)
    assert store.workspaces_with_unfolded() == []
    store.add_message(sa.id, "assistant", text("again"))
    assert store.workspaces_with_unfolded() == ["ws_a"]


def test_recent_messages_ignore_watermarks_and_keep_the_newest(store):
    """``recent_messages`` returns the newest ``limit`` of the workspace, oldest first."""
    s1 = store.create_session("ws_a")
    s2 = store.create_session("ws_a")
    ids = [store.add_message(s, "user", text(str(i))).id
           for i, s in enumerate([s1.id, s2.id, s1.id, s2.id])]
    set_watermark(store.db, s1.id, ids[2])
    set_watermark(store.db, s2.id, ids[3])
    assert [m.text for m in store.recent_messages("ws_a")] == ["0", "1", "2", "3"]
    assert [m.text for m in store.recent_messages("ws_a", limit=2)] == ["2", "3"]
    assert store.recent_messages("ws_a", limit=0) == []
    assert store.recent_messages("ws_b") == []


def test_deleting_a_session_removes_its_unfolded_messages(store):
    """A deleted session's messages no longer feed the memory refresh."""
    s1 = store.create_session("ws_a")
    s2 = store.create_session("ws_a")
    store.add_message(s1.id, "user", text("gone"))
    store.add_message(s2.id, "user", text("kept"))
    store.delete_session(s1.id)
    assert [m.text for m in store.unfolded_messages("ws_a")] == ["kept"]
