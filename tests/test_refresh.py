"""The guarded memory refresh end to end: the real ``Provider`` (anthropic SDK) against the
scripted fake Messages API on 127.0.0.1, the real stores on a file-backed SQLite database.

Every case of issue 4's "Cases that must hold" is here; every refusal compares the stored
document byte for byte before and after and sits beside a reply that is applied.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from dataclasses import dataclass, field

import pytest
from fake_anthropic import cut, error, hang, stream_error, text

from yak.config import Settings
from yak.db.conversations import ConversationStore
from yak.domain import RefreshStatus, RevisionSource
from yak.events import EventBus, MemoryUpdated, RefreshFinished
from yak.llm.provider import Provider
from yak.memory.queue import MemoryRefreshQueue
from yak.memory.refresh import MemoryRefresher
from yak.memory.store import MemoryStore

ANTHROPIC_KEY = "sk-ant-api03-" + "Zq7Xw2Lm9Pk4Rt6Yv1Bn3Hj8Gf5Dc0Sa" * 2
DB_URL = "postgres://app:Sup3rS3cretPw@db.internal:5432/app"


def doc(lines: int, *, prefix: str = "fact") -> str:
    """A plain document of ``lines`` distinct lines (what a well-behaved model writes)."""
    return "".join(f"- {prefix} {i:03d}: the project keeps this fact\n" for i in range(lines))


@dataclass
class Env:
    store: MemoryStore
    conversations: ConversationStore
    workspace_id: str
    fake: object
    bus: EventBus
    events: list = field(default_factory=list)
    providers: list = field(default_factory=list)
    base_url: str | None = None
    timeout_s: float = 10.0

    def provider(self) -> Provider:
        provider = Provider(base_url=self.base_url, max_retries=0, timeout_s=self.timeout_s)
        self.providers.append(provider)
        return provider

    def refresher(self, **settings) -> MemoryRefresher:
        chosen = Settings(memory_model="claude-memory-test", **settings)
        return MemoryRefresher(store=self.store, conversations=self.conversations,
                               provider_factory=self.provider, settings=lambda: chosen,
                               bus=self.bus)

    def run(self, coro_factory):
        """Run ``coro_factory()`` on a fresh loop and close the providers it opened there."""
        async def main():
            try:
                return await coro_factory()
            finally:
                for provider in self.providers:
                    await provider.aclose()
                self.providers.clear()
        return asyncio.run(main())

    def refresh(self, workspace_id: str | None = None, **kwargs):
        refresher = self.refresher()
        return self.run(lambda: refresher.refresh(workspace_id or self.workspace_id, **kwargs))

    def write(self, content: str, workspace_id: str | None = None) -> None:
        ws = workspace_id or self.workspace_id
        self.store.write(ws, content, expected_version=self.store.read(ws).version)

    def say(self, *turns: str, session: str | None = None, workspace_id: str | None = None,
            title: str = "Chat") -> str:
        """Store user/assistant turns (alternating, user first) in a session; returns its id."""
        if session is None:
            session = self.conversations.create_session(workspace_id or self.workspace_id,
                                                        title).id
        for i, turn in enumerate(turns):
            self.conversations.add_message(session, "user" if i % 2 == 0 else "assistant",
                                           [{"type": "text", "text": turn}])
        return session

    def sent(self, index: int = -1) -> str:
        """The user content of a recorded model request."""
        return self.fake.message_requests[index].body["messages"][0]["content"]

    def snapshot(self, workspace_id: str | None = None) -> tuple:
        """Document bytes, version, history length and unfolded message ids."""
        ws = workspace_id or self.workspace_id
        document = self.store.read(ws)
        return (document.content.encode("utf-8"), document.version, len(self.store.history(ws)),
                [m.id for m in self.conversations.unfolded_messages(ws)])


@pytest.fixture
def env(db, tmp_path, fake_api):
    store = MemoryStore(db)
    folder = tmp_path / "proj"
    folder.mkdir()
    workspace = store.open_workspace(str(folder))
    bus = EventBus()
    environment = Env(store=store, conversations=ConversationStore(db),
                      workspace_id=workspace.id, fake=fake_api, bus=bus)
    bus.subscribe(MemoryUpdated, environment.events.append)
    bus.subscribe(RefreshFinished, environment.events.append)
    return environment


def other_workspace(env: Env, tmp_path, name: str = "other") -> str:
    folder = tmp_path / name
    folder.mkdir()
    return env.store.open_workspace(str(folder)).id


# --- applied and up to date --------------------------------------------------------------------

def test_a_good_reply_is_applied_with_the_memory_model_and_watermarks_advance(env):
    """The conversation goes to the memory model; the reply becomes the next version exactly;
    the messages are folded; MemoryUpdated and RefreshFinished are published."""
    env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted: ruff it is.")
    new = doc(10) + "- lint with ruff\n"
    env.fake.script(text(new))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.version == 2
    assert env.store.read(env.workspace_id).content.encode() == new.encode()
    body = env.fake.message_requests[0].body
    assert body["model"] == "claude-memory-test"
    assert "We decided to lint with ruff." in env.sent() and doc(10).strip() in env.sent()
    assert env.conversations.unfolded_messages(env.workspace_id) == []
    revision = env.store.history(env.workspace_id)[0]
    assert revision.source is RevisionSource.REFRESH and revision.model == "claude-memory-test"
    attempt = env.store.last_attempt(env.workspace_id)
    assert attempt.status is RefreshStatus.APPLIED and attempt.result_version == 2
    assert attempt.usage.input_tokens == 10 and attempt.duration_s > 0
    assert env.events[0] == MemoryUpdated(env.workspace_id, 2, "refresh")
    assert isinstance(env.events[1], RefreshFinished) and env.events[1].outcome == outcome


def test_nothing_unfolded_is_up_to_date_without_a_model_call(env):
    env.write(doc(5))
    before = env.snapshot()
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE
    assert env.fake.message_requests == []
    assert env.snapshot() == before


def test_a_reply_identical_to_the_document_is_up_to_date_and_folds_the_messages(env):
    env.write(doc(5))
    env.say("What does the project do?", "It is a memory app.")
    env.fake.script(text(doc(5)))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE and outcome.version == 1
    assert len(env.store.history(env.workspace_id)) == 1
    assert env.conversations.unfolded_messages(env.workspace_id) == []


def test_fences_and_chatter_are_stripped_before_storing(env):
    env.say("Use ruff.", "OK.")
    env.fake.script(text("Here is the updated memory:\n```\nProject\n- lint with ruff\n```\n"
                         "Let me know if you need anything else."))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert env.store.read(env.workspace_id).content == "Project\n- lint with ruff\n"


def test_chatter_fence_and_i_added_closing_around_a_rewrite_are_not_stored(env):
    """The tester's reply: 'Here is…', a fenced document, 'I added…' → only the document."""
    env.write(doc(10))
    env.say("Tests run with pytest.", "Noted.")
    new = doc(10) + "- tests run with pytest\n"
    env.fake.script(text(f"Here is the updated memory:\n\n```\n{new}```\n\n"
                         "I added the pytest fact and kept everything else."))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert env.store.read(env.workspace_id).content.encode() == new.encode()


def test_rebuild_reads_folded_conversations_again(env):
    """After a fold, a plain refresh is up to date; --rebuild sends the old conversation."""
    env.say("We pin Python 3.12.", "Pinned.")
    env.fake.script(text("- pin Python 3.12\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert env.refresh().status is RefreshStatus.UP_TO_DATE
    assert len(env.fake.message_requests) == 1
    env.fake.script(text("- pin Python 3.12\n- project: yak\n"))
    outcome = env.refresh(rebuild=True)
    assert outcome.status is RefreshStatus.APPLIED
    assert "We pin Python 3.12." in env.sent() and "rebuild" in env.sent()


# --- the ceiling -------------------------------------------------------------------------------

def test_ceiling_180_lines_then_240_twice_is_refused_and_nothing_is_cut(env):
    """Issue case: previous 180 lines; the model answers 240, and 240 again after the
    condense retry → refused_ceiling; the document is unchanged byte for byte; the condense
    request states the count and the limit; no stored version is the first 200 lines of a reply;
    the reply is kept with the attempt."""
    env.write(doc(180))
    env.say("Add everything about the build.", "Sure.")
    before = env.snapshot()
    long_reply = doc(240, prefix="long")
    env.fake.script(text(long_reply), text(long_reply))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING
    assert "240 lines" in outcome.reason and "200" in outcome.reason
    assert env.snapshot() == before
    assert len(env.fake.message_requests) == 2
    retry = env.fake.message_requests[1].body["messages"]
    assert retry[1]["role"] == "assistant"
    assert "240 lines" in retry[2]["content"] and "200 lines" in retry[2]["content"]
    first_200 = "".join(long_reply.splitlines(keepends=True)[:200])
    assert all(r.content != first_200 for r in env.store.history(env.workspace_id))
    attempt = env.store.last_attempt(env.workspace_id)
    assert attempt.status is RefreshStatus.REFUSED_CEILING and attempt.reply == long_reply
    assert "condense_retry" in attempt.flags


def test_ceiling_retry_that_fits_is_applied(env):
    """Positive beside it: 240 lines, then 190 after the condense retry → applied."""
    env.write(doc(180))
    env.say("Add everything about the build.", "Sure.")
    env.fake.script(text(doc(240, prefix="long")), text(doc(190, prefix="tight")))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.lines == 190
    assert env.store.read(env.workspace_id).content == doc(190, prefix="tight")


def test_a_reply_cut_at_the_output_limit_is_never_stored(env):
    """stop_reason max_tokens: the reply is incomplete even if it looks fine → condense retry;
    cut again → refused_ceiling, document unchanged."""
    env.write(doc(20))
    env.say("More facts.", "Ok.")
    before = env.snapshot()
    env.fake.script(text(doc(30), stop_reason="max_tokens"),
                    text(doc(31), stop_reason="max_tokens"))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING and "output limit" in outcome.reason
    assert env.snapshot() == before


# --- the floor, placeholders, empty ------------------------------------------------------------

def test_floor_150_lines_to_12_is_refused(env):
    """Issue case: previous 150 lines, the model answers 12 → refused_floor, unchanged."""
    env.write(doc(150))
    env.say("Summarize the project.", "Ok.")
    before = env.snapshot()
    env.fake.script(text(doc(12)))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert outcome.reason.startswith("the reply kept 12 of 150 lines (8%")
    assert env.snapshot() == before
    assert env.store.last_attempt(env.workspace_id).reply == doc(12)


def test_floor_same_setup_155_lines_is_applied(env):
    """The positive beside it: previous 150 lines, a 155-line answer is applied."""
    env.write(doc(150))
    env.say("Summarize the project.", "Ok.")
    env.fake.script(text(doc(155)))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.lines == 155
    assert env.store.read(env.workspace_id).content.encode() == doc(155).encode()


def test_talk_about_the_document_is_refused(env):
    env.write(doc(40))
    env.say("We use ruff now.", "Ok.")
    before = env.snapshot()
    env.fake.script(text("I updated the memory to say that the project lints with ruff."))
    assert env.refresh().status is RefreshStatus.REFUSED_FLOOR
    assert env.snapshot() == before


def test_a_reply_of_remarks_only_is_refused_by_the_floor_with_its_words_quoted(env):
    """"I have updated the memory…" is all chatter: cleaning leaves nothing. It is talk about
    the document, so it trips the floor, and the reason says so instead of "empty"."""
    env.write(doc(40))
    env.say("We use ruff now.", "Ok.")
    before = env.snapshot()
    env.fake.script(text("I have updated the memory with the ruff decision."))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert 'talks about the document instead of being it ("I have updated' in outcome.reason
    assert env.snapshot() == before
    env.fake.script(text(doc(40) + "- lint with ruff\n"))
    assert env.refresh().status is RefreshStatus.APPLIED


@pytest.mark.parametrize("bad", [
    doc(30) + "- rest unchanged\n",
    doc(15) + "...\n" + doc(15, prefix="more"),
    doc(30) + "(same as before)\n",
])
def test_placeholder_replies_are_refused(env, bad):
    env.write(doc(30))
    env.say("We use ruff now.", "Ok.")
    before = env.snapshot()
    env.fake.script(text(bad))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_PLACEHOLDER
    assert env.snapshot() == before


def test_empty_reply_is_refused_and_a_full_one_then_applied(env):
    env.write(doc(30))
    env.say("We use ruff now.", "Ok.")
    before = env.snapshot()
    env.fake.script(text("```\n```"))
    assert env.refresh().status is RefreshStatus.REFUSED_EMPTY
    assert env.snapshot() == before
    env.fake.script(text(doc(30) + "- lint with ruff\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert "We use ruff now." in env.sent()  # the refused attempt folded nothing


@pytest.mark.parametrize("reply", [None, "I can't help with that.", "short"])
def test_a_refusal_stop_reason_is_refused_and_the_document_kept(env, reply):
    """A completion that stopped with "refusal" is never applied, whatever text it carries
    (here also a full, valid-looking document); the same reply ending normally is applied."""
    env.write(doc(30))
    env.say("We use ruff now.", "Ok.")
    before = env.snapshot()
    body = reply if reply is not None else doc(30) + "- lint with ruff\n"
    env.fake.script(text(body, stop_reason="refusal"))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_EMPTY
    assert outcome.reason == "the model declined to rewrite the document (stop reason: refusal)"
    assert env.snapshot() == before
    env.fake.script(text(doc(30) + "- lint with ruff\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert env.store.read(env.workspace_id).content == doc(30) + "- lint with ruff\n"


def test_two_refreshers_on_two_connections_make_one_model_call(env, data_dir):
    """Like two `yak memory refresh` processes on one workspace: the second waits for the
    first's lock, re-reads, finds everything folded and is up to date without a model call."""
    from filelock import FileLock, Timeout

    from yak.db import open_database

    env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted.")
    new = doc(10) + "- lint with ruff\n"
    gate = threading.Event()
    env.fake.script(text(new, gate=gate), text(doc(10) + "- a second call\n"))
    second_db = open_database(data_dir)
    second_store = MemoryStore(second_db)
    second = MemoryRefresher(store=second_store, conversations=ConversationStore(second_db),
                             provider_factory=env.provider,
                             settings=lambda: Settings(memory_model="claude-memory-test"))
    lock_path = data_dir / "locks" / f"{env.workspace_id}.lock"

    async def both():
        first = env.refresher()
        tasks = [asyncio.ensure_future(first.refresh(env.workspace_id)),
                 asyncio.ensure_future(second.refresh(env.workspace_id))]
        while not env.fake.message_requests:  # one of them is in the model call, gated
            await asyncio.sleep(0.01)
        with pytest.raises(Timeout):  # and holds the workspace's lock while it is
            FileLock(lock_path, thread_local=False).acquire(blocking=False)
        gate.set()
        return await asyncio.gather(*tasks)

    try:
        outcomes = env.run(both)
    finally:
        gate.set()
        second_db.close()
    assert sorted(str(o.status) for o in outcomes) == ["applied", "up_to_date"]
    assert len(env.fake.message_requests) == 1
    assert env.store.read(env.workspace_id).content.encode() == new.encode()
    assert env.store.read(env.workspace_id).version == 2
    # The lock is free again: a later refresh of new talk calls the model.
    env.say("Also pin Python 3.12.", "Ok.")
    env.fake.script(text(new + "- pin Python 3.12\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert len(env.fake.message_requests) == 2


def test_a_refresh_cancelled_while_waiting_for_the_lock_never_keeps_it(env, data_dir):
    """Cancelled while another process holds the lock: no model call, nothing changed, and
    the lock is free once the other side lets go (also when the try in the worker thread
    succeeds just after the cancel)."""
    from filelock import FileLock

    from yak.memory import refresh as refresh_module

    env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted.")
    before = env.snapshot()
    other = FileLock(data_dir / "locks" / f"{env.workspace_id}.lock", thread_local=False)
    other.acquire()

    class SlowLock:
        """A lock whose acquire finishes only when the test says, after the cancel."""

        def __init__(self) -> None:
            self.entered, self.go = threading.Event(), threading.Event()
            self.released = threading.Event()

        def acquire(self, timeout: float) -> None:
            self.entered.set()
            self.go.wait(30)

        def release(self) -> None:
            self.released.set()

    slow = SlowLock()

    async def cancelled():
        task = asyncio.ensure_future(env.refresher().refresh(env.workspace_id))
        while not other.is_locked or not (data_dir / "locks").is_dir():
            await asyncio.sleep(0.01)
        for _ in range(5):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        waiting = asyncio.ensure_future(refresh_module._acquire(slow, 60.0))
        while not slow.entered.is_set():
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        slow.go.set()  # the thread's try now succeeds after the cancel
        await asyncio.to_thread(slow.released.wait, 30)  # a safety bound, not a timing check

    try:
        env.run(cancelled)
    finally:
        other.release()
    assert slow.released.is_set()
    assert env.fake.message_requests == [] and env.snapshot() == before
    env.fake.script(text(doc(10) + "- lint with ruff\n"))
    assert env.refresh().status is RefreshStatus.APPLIED  # the lock was not left held


# --- conflicts ---------------------------------------------------------------------------------

def test_hand_edit_during_the_rewrite_survives_and_the_rewrite_reruns_on_it(env):
    """Issue case: the user saves a hand edit while a rewrite based on the older version is in
    flight → superseded; the re-run sees the hand edit; the hand edit survives."""
    env.write(doc(20))
    env.say("We decided to lint with ruff.", "Ok.")
    hand = doc(20) + "- hand: deploy from the main branch only\n"

    def edit_while_working(body: dict):
        env.store.write(env.workspace_id, hand, expected_version=1)  # the user presses Save
        return text(doc(20) + "- lint with ruff\n")  # based on version 1: must not win

    rerun = hand + "- lint with ruff\n"
    env.fake.script(edit_while_working, text(rerun))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.version == 3
    assert env.store.read(env.workspace_id).content.encode() == rerun.encode()
    assert "deploy from the main branch only" in env.sent(1)
    history = env.store.history(env.workspace_id)
    assert [r.source for r in history] == [RevisionSource.REFRESH, RevisionSource.HAND,
                                           RevisionSource.HAND]
    assert all(r.content != doc(20) + "- lint with ruff\n" for r in history)
    statuses = [a.status for a in env.store.attempts(env.workspace_id)]
    assert statuses == [RefreshStatus.APPLIED, RefreshStatus.SUPERSEDED]


def test_superseded_twice_is_reported_and_the_hand_edits_survive(env):
    env.write(doc(20))
    env.say("We decided to lint with ruff.", "Ok.")
    edits = [doc(20) + "- hand one\n", doc(20) + "- hand two\n"]

    def editor(n: int):
        def edit(body: dict):
            env.write(edits[n])
            return text(doc(20) + "- lint with ruff\n")
        return edit

    env.fake.script(editor(0), editor(1))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.SUPERSEDED and outcome.version == 3
    assert env.store.read(env.workspace_id).content == edits[1]
    assert len(env.conversations.unfolded_messages(env.workspace_id)) == 2  # not folded


# --- secrets -----------------------------------------------------------------------------------

def test_secrets_reach_neither_the_model_nor_the_document(env):
    """Issue case: a conversation with an API key and a database URL with a password → neither
    is in the model's input; a reply that repeats them is redacted before storing; both
    redactions are flagged; the rest of the conversation does reach the model."""
    env.write(doc(10))
    env.say(f"My key is {ANTHROPIC_KEY} and the database is {DB_URL}. We lint with ruff.",
            "Got it, I will not repeat secrets.")
    reply = doc(10) + f"- database: {DB_URL}\n- key: {ANTHROPIC_KEY}\n- lint with ruff\n"
    env.fake.script(text(reply))
    outcome = env.refresh()
    sent = json.dumps(env.fake.message_requests[0].body)
    for secret in ("Sup3rS3cretPw", ANTHROPIC_KEY):
        assert secret not in sent
        assert secret not in env.store.read(env.workspace_id).content
        assert all(secret not in (a.reply or "") for a in env.store.attempts(env.workspace_id))
    assert "We lint with ruff." in env.sent()
    assert outcome.status is RefreshStatus.APPLIED
    stored = env.store.read(env.workspace_id)
    assert "postgres://app:[REDACTED:url-password]@db.internal:5432/app" in stored.content
    assert {"redacted:url_password", "redacted:anthropic_key",
            "redacted_reply:url_password", "redacted_reply:anthropic_key"} <= set(outcome.flags)
    assert {"redacted:url_password", "redacted_reply:anthropic_key"} <= set(stored.flags)


def test_tool_results_never_reach_the_model(env):
    session = env.conversations.create_session(env.workspace_id, "Read").id
    env.conversations.add_message(session, "user", [{"type": "text", "text": "Read config."}])
    env.conversations.add_message(session, "assistant", [
        {"type": "tool_use", "id": "toolu_1", "name": "read_file",
         "input": {"path": "config/settings.toml"}}])
    env.conversations.add_message(session, "user", [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "TOOL-OUTPUT-MARKER x=1"}])
    env.conversations.add_message(session, "assistant", [{"type": "text", "text": "x is 1."}])
    env.fake.script(text("- config lives in config/settings.toml\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert "TOOL-OUTPUT-MARKER" not in json.dumps(env.fake.message_requests[0].body)
    assert "[tool: read_file config/settings.toml]" in env.sent()


# --- the queue with the real refresher ---------------------------------------------------------

class Timers:
    """A fake clock and scheduler: tests fire the timers, nothing sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[list] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay, callback):
        entry = [self.now + delay, callback]

        class Handle:
            def cancel(self_inner) -> None:
                entry[1] = None

        self.timers.append(entry)
        return Handle()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for entry in sorted(self.timers, key=lambda e: e[0]):
            if entry[1] is not None and entry[0] <= self.now:
                callback, entry[1] = entry[1], None
                callback()


def test_two_sessions_a_second_apart_make_one_call_with_both(env):
    """Issue case: two sessions in one workspace finish a second apart (one decides 'lint with
    ruff', the other 'pin Python 3.12') → exactly one model call, whose input has both."""
    env.write(doc(10))
    env.fake.respond_with(lambda body: text(doc(10) + "- lint with ruff\n- pin Python 3.12\n"))
    timers = Timers()

    async def scenario():
        refresher = env.refresher()
        queue = MemoryRefreshQueue(lambda ws, rebuild: refresher.refresh(ws, rebuild=rebuild),
                                   debounce_s=10, clock=timers.clock, scheduler=timers.schedule)
        env.say("Let us lint with ruff.", "Decided: lint with ruff.", title="Lint")
        queue.enqueue(env.workspace_id)
        timers.advance(1)
        env.say("Which Python?", "Decided: pin Python 3.12.", title="Python")
        queue.enqueue(env.workspace_id)
        timers.advance(10)
        await queue.wait_idle()

    env.run(scenario)
    assert len(env.fake.message_requests) == 1
    assert "lint with ruff" in env.sent() and "pin Python 3.12" in env.sent()
    assert env.conversations.unfolded_messages(env.workspace_id) == []


def test_n_turns_make_one_call_and_two_workspaces_two_calls_each_with_its_own(env, tmp_path):
    """Issue case: 5 turn-completions within the debounce → one call; a second workspace gets
    its own call that contains only its own conversation."""
    other = other_workspace(env, tmp_path)
    env.fake.respond_with(lambda body: text("- noted\n" + doc(3)))
    timers = Timers()

    async def scenario():
        refresher = env.refresher()
        queue = MemoryRefreshQueue(lambda ws, rebuild: refresher.refresh(ws, rebuild=rebuild),
                                   debounce_s=10, clock=timers.clock, scheduler=timers.schedule)
        session = env.say("turn 0 in A", "answer 0 in A")
        for n in range(1, 5):
            env.say(f"turn {n} in A", f"answer {n} in A", session=session)
            queue.enqueue(env.workspace_id)
            timers.advance(2)
        env.say("the only turn in B", "answer in B", workspace_id=other)
        queue.enqueue(other)
        timers.advance(10)
        await queue.wait_idle()

    env.run(scenario)
    bodies = [env.sent(i) for i in range(len(env.fake.message_requests))]
    assert len(bodies) == 2
    for_a = next(b for b in bodies if "turn 0 in A" in b)
    for_b = next(b for b in bodies if "the only turn in B" in b)
    assert all(f"turn {n} in A" in for_a for n in range(5))
    assert "in B" not in for_a and "in A" not in for_b
    assert env.store.read(other).content == "- noted\n" + doc(3)


# --- provider faults ---------------------------------------------------------------------------

def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("fault", ["401", "429", "529", "500", "timeout", "refused", "cut",
                                   "stream_error", "missing_key"])
def test_provider_down_fails_with_nothing_changed_then_folds_the_same_conversation(
        env, fault, monkeypatch, memory_keyring):
    """Issue case: the provider is down → failed with the reason; document, version, history and
    watermarks unchanged; once it is back the same conversation is folded in."""
    env.write(doc(10))
    env.say("We decided to lint with ruff.", "Ok.")
    before = env.snapshot()
    replies = {"401": error(401), "429": error(429), "529": error(529), "500": error(500),
               "timeout": hang(), "cut": cut(doc(10), after_deltas=3),
               "stream_error": stream_error(after_deltas=2)}
    if fault in replies:
        env.fake.script(replies[fault])
    if fault == "timeout":
        env.timeout_s = 0.5  # the fake never answers; the client gives up
    if fault == "refused":
        env.base_url = f"http://127.0.0.1:{closed_port()}"
    if fault == "missing_key":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
    outcome = env.refresh()
    print(f"{fault}: {outcome.reason} ({', '.join(outcome.flags)})")
    assert outcome.status is RefreshStatus.FAILED
    assert outcome.reason and "\n" not in outcome.reason
    assert env.snapshot() == before
    attempt = env.store.last_attempt(env.workspace_id)
    assert attempt.status is RefreshStatus.FAILED and attempt.reason == outcome.reason

    env.base_url, env.timeout_s = None, 10.0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    env.fake.script(text(doc(10) + "- lint with ruff\n"))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert "We decided to lint with ruff." in env.sent()
    assert env.store.read(env.workspace_id).content == doc(10) + "- lint with ruff\n"
    assert env.conversations.unfolded_messages(env.workspace_id) == []


def test_provider_error_during_the_condense_retry_fails_with_nothing_changed(env):
    env.write(doc(180))
    env.say("More.", "Ok.")
    before = env.snapshot()
    env.fake.script(text(doc(240)), error(529))
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.FAILED
    assert env.snapshot() == before


def test_the_provider_is_closed_after_each_attempt_and_stays_usable(env):
    """A factory that hands out one shared provider: each attempt closes its connections, and
    the next attempt with the same provider still works."""
    shared = Provider(max_retries=0, timeout_s=10)
    closed = []
    original = shared.aclose

    async def counting_close():
        closed.append(True)
        await original()

    shared.aclose = counting_close
    refresher = MemoryRefresher(store=env.store, conversations=env.conversations,
                                provider_factory=lambda: shared, settings=Settings)
    env.say("We use ruff.", "Ok.")
    env.fake.script(text("- lint with ruff\n"), text("- lint with ruff\n- pin 3.12\n"))

    async def twice():
        first = await refresher.refresh(env.workspace_id)
        env.say("Pin 3.12.", "Ok.")
        second = await refresher.refresh(env.workspace_id)
        return first, second

    first, second = asyncio.run(twice())
    assert (first.status, second.status) == (RefreshStatus.APPLIED, RefreshStatus.APPLIED)
    assert len(closed) == 2


def test_memory_turned_off_sends_nothing_and_folds_nothing_until_turned_on(env):
    """With memory off for the workspace no conversation goes to the model and no watermark
    moves; turned back on, the same conversation is folded."""
    env.write(doc(5))
    env.say("We decided to lint with ruff.", "Ok.")
    env.store.set_memory_enabled(env.workspace_id, False)
    before = env.snapshot()
    outcome = env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE and "turned off" in outcome.reason
    assert env.fake.message_requests == []
    assert env.snapshot() == before

    env.store.set_memory_enabled(env.workspace_id, True)
    env.fake.script(text(doc(5) + "- lint with ruff\n"))
    assert env.refresh().status is RefreshStatus.APPLIED
    assert "We decided to lint with ruff." in env.sent()
