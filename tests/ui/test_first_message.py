"""The first message of a launch, sent while the model client's warm-up is still importing the
SDK: the chat panel on the core's chat service, the real ``anthropic`` client and the scripted
fake Messages API, as in ``test_chat_panel.py``.

A launch is stood for by forgetting the loaded SDK (``yak.llm.sdk``) and holding its import on
the warm-up's worker thread until the test lets it go, so "before the import ends" is a fact of
the test, not a race.
"""

from __future__ import annotations

import asyncio
import threading
import time

from chat_support import run

from tests.support import until
from tests.support.fake_api import text
from yak.llm import sdk


def test_a_message_sent_while_the_sdk_imports_thinks_then_leaves_once_it_is_imported(
    chat, qloop, qtbot, fake_api, monkeypatch
):
    """Enter while the SDK is still being imported: "thinking…" shows at once; nothing reaches
    the API while the import runs; the request leaves once it has finished, and the reply
    streams into the transcript."""
    importing = threading.Event()
    release = threading.Event()
    imported_at: list[float] = []
    arrived_at: list[float] = []
    real_import = sdk._import

    def held_import() -> sdk.Sdk:
        importing.set()
        release.wait(10)
        loaded = real_import()
        imported_at.append(time.monotonic())
        return loaded

    def respond(body: dict):
        arrived_at.append(time.monotonic())
        return text("Here it is.")

    real_load = sdk.load
    asked: list[str] = []  # the threads that asked for the SDK: the warm-up's, then the turn's

    def counted_load():
        asked.append(threading.current_thread().name)
        return real_load()

    monkeypatch.setattr(sdk, "_loaded", None)  # a fresh launch: the SDK is not loaded yet
    monkeypatch.setattr(sdk, "_import", held_import)
    monkeypatch.setattr(sdk, "load", counted_load)
    fake_api.respond_with(respond)

    async def body() -> None:
        warm_up = asyncio.ensure_future(chat.service.warm_up())  # as the app starts it
        await until(importing.is_set, what="the warm-up to import the SDK")
        await chat.send_typed(qtbot, "Why?")
        assert chat.panel.transcript.thinking is not None  # shown at once
        assert chat.transcript() == "Why?\n\nthinking… 0 s"
        await until(lambda: len(asked) == 2, what="the turn to ask for the SDK")
        assert fake_api.message_requests == []  # the import is not done: nothing left yet
        assert chat.controller.turn_running
        release.set()
        assert await chat.finished() == "completed"
        assert await warm_up

    run(qloop, body())
    assert len(imported_at) == 1  # one import, shared by the warm-up and the turn
    assert len(arrived_at) == 1 and arrived_at[0] > imported_at[0]
    assert "Here it is." in chat.transcript()
    assert chat.panel.transcript.thinking is None
