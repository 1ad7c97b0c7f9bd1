"""ChatService: the async facade of sessions, turns, the key and the connection test."""

from __future__ import annotations

import asyncio
import threading

import pytest
from fake_anthropic import error, text

from yak.agent.types import ApprovalDecision, TextDelta
from yak.chat.service import ChatService, title_from_prompt
from yak.config import Settings
from yak.errors import AuthenticationFailed, UsageError
from yak.events import EventBus, MessageAdded, SessionsChanged, TurnCompleted
from yak.memory.store import MemoryStore


async def deny(_request):
    return ApprovalDecision.DENY


@pytest.fixture
def setup(db, tmp_path, fake_api):
    folder = tmp_path / "ws"
    folder.mkdir()
    workspace = MemoryStore(db).open_workspace(str(folder))
    bus = EventBus()
    published: list = []
    threads: list[int] = []

    def record(event):
        published.append(event)
        threads.append(threading.get_ident())

    for kind in (SessionsChanged, MessageAdded, TurnCompleted):
        bus.subscribe(kind, record)
    settings = Settings(chat_model="claude-chat")
    service = ChatService(db=db, bus=bus, settings=lambda: settings)
    return service, workspace, published, threads


def test_session_management_publishes_sessions_changed(setup):
    """Create, rename, delete: each reaches the store and publishes SessionsChanged."""
    service, workspace, published, _ = setup

    async def go():
        first = await service.create_session(workspace.id)
        second = await service.create_session(workspace.id, "Named")
        await service.rename_session(first.id, "Renamed")
        await service.delete_session(second.id)
        return await service.sessions(workspace.id)

    sessions = asyncio.run(go())
    assert [s.title for s in sessions] == ["Renamed"]
    assert published == [SessionsChanged(workspace.id)] * 4


def test_send_titles_a_new_session_and_publishes_on_the_loop_thread(setup, fake_api):
    """The first prompt titles "New conversation"; MessageAdded and TurnCompleted are
    published from the event-loop thread; the transcript reads back."""
    service, workspace, published, threads = setup
    fake_api.script(text("Sure."), text("Again."))
    loop_thread: list[int] = []

    async def go():
        loop_thread.append(threading.get_ident())
        session = await service.create_session(workspace.id)
        deltas: list = []
        finished = await service.send(workspace, session.id, "Fix the build\nplease",
                                      approver=deny, on_event=deltas.append)
        await service.send(workspace, session.id, "And again", approver=deny)
        return session, finished, deltas, await service.messages(session.id), \
            await service.sessions(workspace.id)

    _session, finished, deltas, messages, sessions = asyncio.run(go())
    assert finished.status == "completed" and finished.text == "Sure."
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == "Sure."
    assert sessions[0].title == "Fix the build"  # not retitled by the second prompt
    assert [m.text for m in messages] == ["Fix the build\nplease", "Sure.", "And again",
                                          "Again."]
    assert fake_api.message_requests[0].body["model"] == "claude-chat"
    kinds = [type(e) for e in published]
    assert kinds.count(TurnCompleted) == 2 and kinds.count(MessageAdded) == 4
    assert set(threads) == set(loop_thread)


def test_one_turn_at_a_time_per_session(setup, fake_api):
    """While a reply streams, a second send and a delete of that session are refused; Stop
    (cancelling the send) frees the session again."""
    service, workspace, _, _ = setup
    gate = threading.Event()
    fake_api.script(text("slow reply here", gate=gate, pause_after=1), text("next"))

    async def go():
        session = await service.create_session(workspace.id)
        streaming = asyncio.Event()

        def on_event(event):
            if isinstance(event, TextDelta):
                streaming.set()

        task = asyncio.ensure_future(service.send(workspace, session.id, "first",
                                                  approver=deny, on_event=on_event))
        await streaming.wait()
        with pytest.raises(UsageError, match="still replying"):
            await service.send(workspace, session.id, "second", approver=deny)
        with pytest.raises(UsageError, match="still replying"):
            await service.delete_session(session.id)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await service.send(workspace, session.id, "third", approver=deny)

    assert asyncio.run(go()).status == "completed"


def test_blank_prompt_is_refused(setup, fake_api):
    service, workspace, _, _ = setup

    async def go():
        session = await service.create_session(workspace.id)
        await service.send(workspace, session.id, "  \n", approver=deny)

    with pytest.raises(UsageError, match="empty"):
        asyncio.run(go())
    assert fake_api.requests == []


def test_connection_test_and_key(setup, fake_api, monkeypatch, memory_keyring):
    """Test connection answers one sentence or raises the translated error; a key saved through
    the service is found."""
    service, _, _, _ = setup
    fake_api.script(text("ok"), error(401))
    assert asyncio.run(service.test_connection()).startswith(f"Connected to {fake_api.url}")
    with pytest.raises(AuthenticationFailed):
        asyncio.run(service.test_connection())

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert not service.has_api_key()
    asyncio.run(service.set_api_key("sk-saved"))
    assert service.has_api_key()
    asyncio.run(service.delete_api_key())
    assert not service.has_api_key()


def test_base_url_from_settings_is_used(db, tmp_path, fake_api, monkeypatch):
    """Settings > Provider's base URL reaches the provider when the environment has none."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    service = ChatService(db=db, bus=EventBus(),
                          settings=lambda: Settings(base_url=fake_api.url, chat_model="claude-chat"))
    fake_api.script(text("ok"))
    assert "answered" in asyncio.run(service.test_connection())
    assert len(fake_api.requests) == 1


def test_title_from_prompt():
    assert title_from_prompt("\n  Fix   the build \nmore") == "Fix the build"
    assert title_from_prompt("x" * 100) == "x" * 59 + "…"
