"""The guarded memory refresh end to end, through the core: ``core.refresh`` (forced and
automatic refreshes), the real ``Provider`` (anthropic SDK) against the scripted fake Messages
API on 127.0.0.1, and the real repositories on a file-backed SQLite database.

Every case of issue 4's "Cases that must hold" is here; every refusal compares the stored
document byte for byte before and after and sits beside a reply that is applied.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import threading
from dataclasses import dataclass, replace

import pytest
from filelock import FileLock, Timeout

from tests.support import ManualTimers, ModelClients, project_folder, record, say, until
from tests.support.builders import seed_document
from tests.support.fake_api import (
    FakeAnthropic,
    approx_tokens,
    cut,
    error,
    hang,
    request_blocks,
    stream_error,
    text,
)
from yak.core import Core
from yak.db.locks import FileRefreshLock
from yak.db.schema import DB_FILE
from yak.domain import RefreshStatus, RevisionSource, TokenUsage
from yak.events import MemoryChanged, MessageAdded, RefreshFinished, TurnCompleted
from yak.limits import REDACT_WINDOW_CHARS
from yak.llm.provider import Provider
from yak.memory.forms.edits import number_lines
from yak.memory.prompts.rewrite import request_text
from yak.memory.redaction import redact

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases

ANTHROPIC_KEY = "sk-ant-api03-" + "Zq7Xw2Lm9Pk4Rt6Yv1Bn3Hj8Gf5Dc0Sa" * 2
DB_URL = "postgres://app:Sup3rS3cretPw@db.internal:5432/app"
MEMORY_MODEL = "claude-memory-test"


def doc(lines: int, *, prefix: str = "fact") -> str:
    """A plain document of ``lines`` distinct lines (what a well-behaved model writes)."""
    return "".join(f"- {prefix} {i:03d}: the project keeps this fact\n" for i in range(lines))


@dataclass
class Env:
    """The core, one workspace in it, the fake API and what the core published."""

    core: Core
    workspace_id: str
    fake: FakeAnthropic
    clients: ModelClients
    timers: ManualTimers
    loop: asyncio.AbstractEventLoop
    events: list

    async def refresh(self, workspace_id: str | None = None, **kwargs):
        """A forced refresh (the Refresh button, ``yak memory refresh``)."""
        return await self.core.refresh.refresh_now(workspace_id or self.workspace_id, **kwargs)

    async def write(
        self, content: str, workspace_id: str | None = None, *, by_hand: bool = False
    ) -> None:
        """The document on the current version: as an earlier refresh wrote it (its lines are
        the model's, which a rewrite may change), or ``by_hand``."""
        if by_hand:
            await self.core.memory.save(
                workspace_id or self.workspace_id, content, expected_version=None
            )
        else:
            await seed_document(self.core, workspace_id or self.workspace_id, content)

    def write_from_another_thread(self, content: str, *, expected_version=None) -> None:
        """A hand save made on the loop while this thread (the fake API's) waits for it: the
        user pressing Save while the model works."""
        save = self.core.memory.save(self.workspace_id, content, expected_version=expected_version)
        asyncio.run_coroutine_threadsafe(save, self.loop).result(timeout=30)

    def say(
        self,
        *turns: str,
        session: str | None = None,
        workspace_id: str | None = None,
        title: str = "Chat",
    ) -> str:
        """Store user/assistant turns (alternating, user first) in a session; returns its id."""
        return say(
            self.core,
            workspace_id or self.workspace_id,
            *turns,
            session_id=session,
            title=title,
        )

    @property
    def conversations(self):
        return self.core.chat.conversations

    def unfolded(self, workspace_id: str | None = None) -> list:
        return self.conversations.unfolded_messages(workspace_id or self.workspace_id)

    def sent(self, index: int = -1) -> str:
        """The user content of a recorded model request."""
        return request_text(self.fake.message_requests[index].body["messages"])

    async def content(self, workspace_id: str | None = None) -> str:
        return (await self.core.memory.read(workspace_id or self.workspace_id)).content

    async def history(self):
        return await self.core.memory.history(self.workspace_id)

    async def attempts(self):
        return await self.core.memory.attempts(self.workspace_id)

    async def last_attempt(self):
        return await self.core.memory.last_attempt(self.workspace_id)

    async def snapshot(self, workspace_id: str | None = None) -> tuple:
        """Document bytes, version, history length and unfolded message ids."""
        ws = workspace_id or self.workspace_id
        document = await self.core.memory.read(ws)
        history = await self.core.memory.history(ws)
        return (
            document.content.encode("utf-8"),
            document.version,
            len(history),
            [m.id for m in self.unfolded(ws)],
        )


@pytest.fixture
def env(core, loop, tmp_path, fake_api, model_clients, timers):
    """The core with ``claude-memory-test`` as the memory model and the workspace ``proj``."""
    settings = core.settings.current()
    core.settings.save(replace(settings, memory_model=MEMORY_MODEL))
    folder = project_folder(tmp_path, "proj")
    workspace = loop.run_until_complete(core.workspaces.open(str(folder)))
    return Env(
        core=core,
        workspace_id=workspace.id,
        fake=fake_api,
        clients=model_clients,
        timers=timers,
        loop=loop,
        events=record(core.bus, MemoryChanged, RefreshFinished),
    )


async def other_workspace(env: Env, tmp_path, name: str = "other") -> str:
    folder = project_folder(tmp_path, name)
    return (await env.core.workspaces.open(str(folder))).id


# --- applied and up to date --------------------------------------------------------------------


async def test_a_good_reply_is_applied_with_the_memory_model_and_watermarks_advance(env):
    """The conversation goes to the memory model; the reply becomes the next version exactly;
    the messages are folded; MemoryChanged and RefreshFinished are published."""
    await env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted: ruff it is.")
    env.events.clear()  # the hand save above
    new = doc(10) + "- lint with ruff\n"
    env.fake.script(text(new))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.version == 2
    assert (await env.content()).encode() == new.encode()
    body = env.fake.message_requests[0].body
    assert body["model"] == "claude-memory-test"
    # The document goes with its lines numbered, for the model's edits.
    assert "We decided to lint with ruff." in env.sent() and number_lines(doc(10)) in env.sent()
    assert env.unfolded() == []
    revision = (await env.history())[0]
    assert revision.source is RevisionSource.REFRESH and revision.model == "claude-memory-test"
    attempt = await env.last_attempt()
    assert attempt.status is RefreshStatus.APPLIED and attempt.result_version == 2
    # The tokens as the API reported them, the prompt cache's split kept.
    assert attempt.usage == TokenUsage(**env.fake.message_requests[0].usage)
    assert attempt.usage.cache_creation_input_tokens > 0 and attempt.duration_s > 0
    assert env.events[0] == MemoryChanged(env.workspace_id, 2, "refresh", None)
    assert isinstance(env.events[1], RefreshFinished) and env.events[1].outcome == outcome


@pytest.mark.sqlite_only  # a write lock held by another program on the SQLite file
async def test_a_refresh_failing_on_a_locked_database_is_recorded_once_it_is_writable(
    env, data_dir
):
    """Another program holds the database's write lock while a refresh runs: the rewrite and
    its record both fail (``failed``, the document unchanged); once the lock is gone, the next
    refresh first records the failed attempt, so the refresh history lists it, failed, with
    why, beside the attempt that then applied."""
    await env.write(doc(150))
    env.say("Lint with ruff.", "Decided.")
    env.fake.script(text(doc(150) + "- lint with ruff\n"))
    before = await env.snapshot()
    other = sqlite3.connect(data_dir / DB_FILE, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # the write lock, as another program's transaction
        failed = await env.refresh()
        assert failed.status is RefreshStatus.FAILED and "busy" in failed.reason
        assert await env.snapshot() == before
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert await env.attempts() == []  # the lock kept the record out too

    env.fake.script(text(doc(150) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED

    attempts = await env.attempts()
    assert [a.status for a in attempts] == [RefreshStatus.APPLIED, RefreshStatus.FAILED]
    assert attempts[1].reason.startswith("The Yak database (")
    assert "is busy in another program" in attempts[1].reason
    assert attempts[1].reason.endswith(
        "(recorded later: the database could not be written when it failed)"
    )


async def test_nothing_unfolded_is_up_to_date_without_a_model_call(env):
    """No conversation since the last refresh: up to date, no model call, nothing changed."""
    await env.write(doc(5))
    before = await env.snapshot()
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE
    assert env.fake.message_requests == []
    assert await env.snapshot() == before


async def test_a_reply_identical_to_the_document_is_up_to_date_and_folds_the_messages(env):
    """A reply equal to the document writes no version but folds the conversation it read."""
    await env.write(doc(5))
    env.say("What does the project do?", "It is a memory app.")
    env.fake.script(text(doc(5)))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE and outcome.version == 1
    assert len(await env.history()) == 1
    assert env.unfolded() == []


async def test_fences_and_chatter_are_stripped_before_storing(env):
    """A code fence and the model's remarks around the document are not stored."""
    env.say("We lint with ruff.", "OK.")
    env.fake.script(
        text(
            "Here is the updated memory:\n```\nProject\n- lint with ruff\n```\n"
            "Let me know if you need anything else."
        )
    )
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert (await env.content()) == "Project\n- lint with ruff\n"


async def test_chatter_fence_and_i_added_closing_around_a_rewrite_are_not_stored(env):
    """The tester's reply: 'Here is…', a fenced document, 'I added…' → only the document."""
    await env.write(doc(10))
    env.say("Tests run with pytest.", "Noted.")
    new = doc(10) + "- tests run with pytest\n"
    env.fake.script(
        text(
            f"Here is the updated memory:\n\n```\n{new}```\n\n"
            "I added the pytest fact and kept everything else."
        )
    )
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert (await env.content()).encode() == new.encode()


async def test_rebuild_reads_folded_conversations_again(env):
    """After a fold, a plain refresh is up to date; --rebuild sends the old conversation."""
    env.say("We pin Python 3.12 for the yak project.", "Pinned.")
    env.fake.script(text("- pin Python 3.12\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert (await env.refresh()).status is RefreshStatus.UP_TO_DATE
    assert len(env.fake.message_requests) == 1
    env.fake.script(text("- pin Python 3.12\n- project: yak\n"))
    outcome = await env.refresh(rebuild=True)
    assert outcome.status is RefreshStatus.APPLIED
    assert "We pin Python 3.12 for the yak project." in env.sent() and "rebuild" in env.sent()
    assert (await env.content()) == "- pin Python 3.12\n- project: yak\n"


# --- the ceiling -------------------------------------------------------------------------------


async def test_ceiling_180_lines_then_240_twice_is_refused_and_nothing_is_cut(env):
    """Issue case: previous 180 lines; the model answers 240, and 240 again after the
    condense retry → refused_ceiling; the document is unchanged byte for byte; the condense
    request states the count and the limit; no stored version is the first 200 lines of a reply;
    the reply is kept with the attempt."""
    await env.write(doc(180))
    env.say("Add everything about the build.", "Sure.")
    before = await env.snapshot()
    long_reply = doc(240, prefix="long")
    env.fake.script(text(long_reply), text(long_reply))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING
    assert "240 lines" in outcome.reason and "200" in outcome.reason
    assert await env.snapshot() == before
    assert len(env.fake.message_requests) == 2
    retry = env.fake.message_requests[1].body["messages"]
    assert retry[1]["role"] == "assistant"
    assert "240 lines" in retry[2]["content"] and "200 lines" in retry[2]["content"]
    first_200 = "".join(long_reply.splitlines(keepends=True)[:200])
    assert all(r.content != first_200 for r in (await env.history()))
    attempt = await env.last_attempt()
    assert attempt.status is RefreshStatus.REFUSED_CEILING and attempt.reply == long_reply
    assert "condense_retry" in attempt.flags


async def test_ceiling_retry_that_fits_is_applied(env):
    """Positive beside it: 240 lines, then 190 after the condense retry → applied."""
    await env.write(doc(180))
    fits = doc(190)
    env.say("Add everything about the build:\n" + fits.removeprefix(doc(180)), "Sure.")
    env.fake.script(text(doc(240, prefix="long")), text(fits))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.lines == 190
    assert (await env.content()) == fits


async def test_a_condense_retry_answered_with_edits_applies_them_to_the_long_reply(env):
    """Issue 33: the condense retry asks for the whole document, and a model answers with
    edits that cut the 201-line reply to 190: they are applied to that reply (not read as a
    document of their few characters, refused as a collapse) and the result is applied."""
    await env.write(doc(180))
    fits = doc(190)
    env.say("Add everything about the build:\n" + fits.removeprefix(doc(180)), "Sure.")
    env.fake.script(text(doc(201)), text("<edits>\n@@ delete 191-201\n</edits>"))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED, outcome.reason
    assert (await env.content()).encode() == fits.encode()
    assert "condense_retry" in (await env.last_attempt()).flags


async def test_a_condense_retry_whose_edits_fail_leaves_the_long_reply_to_trim(env):
    """The negative: edits that cannot be applied to the 201-line reply (a line past its end)
    leave the ceiling refusal standing, with the 201-line reply kept for "Trim and save…",
    and the reason says why the answer was not used; the document is unchanged."""
    await env.write(doc(180))
    env.say("Add everything about the build.", "Sure.")
    before = await env.snapshot()
    long_reply = doc(201)
    env.fake.script(text(long_reply), text("<edits>\n@@ delete 250-260\n</edits>"))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING
    assert outcome.reason.startswith("the reply has 201 lines (limit 200); the answer to one ")
    assert "condense retry was not used (" in outcome.reason
    assert await env.snapshot() == before
    attempt = await env.last_attempt()
    assert attempt.status is RefreshStatus.REFUSED_CEILING and attempt.reply == long_reply


async def test_a_reply_over_in_characters_says_how_many_characters_it_had(env):
    """Issue 33: a reply over the ceiling in characters, not lines, and again after the
    condense retry: the reason names the first reply's characters, not its lines."""
    await env.write(doc(100))
    env.say("Describe every module at length.", "Sure.")
    at_length = " ".join(["described at length"] * 9)
    wordy = "".join(f"- module {i:03d}: {at_length}\n" for i in range(150))
    env.fake.script(text(wordy), text(wordy))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING
    assert outcome.reason == (
        f"the reply has {len(wordy):,} characters (limit 25,000) after one condense retry "
        f"(the first reply had {len(wordy):,} characters)"
    )


async def test_a_reply_cut_at_the_output_limit_is_never_stored(env):
    """stop_reason max_tokens on a short reply: incomplete even if it looks fine → failed, and
    the reason says it was cut at the output limit (no condense retry: it is not too long);
    document unchanged."""
    await env.write(doc(20))
    env.say("More facts.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text(doc(30), stop_reason="max_tokens"))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.FAILED
    assert outcome.reason == (
        "the model's reply was cut off at its output limit (stop reason max_tokens) after 30 "
        "lines, so it is incomplete; nothing was stored"
    )
    assert await env.snapshot() == before
    assert env.fake.pending == 0 and len(env.fake.message_requests) == 1


async def test_a_long_reply_cut_at_the_output_limit_gets_the_condense_retry(env):
    """A cut reply that is also over the ceiling gets the condense retry; cut again →
    refused_ceiling naming both the ceiling and the output limit."""
    await env.write(doc(180))
    env.say("More facts.", "Ok.")
    before = await env.snapshot()
    env.fake.script(
        text(doc(240), stop_reason="max_tokens"), text(doc(230), stop_reason="max_tokens")
    )
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_CEILING
    assert "stop reason max_tokens" in outcome.reason and "200" in outcome.reason
    assert await env.snapshot() == before


# --- the floor, placeholders, empty ------------------------------------------------------------


async def test_floor_150_lines_to_12_is_refused(env):
    """Issue case: previous 150 lines, the model answers 12 → refused_floor, unchanged."""
    await env.write(doc(150))
    env.say("Summarize the project. Also:\n" + doc(155).removeprefix(doc(150)), "Ok.")
    before = await env.snapshot()
    env.fake.script(text(doc(12)))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert outcome.reason.startswith("the reply kept 12 of 150 lines (8%")
    assert await env.snapshot() == before
    assert (await env.last_attempt()).reply == doc(12)


async def test_floor_same_setup_155_lines_is_applied(env):
    """The positive beside it: previous 150 lines, a 155-line answer is applied."""
    await env.write(doc(150))
    env.say("Summarize the project. Also:\n" + doc(155).removeprefix(doc(150)), "Ok.")
    env.fake.script(text(doc(155)))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.lines == 155
    assert (await env.content()).encode() == doc(155).encode()


async def test_talk_about_the_document_is_refused(env):
    """A reply describing a change instead of being the document trips the floor; unchanged."""
    await env.write(doc(40))
    env.say("We lint with ruff now.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text("I updated the memory to say that the project lints with ruff."))
    assert (await env.refresh()).status is RefreshStatus.REFUSED_FLOOR
    assert await env.snapshot() == before


async def test_a_reply_of_remarks_only_is_refused_by_the_floor_with_its_words_quoted(env):
    """ "I have updated the memory…" is all chatter: cleaning leaves nothing. It is talk about
    the document, so it trips the floor, and the reason says so instead of "empty"."""
    await env.write(doc(40))
    env.say("We lint with ruff now.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text("I have updated the memory with the ruff decision."))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_FLOOR
    assert 'talks about the document instead of being it ("I have updated' in outcome.reason
    assert await env.snapshot() == before
    env.fake.script(text(doc(40) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED


@pytest.mark.parametrize(
    "bad",
    [
        doc(30) + "- rest unchanged\n",
        doc(15) + "...\n" + doc(15, prefix="more"),
        doc(30) + "(same as before)\n",
    ],
)
async def test_placeholder_replies_are_refused(env, bad):
    """ "rest unchanged", "..." or "(same as before)" in place of kept lines: refused, unchanged."""
    await env.write(doc(30))
    env.say("We lint with ruff now.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text(bad))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_PLACEHOLDER
    assert await env.snapshot() == before


async def test_empty_reply_is_refused_and_a_full_one_then_applied(env):
    """An empty reply is refused and folds nothing; the next full reply gets the same talk."""
    await env.write(doc(30))
    env.say("We lint with ruff now.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text("```\n```"))
    assert (await env.refresh()).status is RefreshStatus.REFUSED_EMPTY
    assert await env.snapshot() == before
    env.fake.script(text(doc(30) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert "We lint with ruff now." in env.sent()  # the refused attempt folded nothing


@pytest.mark.parametrize("reply", [None, "I can't help with that.", "short"])
async def test_a_refusal_stop_reason_is_refused_and_the_document_kept(env, reply):
    """A completion that stopped with "refusal" is never applied, whatever text it carries
    (here also a full, valid-looking document); the same reply ending normally is applied."""
    await env.write(doc(30))
    env.say("We lint with ruff now.", "Ok.")
    before = await env.snapshot()
    body = reply if reply is not None else doc(30) + "- lint with ruff\n"
    env.fake.script(text(body, stop_reason="refusal"))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.REFUSED_EMPTY
    assert outcome.reason == "the model declined to rewrite the document (stop reason: refusal)"
    assert await env.snapshot() == before
    env.fake.script(text(doc(30) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert (await env.content()) == doc(30) + "- lint with ruff\n"


# --- one refresh at a time across processes ----------------------------------------------------


@pytest.mark.sqlite_only  # the lock file (PostgreSQL's lock: tests/test_postgresql.py)
async def test_two_refreshers_on_two_connections_make_one_model_call(env, make_core, data_dir):
    """Like two `yak memory refresh` processes on one workspace (two cores on one database):
    the second waits for the first's lock, re-reads, finds everything folded and is up to date
    without a model call."""
    await env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted.")
    new = doc(10) + "- lint with ruff\n"
    gate = threading.Event()
    env.fake.script(text(new, gate=gate), text(doc(10) + "- a second call\n"))
    second = make_core()
    lock_path = data_dir / "locks" / f"{env.workspace_id}.lock"
    try:
        tasks = [
            asyncio.ensure_future(env.refresh()),
            asyncio.ensure_future(second.refresh.refresh_now(env.workspace_id)),
        ]
        # one of them is in the model call, gated
        await until(lambda: env.fake.message_requests, what="the first model call")
        with pytest.raises(Timeout):  # and holds the workspace's lock while it is
            FileLock(lock_path, thread_local=False).acquire(blocking=False)
        gate.set()
        outcomes = await asyncio.gather(*tasks)
    finally:
        gate.set()
    assert sorted(str(o.status) for o in outcomes) == ["applied", "up_to_date"]
    assert len(env.fake.message_requests) == 1
    assert env.fake.drop_pending() == 1  # the reply a second call would have got
    assert (await env.content()).encode() == new.encode()
    assert (await env.core.memory.read(env.workspace_id)).version == 2
    # The lock is free again: a later refresh of new talk calls the model.
    env.say("Also pin Python 3.12.", "Ok.")
    env.fake.script(text(new + "- pin Python 3.12\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert len(env.fake.message_requests) == 2
    assert (await env.content()) == new + "- pin Python 3.12\n"


@pytest.mark.sqlite_only  # the lock file (PostgreSQL's lock: tests/test_postgresql.py)
async def test_a_refresh_cancelled_while_waiting_for_the_lock_never_keeps_it(
    env, data_dir, monkeypatch
):
    """Cancelled while another process holds the lock: no model call, nothing changed, and
    the lock is free once the other side lets go (also when the try in the worker thread
    succeeds just after the cancel)."""
    await env.write(doc(10))
    env.say("We decided to lint with ruff.", "Noted.")
    before = await env.snapshot()
    other = FileLock(data_dir / "locks" / f"{env.workspace_id}.lock", thread_local=False)
    other.acquire()

    class SlowLock:
        """A lock whose acquire finishes only when the test says, after the cancel."""

        def __init__(self) -> None:
            self.entered, self.go = threading.Event(), threading.Event()
            self.released = threading.Event()

        def acquire(self, timeout: float) -> None:
            if timeout == 0:  # the first, non-blocking try (on the loop): held elsewhere
                raise Timeout(str(data_dir))
            self.entered.set()
            self.go.wait(30)

        def release(self) -> None:
            self.released.set()

    slow = SlowLock()
    try:
        task = asyncio.ensure_future(env.core.refresher.refresh(env.workspace_id))
        for _ in range(5):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

        locks = FileRefreshLock(data_dir)
        monkeypatch.setattr(locks, "_lock", lambda workspace_id: slow)
        waiting = asyncio.ensure_future(locks.acquire(env.workspace_id, wait_s=60.0))
        await until(slow.entered.is_set, what="the lock's try in its worker thread")
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        slow.go.set()  # the thread's try now succeeds after the cancel
        await until(slow.released.is_set, what="the late lock to be released")
    finally:
        other.release()
    assert env.fake.message_requests == [] and await env.snapshot() == before
    env.fake.script(text(doc(10) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED  # the lock was not left held


# --- conflicts ---------------------------------------------------------------------------------


async def test_hand_edit_during_the_rewrite_survives_and_the_rewrite_reruns_on_it(env):
    """Issue case: the user saves a hand edit while a rewrite based on the older version is in
    flight → superseded; the re-run sees the hand edit; the hand edit survives."""
    await env.write(doc(20))
    env.say("We decided to lint with ruff.", "Ok.")
    hand = doc(20) + "- hand: deploy from the main branch only\n"

    def edit_while_working(body: dict):
        env.write_from_another_thread(hand, expected_version=1)  # the user presses Save
        return text(doc(20) + "- lint with ruff\n")  # based on version 1: must not win

    rerun = hand + "- lint with ruff\n"
    env.fake.script(edit_while_working, text(rerun))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED and outcome.version == 3
    assert (await env.content()).encode() == rerun.encode()
    assert "deploy from the main branch only" in env.sent(1)
    history = await env.history()
    assert [r.source for r in history] == [
        RevisionSource.REFRESH,
        RevisionSource.HAND,
        RevisionSource.REFRESH,
    ]
    assert all(r.content != doc(20) + "- lint with ruff\n" for r in history)
    statuses = [a.status for a in await env.attempts()]
    assert statuses == [RefreshStatus.APPLIED, RefreshStatus.SUPERSEDED]


async def test_superseded_twice_is_reported_and_the_hand_edits_survive(env):
    """Two hand edits during the rewrite and its re-run: superseded, the last hand edit kept,
    nothing folded."""
    await env.write(doc(20))
    env.say("We decided to lint with ruff.", "Ok.")
    edits = [doc(20) + "- hand one\n", doc(20) + "- hand two\n"]

    def editor(n: int):
        def edit(body: dict):
            env.write_from_another_thread(edits[n])
            # Each reply keeps the hand lines of the version it was based on.
            return text(([doc(20)] + edits)[n] + "- lint with ruff\n")

        return edit

    env.fake.script(editor(0), editor(1))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.SUPERSEDED and outcome.version == 3
    assert (await env.content()) == edits[1]
    assert len(env.unfolded()) == 2  # not folded


# --- secrets -----------------------------------------------------------------------------------


async def test_secrets_reach_neither_the_model_nor_the_document(env):
    """Issue case: a conversation with an API key and a database URL with a password → neither
    is in the model's input; a reply that repeats them is redacted before storing; both
    redactions are flagged; the rest of the conversation does reach the model."""
    await env.write(doc(10))
    env.say(
        f"My key is {ANTHROPIC_KEY} and the database is {DB_URL}. We lint with ruff.",
        "Got it, I will not repeat secrets.",
    )
    reply = doc(10) + f"- database: {DB_URL}\n- key: {ANTHROPIC_KEY}\n- lint with ruff\n"
    env.fake.script(text(reply))
    outcome = await env.refresh()
    sent = json.dumps(env.fake.message_requests[0].body)
    for secret in ("Sup3rS3cretPw", ANTHROPIC_KEY):
        assert secret not in sent
        assert secret not in (await env.content())
        assert all(secret not in (a.reply or "") for a in await env.attempts())
    assert "We lint with ruff." in env.sent()
    assert outcome.status is RefreshStatus.APPLIED
    stored = await env.core.memory.read(env.workspace_id)
    assert "postgres://app:[REDACTED:url-password]@db.internal:5432/app" in stored.content
    assert {
        "redacted:url_password",
        "redacted:anthropic_key",
        "redacted_reply:url_password",
        "redacted_reply:anthropic_key",
    } <= set(outcome.flags)
    assert {"redacted:url_password", "redacted_reply:anthropic_key"} <= set(stored.flags)


async def test_a_bare_key_body_and_a_bare_password_reach_neither_the_model_nor_the_document(env):
    """A private key's base64 body pasted as prose (no PEM header) and "redis password X" (no
    "is", no "="): neither is in the model's input, and a reply repeating them is stored with
    markers."""
    import base64
    import random

    der = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7")
    body = base64.b64encode(der + random.Random(7).randbytes(1190)).decode()
    await env.write(doc(10))
    env.say(f"Deploy key: {body}\nAlso the redis password hunter2x. We lint with ruff.", "Noted.")
    env.fake.script(text(doc(10) + f"- deploy key {body}\n- redis password hunter2x\n"))
    outcome = await env.refresh()
    sent = json.dumps(env.fake.message_requests[0].body)
    stored = await env.core.memory.read(env.workspace_id)
    for secret in (body[:40], body[-40:], "hunter2x"):
        assert secret not in sent and secret not in stored.content
    assert "We lint with ruff." in env.sent()
    assert outcome.status is RefreshStatus.APPLIED
    assert "- deploy key [REDACTED:private-key]\n" in stored.content
    assert "- redis password [REDACTED:password-prose]\n" in stored.content
    assert {"redacted:private_key", "redacted:password_prose"} <= set(outcome.flags)


async def test_a_huge_stored_message_is_folded_cut_and_scanned_only_where_it_is_kept(
    env, monkeypatch
):
    """A 20 MB message (stored before the limits existed) reaches the model as its head and
    tail around ``[… N characters cut …]``, its secrets redacted, and the secret scan never
    reads more of it than ``REDACT_WINDOW_CHARS``: a refresh costs no more than with a long
    message (it spent a minute redacting such a message at every refresh)."""
    from yak.refresh import refresher

    scanned: list[int] = []

    def measured(text: str):
        scanned.append(len(text))
        return redact(text)

    monkeypatch.setattr(refresher, "redact", measured)
    await env.write(doc(10))
    middle = "lorem ipsum " * (20_000_000 // 12)
    env.say(
        f"We lint with ruff. My key is {ANTHROPIC_KEY}.\n{middle}\nThe end, key {ANTHROPIC_KEY}."
    )
    env.fake.script(text(doc(10) + "- lint with ruff\n"))

    outcome = await env.refresh()

    sent = env.sent()
    assert "We lint with ruff." in sent and re.search(r"\[… [\d,]+ characters cut …\]", sent)
    assert ANTHROPIC_KEY not in json.dumps(env.fake.message_requests[0].body)
    assert "The end, key [REDACTED" in sent
    assert "redacted:anthropic_key" in outcome.flags and "cut_long_message" in outcome.flags
    assert outcome.status is RefreshStatus.APPLIED and env.unfolded() == []
    assert max(scanned) <= REDACT_WINDOW_CHARS


async def test_tool_results_never_reach_the_model(env):
    """Tool output is never sent to the memory model; the call is one line naming the tool."""
    session = env.conversations.create_session(env.workspace_id, "Read").id
    env.conversations.add_message(session, "user", [{"type": "text", "text": "Read config."}])
    env.conversations.add_message(
        session,
        "assistant",
        [
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "read_file",
                "input": {"path": "config/settings.toml"},
            }
        ],
    )
    env.conversations.add_message(
        session,
        "user",
        [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "TOOL-OUTPUT-MARKER x=1"}],
    )
    env.conversations.add_message(session, "assistant", [{"type": "text", "text": "x is 1."}])
    env.fake.script(text("- config lives in config/settings.toml\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert "TOOL-OUTPUT-MARKER" not in json.dumps(env.fake.message_requests[0].body)
    assert "[tool: read_file config/settings.toml]" in env.sent()


# --- automatic refreshes: the queue with the real refresher ------------------------------------


async def test_two_sessions_a_second_apart_make_one_call_with_both(env):
    """Issue case: two sessions in one workspace finish a second apart (one decides 'lint with
    ruff', the other 'pin Python 3.12') → exactly one model call, whose input has both. The
    turns reach the queue as ``TurnCompleted`` on the core's bus."""
    await env.write(doc(10))
    env.fake.respond_with(lambda body: text(doc(10) + "- lint with ruff\n- pin Python 3.12\n"))
    lint = env.say("Let us lint with ruff.", "Decided: lint with ruff.", title="Lint")
    env.core.bus.publish(TurnCompleted(env.workspace_id, lint))
    env.timers.advance(1)
    python = env.say("Which Python?", "Decided: pin Python 3.12.", title="Python")
    env.core.bus.publish(TurnCompleted(env.workspace_id, python))
    env.timers.advance(119)
    await env.core.refresh.queue.wait_idle()
    assert env.fake.message_requests == []  # not yet quiet for 120 s since the second turn
    env.timers.advance(1)
    await env.core.refresh.queue.wait_idle()
    assert len(env.fake.message_requests) == 1
    assert "lint with ruff" in env.sent() and "pin Python 3.12" in env.sent()
    assert env.unfolded() == []


async def test_messages_on_the_bus_keep_the_refresh_waiting_and_a_closed_one_runs_soon(env):
    """Through the core's bus: a stored message (``MessageAdded``, the next prompt) restarts
    the quiet time of a pending refresh; closing the conversation runs it 10 s later; at
    start, unfolded conversations also run 10 s in (they ended when the app quit)."""
    await env.write(doc(3))
    env.fake.respond_with(lambda body: text("<edits></edits>"))
    session = env.say("Use make.", "Ok.")
    env.core.bus.publish(TurnCompleted(env.workspace_id, session))
    env.timers.advance(100)
    env.core.bus.publish(MessageAdded(env.workspace_id, session, "msg_next"))
    env.timers.advance(100)
    await env.core.refresh.queue.wait_idle()
    assert env.fake.message_requests == []  # 100 s since the last message
    env.core.refresh.conversation_closed(env.workspace_id)
    env.timers.advance(10)
    await env.core.refresh.queue.wait_idle()
    assert len(env.fake.message_requests) == 1

    env.core.refresh.conversation_closed(env.workspace_id)  # nothing waits: nothing runs
    env.say("Use ninja.", "Ok.", session=session)
    assert await env.core.refresh.enqueue_unfolded() == [env.workspace_id]
    env.timers.advance(10)
    await env.core.refresh.queue.wait_idle()
    assert len(env.fake.message_requests) == 2 and "Use ninja." in env.sent()


async def test_n_turns_make_one_call_and_two_workspaces_two_calls_each_with_its_own(env, tmp_path):
    """Issue case: 5 turn-completions within the debounce → one call; a second workspace gets
    its own call that contains only its own conversation."""
    other = await other_workspace(env, tmp_path)
    env.fake.respond_with(lambda body: text("- noted\n" + doc(3)))
    session = env.say("turn 0 in A", "answer 0 in A")
    for n in range(1, 5):
        env.say(f"turn {n} in A", f"answer {n} in A", session=session)
        env.core.refresh.enqueue(env.workspace_id)
        env.timers.advance(2)
    env.say("the only turn in B:\n" + doc(3), "answer in B: noted", workspace_id=other)
    env.core.refresh.enqueue(other)
    env.timers.advance(120)
    await env.core.refresh.queue.wait_idle()
    bodies = [env.sent(i) for i in range(len(env.fake.message_requests))]
    assert len(bodies) == 2
    for_a = next(b for b in bodies if "turn 0 in A" in b)
    for_b = next(b for b in bodies if "the only turn in B" in b)
    assert all(f"turn {n} in A" in for_a for n in range(5))
    assert "in B" not in for_a and "in A" not in for_b
    assert await env.content(other) == "- noted\n" + doc(3)


# --- provider faults ---------------------------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    "fault",
    ["401", "429", "529", "500", "timeout", "refused", "cut", "stream_error", "missing_key"],
)
async def test_provider_down_fails_with_nothing_changed_then_folds_the_same_conversation(
    env, fault, monkeypatch, memory_keyring
):
    """Issue case: the provider is down → failed with the reason; document, version, history and
    watermarks unchanged; once it is back the same conversation is folded in."""
    await env.write(doc(10))
    env.say("We decided to lint with ruff.", "Ok.")
    before = await env.snapshot()
    replies = {
        "401": error(401),
        "429": error(429),
        "529": error(529),
        "500": error(500),
        "timeout": hang(),
        "cut": cut(doc(10), after_deltas=3),
        "stream_error": stream_error(after_deltas=2),
    }
    if fault in replies:
        env.fake.script(replies[fault])
    if fault == "timeout":
        env.clients.timeout_s = 0.5  # the fake never answers; the client gives up
    if fault == "refused":
        env.clients.base_url = f"http://127.0.0.1:{closed_port()}"
    if fault == "missing_key":
        monkeypatch.delenv("ANTHROPIC_API_KEY")
    outcome = await env.refresh()
    print(f"{fault}: {outcome.reason} ({', '.join(outcome.flags)})")
    assert outcome.status is RefreshStatus.FAILED
    assert outcome.reason and "\n" not in outcome.reason
    assert await env.snapshot() == before
    attempt = await env.last_attempt()
    assert attempt.status is RefreshStatus.FAILED and attempt.reason == outcome.reason

    env.clients.base_url, env.clients.timeout_s = None, 10.0
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    env.fake.script(text(doc(10) + "- lint with ruff\n"))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.APPLIED
    assert "We decided to lint with ruff." in env.sent()
    assert await env.content() == doc(10) + "- lint with ruff\n"
    assert env.unfolded() == []


async def test_provider_error_during_the_condense_retry_fails_with_nothing_changed(env):
    """A provider error on the condense retry (after a reply over the ceiling) is a failure:
    nothing written, nothing folded."""
    await env.write(doc(180))
    env.say("More.", "Ok.")
    before = await env.snapshot()
    env.fake.script(text(doc(240)), error(529))
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.FAILED
    assert await env.snapshot() == before


class ClosingProvider(Provider):
    """A Provider that counts the times its connections are closed."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.closes = 0

    async def aclose(self) -> None:
        self.closes += 1
        await super().aclose()


async def two_applied_refreshes(env, core) -> None:
    """Two conversations, each folded by its own refresh; both are applied."""
    env.say("We lint with ruff.", "Ok.")
    env.fake.script(text("- lint with ruff\n"), text("- lint with ruff\n- pin 3.12\n"))
    first = await core.refresh.refresh_now(env.workspace_id)
    env.say("Pin 3.12.", "Ok.")
    second = await core.refresh.refresh_now(env.workspace_id)
    assert (first.status, second.status) == (RefreshStatus.APPLIED, RefreshStatus.APPLIED)


async def test_the_provider_is_closed_after_each_attempt_and_stays_usable(env, make_core):
    """A factory that hands out one shared provider: each attempt closes its connections, and
    the next attempt with the same provider still works."""
    shared = ClosingProvider(max_retries=0, timeout_s=10)
    core = make_core(model_client=lambda: shared)
    await two_applied_refreshes(env, core)
    assert shared.closes == 2


@pytest.mark.filterwarnings("error::ResourceWarning")
async def test_the_model_client_is_kept_between_refreshes_and_closed_with_the_core(
    env, make_core, model_clients
):
    """Refreshes with the same settings use one client (one connection pool, no new TLS
    handshake per refresh); a changed time limit or base URL gets a new one and the old one is
    closed; a failed call closes its client and the next refresh starts afresh; closing the
    core closes the client it kept."""
    model_clients.provider_class = ClosingProvider
    core = make_core()
    await two_applied_refreshes(env, core)
    assert len(model_clients.built) == 1 and model_clients.built[0].closes == 0

    model_clients.timeout_s = 9.0  # what the client is built from changed
    env.say("Use uv.", "Ok.")
    env.fake.script(text("- lint with ruff\n- pin 3.12\n- use uv\n"))
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.APPLIED
    kept, replaced = model_clients.built[1], model_clients.built[0]
    assert len(model_clients.built) == 2 and replaced.closes == 1 and kept.closes == 0

    env.say("Use mypy.", "Ok.")
    env.fake.script(cut("- lint with ruff\n", after_deltas=1))
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.FAILED
    assert kept.closes == 1  # a failed call may leave a broken connection: not reused
    env.fake.script(text("- lint with ruff\n- pin 3.12\n- use uv\n- use mypy\n"))
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.APPLIED
    assert len(model_clients.built) == 3 and model_clients.built[2].closes == 0

    await core.aclose()
    assert [client.closes for client in model_clients.built] == [1, 1, 1]


async def test_a_key_changed_in_settings_is_used_by_the_next_refresh(
    env, make_core, monkeypatch, memory_keyring
):
    """With the core's own model client: the next refresh after a key change in Settings sends
    the new key (the kept client is replaced); the same key keeps the client."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    core = make_core(model_client=None)
    await core.settings.use_session_key("sk-first")
    env.say("We lint with ruff.", "Ok.")
    env.fake.script(text("- lint with ruff\n"), text("- lint with ruff\n- pin 3.12\n"))
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.APPLIED
    env.say("Pin 3.12.", "Ok.")
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.APPLIED

    await core.settings.set_api_key("sk-second")  # the keyring; the session key goes first
    await core.settings.use_session_key(None)
    env.say("Use uv.", "Ok.")
    env.fake.script(text("- lint with ruff\n- pin 3.12\n- use uv\n"))
    assert (await core.refresh.refresh_now(env.workspace_id)).status is RefreshStatus.APPLIED
    keys = [r.headers["authorization"] for r in env.fake.message_requests]
    assert keys == ["Bearer sk-first", "Bearer sk-first", "Bearer sk-second"]


async def test_memory_turned_off_sends_nothing_and_folds_nothing_until_turned_on(env):
    """With memory off for the workspace no conversation goes to the model and no watermark
    moves; turned back on, the same conversation is folded."""
    await env.write(doc(5))
    env.say("We decided to lint with ruff.", "Ok.")
    await env.core.workspaces.set_memory_enabled(env.workspace_id, enabled=False)
    before = await env.snapshot()
    outcome = await env.refresh()
    assert outcome.status is RefreshStatus.UP_TO_DATE and "turned off" in outcome.reason
    assert env.fake.message_requests == []
    assert await env.snapshot() == before

    await env.core.workspaces.set_memory_enabled(env.workspace_id, enabled=True)
    env.fake.script(text(doc(5) + "- lint with ruff\n"))
    assert (await env.refresh()).status is RefreshStatus.APPLIED
    assert "We decided to lint with ruff." in env.sent()


def cached_prefix(body: dict) -> tuple[int, str]:
    """The tokens the fake API counts up to a request's last cache breakpoint, and the text of
    the block that ends it."""
    blocks = request_blocks(body)
    last = max(i for i, (_block, marked) in enumerate(blocks) if marked)
    tokens = sum(approx_tokens(block) for block, _ in blocks[: last + 1])
    return tokens, blocks[last][0]["block"]["text"]


async def test_a_second_refresh_within_five_minutes_reads_rules_and_document_from_the_cache(env):
    """Two refreshes 4 minutes apart on an unchanged document: the first writes the rules and
    the numbered document to the prompt cache, the second reads them from it and pays full
    price only for its conversations; a third, 6 minutes later, finds the cache expired."""
    env.fake.cache.clock = env.timers.clock
    await env.write(doc(150))
    env.fake.script(*[text("<edits></edits>")] * 3)
    env.say("What time is it?", "Lunch time.")
    assert (await env.refresh()).status is RefreshStatus.UP_TO_DATE
    env.timers.advance(240)
    env.say("Thanks, see you later.", "Bye.")
    second = await env.refresh()
    assert second.status is RefreshStatus.UP_TO_DATE
    env.timers.advance(360)
    env.say("Back again.", "Welcome back.")
    assert (await env.refresh()).status is RefreshStatus.UP_TO_DATE

    first_request, second_request, third_request = env.fake.message_requests
    prefix, last_cached = cached_prefix(second_request.body)
    assert number_lines(doc(150)) in last_cached and "Back again" not in last_cached
    assert prefix > 2000  # the rules and 150 numbered lines
    assert cached_prefix(first_request.body)[0] == prefix  # the same bytes both times
    assert first_request.usage["cache_creation_input_tokens"] == prefix
    assert first_request.usage["cache_read_input_tokens"] == 0
    assert second_request.usage["cache_read_input_tokens"] == prefix
    assert second_request.usage["cache_creation_input_tokens"] == 0
    assert second_request.usage["input_tokens"] < prefix / 10  # the conversations only
    assert second.usage.cache_read_input_tokens == prefix  # what the attempt recorded
    assert third_request.usage["cache_read_input_tokens"] == 0
    assert third_request.usage["cache_creation_input_tokens"] == prefix


async def test_the_upkeep_read_sums_the_attempts_of_each_workspace(env, tmp_path):
    """``memory.upkeep``: per workspace, the attempts of the last 7 and 30 days with their
    model calls (none for an attempt with nothing to fold), tokens and outcomes."""
    other = await other_workspace(env, tmp_path)
    await env.write(doc(5))
    env.say("Use make.", "Ok.")
    env.fake.script(text(doc(5) + "- use make\n"))
    applied = await env.refresh()
    assert (await env.refresh()).status is RefreshStatus.UP_TO_DATE  # nothing unfolded

    upkeep = await env.core.memory.upkeep()
    assert set(upkeep) == {env.workspace_id}
    week = upkeep[env.workspace_id].window(7)
    assert (week.refreshes, week.calls) == (2, 1)
    assert week.usage == applied.usage and week.usage.cache_creation_input_tokens > 0
    assert week.outcomes == ((RefreshStatus.APPLIED, 1), (RefreshStatus.UP_TO_DATE, 1))
    assert upkeep[env.workspace_id].window(30) == week
    assert await env.core.memory.upkeep(other) == {}


async def test_an_automatic_run_without_a_key_is_paused_not_up_to_date(env, monkeypatch):
    """An automatic run that finds no API key when it is due hands its waiter a paused outcome
    (never "up to date"): nothing sent, no attempt recorded, nothing folded, no backoff, and the
    workspace waits for a key."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    env.say("We lint with ruff.", "Ok.")
    before = await env.snapshot()
    refresh = env.core.refresh
    refresh.enqueue(env.workspace_id)  # a turn completed; the key is checked when it is due
    outcomes = await refresh.queue.flush()
    assert [(o.status, o.missing_key) for o in outcomes] == [(RefreshStatus.PAUSED, True)]
    assert env.fake.message_requests == []
    assert await env.attempts() == []
    assert await env.snapshot() == before
    assert refresh.queue.failures(env.workspace_id) == 0
    assert refresh.paused(env.workspace_id)
