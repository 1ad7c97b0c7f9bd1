"""The chat service (``core.chat``): sessions, turns, the connection test; and the API key as
the settings service (``core.settings``) keeps it."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import replace

import pytest

from tests.support import project_folder
from tests.support.fake_api import error, text
from yak.agent.types import ApprovalDecision, TextDelta
from yak.chat.service import title_from_prompt
from yak.errors import UsageError
from yak.events import MessageAdded, SessionsChanged, TurnCompleted


async def deny(_request):
    return ApprovalDecision.DENY


@pytest.fixture
def workspace(core, loop, tmp_path):
    """The workspace ``ws``; the chat model is ``claude-chat`` (Settings › Provider)."""
    core.settings.save(replace(core.settings.current(), chat_model="claude-chat"))
    return loop.run_until_complete(core.workspaces.open(str(project_folder(tmp_path, "ws"))))


@pytest.fixture
def published(core):
    """Session and message events with the thread each was published on."""
    seen: list = []

    def remember(event):
        seen.append((event, threading.get_ident()))

    for kind in (SessionsChanged, MessageAdded, TurnCompleted):
        core.bus.subscribe(kind, remember)
    return seen


async def test_session_management_publishes_sessions_changed(core, workspace, published):
    """Create, rename, delete: each reaches the repository and publishes SessionsChanged."""
    first = await core.chat.create_session(workspace.id)
    second = await core.chat.create_session(workspace.id, "Named")
    await core.chat.rename_session(first.id, "Renamed")
    await core.chat.delete_session(second.id)
    sessions = await core.chat.sessions(workspace.id)
    assert [s.title for s in sessions] == ["Renamed"]
    assert [event for event, _ in published] == [SessionsChanged(workspace.id)] * 4


async def test_send_titles_a_new_session_and_publishes_on_the_loop_thread(
    core, workspace, published, fake_api
):
    """The first prompt titles "New conversation"; MessageAdded and TurnCompleted are
    published from the event-loop thread; the transcript reads back; the chat model comes from
    the settings."""
    fake_api.script(text("Sure."), text("Again."))
    loop_thread = threading.get_ident()
    session = await core.chat.create_session(workspace.id)
    deltas: list = []
    finished = await core.chat.send(
        workspace, session.id, "Fix the build\nplease", approver=deny, on_event=deltas.append
    )
    await core.chat.send(workspace, session.id, "And again", approver=deny)
    messages = await core.chat.messages(session.id)
    sessions = await core.chat.sessions(workspace.id)

    assert finished.status == "completed" and finished.text == "Sure."
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == "Sure."
    assert sessions[0].title == "Fix the build"  # not retitled by the second prompt
    assert [m.text for m in messages] == ["Fix the build\nplease", "Sure.", "And again", "Again."]
    assert fake_api.message_requests[0].body["model"] == "claude-chat"
    kinds = [type(event) for event, _ in published]
    assert kinds.count(TurnCompleted) == 2 and kinds.count(MessageAdded) == 4
    assert {thread for _, thread in published} == {loop_thread}


async def test_one_turn_at_a_time_per_session(core, workspace, fake_api):
    """While a reply streams, a second send and a delete of that session are refused; Stop
    (cancelling the send) frees the session again."""
    gate = threading.Event()
    fake_api.script(text("slow reply here", gate=gate, pause_after=1), text("next"))
    session = await core.chat.create_session(workspace.id)
    streaming = asyncio.Event()

    def on_event(event):
        if isinstance(event, TextDelta):
            streaming.set()

    task = asyncio.ensure_future(
        core.chat.send(workspace, session.id, "first", approver=deny, on_event=on_event)
    )
    await streaming.wait()
    with pytest.raises(UsageError, match="still replying"):
        await core.chat.send(workspace, session.id, "second", approver=deny)
    with pytest.raises(UsageError, match="still replying"):
        await core.chat.delete_session(session.id)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    third = await core.chat.send(workspace, session.id, "third", approver=deny)
    assert third.status == "completed"


async def test_blank_prompt_is_refused(core, workspace, fake_api):
    """A blank prompt is refused with a sentence and nothing is sent."""
    session = await core.chat.create_session(workspace.id)
    with pytest.raises(UsageError, match="empty"):
        await core.chat.send(workspace, session.id, "  \n", approver=deny)
    assert fake_api.requests == []


async def test_connection_test_and_key(core, fake_api, monkeypatch, memory_keyring):
    """Test connection asks the chat model, then the memory model, and answers for each (the
    error's sentence for one that failed). A key saved through the settings service is found
    (and where), a deleted one is gone."""
    settings = core.settings.current()
    fake_api.script(text("ok"), text("ok"), text("ok"), error(401))
    checks = await core.chat.test_connection()
    assert [(c.role, c.model, c.error) for c in checks] == [
        ("chat", settings.chat_model, None),
        ("memory", settings.memory_model, None),
    ]
    assert checks[1].answered == (
        f"Connected to {fake_api.url}: model {settings.memory_model} answered."
    )
    assert [r.body["model"] for r in fake_api.message_requests] == [
        settings.chat_model,
        settings.memory_model,
    ]
    checks = await core.chat.test_connection()
    assert checks[0].answered is not None and checks[0].error is None
    assert checks[1].answered is None and "key" in checks[1].error.lower()

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert await core.settings.check_key() is False
    assert core.settings.key_available is False
    await core.settings.set_api_key("sk-saved")
    assert core.settings.key_available is True
    assert await core.settings.key_source() == "keyring"
    assert memory_keyring.passwords == {("yak", "anthropic"): "sk-saved"}
    await core.settings.delete_api_key()
    assert core.settings.key_available is False
    assert await core.settings.key_source() is None


async def test_base_url_from_settings_is_used(make_core, fake_api, monkeypatch):
    """Settings › Provider's base URL reaches the core's own model client when the environment
    has none."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    core = make_core(model_client=None)
    core.settings.save(
        replace(core.settings.current(), base_url=fake_api.url, chat_model="claude-chat")
    )
    fake_api.script(text("ok"), text("ok"))
    assert all(check.answered for check in await core.chat.test_connection())
    assert len(fake_api.requests) == 2


def test_title_from_prompt():
    """A title is the first non-blank line, blanks collapsed, at most 60 characters with "…"."""
    assert title_from_prompt("\n  Fix   the build \nmore") == "Fix the build"
    assert title_from_prompt("x" * 100) == "x" * 59 + "…"
