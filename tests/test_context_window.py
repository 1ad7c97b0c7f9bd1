"""A refresh request is checked against the memory model's context window before it is sent
("Context" in docs/refresh.md): one that cannot fit is refused with a sentence, never sent, and
its conversations stay unfolded; one that fits is sent as before. End to end through the core
(``open_core``), the real ``Provider`` against the scripted fake Messages API, whose
``/v1/messages/count_tokens`` counts or answers 404; and the window, the estimate and the
setting on their own."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pytest

from tests.support import project_folder, say
from tests.support.builders import seed_document
from tests.support.fake_api import FakeAnthropic, count_request_tokens, text
from yak.config import MAX_CONTEXT_WINDOW, Settings, load_settings
from yak.core import Core
from yak.domain import RefreshStatus
from yak.errors import ProviderUnavailable
from yak.memory.judging.pipeline import REWRITE_MAX_TOKENS
from yak.refresh.context import (
    ANTHROPIC_CONTEXT_WINDOW,
    RequestSize,
    check_fit,
    context_window,
    estimate_tokens,
    refusal,
    request_size,
)

pytestmark = pytest.mark.databases

DOCUMENT = "".join(f"- fact {i:03d}: the project keeps this fact\n" for i in range(10))
NEW = DOCUMENT + "- lint with ruff\n"
TOO_SMALL = REWRITE_MAX_TOKENS + 100  # the reply's reserve and 100 tokens: no request fits
ROOMY = 100_000
# Near the limit: the reply's reserve and 2,000 tokens. The request (about 1,400 tokens by the
# estimate) is counted there, since twice its estimate does not fit, and the count fits.
NEAR = REWRITE_MAX_TOKENS + 2_000


@dataclass
class Env:
    core: Core
    workspace_id: str
    fake: FakeAnthropic

    def configure(self, *, window: int, model: str = "claude-memory-test") -> None:
        """The memory model and its context window, as Settings › Provider saves them."""
        settings = self.core.settings.current()
        self.core.settings.save(replace(settings, memory_model=model, memory_context_window=window))

    async def snapshot(self) -> tuple[bytes, int, int, list[str]]:
        """The document's bytes, its version, the history's length, the unfolded messages."""
        document = await self.core.memory.read(self.workspace_id)
        history = await self.core.memory.history(self.workspace_id)
        unfolded = self.core.chat.conversations.unfolded_messages(self.workspace_id)
        return document.content.encode(), document.version, len(history), [m.id for m in unfolded]


@pytest.fixture
def env(core, loop, tmp_path, fake_api):
    """A workspace with a ten-line document and one unfolded conversation."""
    folder = project_folder(tmp_path, "proj")
    workspace = loop.run_until_complete(core.workspaces.open(str(folder)))
    loop.run_until_complete(seed_document(core, workspace.id, DOCUMENT))
    say(core, workspace.id, "We decided to lint with ruff.", "Noted: ruff it is.")
    return Env(core=core, workspace_id=workspace.id, fake=fake_api)


def expected_refusal(tokens: int, window: int, *, about: bool = False) -> str:
    return (
        f"the refresh request is {'about ' if about else ''}{tokens:,} tokens, over the memory "
        f"model's context window of {window:,} tokens (with {REWRITE_MAX_TOKENS:,} kept for the "
        "reply); nothing was sent, and its conversations wait for the next refresh"
    )


# --- end to end --------------------------------------------------------------------------------


async def test_a_request_over_the_window_is_not_sent_and_its_conversations_wait(env):
    """Over a small configured window: the endpoint counts the request, nothing goes to
    ``/v1/messages``, the refresh fails with the sentence naming the count, the window and the
    reserve, the document is byte-identical and the messages stay unfolded; a later refresh
    with a window large enough sends them and folds them."""
    env.configure(window=TOO_SMALL)
    before = await env.snapshot()
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert env.fake.message_requests == []
    (counted,) = env.fake.count_requests
    tokens = count_request_tokens(counted.body)
    assert outcome.status is RefreshStatus.FAILED
    assert outcome.reason == expected_refusal(tokens, TOO_SMALL)
    assert "context_window" in outcome.flags
    attempt = await env.core.memory.last_attempt(env.workspace_id)
    assert attempt.status is RefreshStatus.FAILED and attempt.reason == outcome.reason
    assert await env.snapshot() == before
    assert before[3]  # the conversation is still there to fold

    env.configure(window=ROOMY)
    env.fake.script(text(NEW))
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert outcome.status is RefreshStatus.APPLIED
    content, _version, _history, unfolded = await env.snapshot()
    assert content == NEW.encode() and unfolded == []


async def test_a_request_far_within_the_window_is_sent_without_a_count(env):
    """Twice its estimate fits beside the reply: no count round trip, the request is sent and
    its reply applied."""
    env.configure(window=ROOMY)
    env.fake.script(text(NEW))
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert outcome.status is RefreshStatus.APPLIED
    assert env.fake.count_requests == [] and len(env.fake.message_requests) == 1


async def test_a_request_that_fits_is_counted_as_sent_and_applied(env):
    """Near the window: the request counted is the one sent (same model, system and
    messages), and its reply is applied."""
    env.configure(window=NEAR)
    env.fake.script(text(NEW))
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert outcome.status is RefreshStatus.APPLIED
    assert "context_window" not in outcome.flags
    (counted,) = env.fake.count_requests
    (sent,) = env.fake.message_requests
    for key in ("model", "system", "messages"):
        assert counted.body[key] == sent.body[key]
    content, _version, _history, unfolded = await env.snapshot()
    assert content == NEW.encode() and unfolded == []


async def test_an_endpoint_that_cannot_count_is_checked_with_the_estimate(env):
    """The endpoint answers 404 to counting: the request is estimated (characters / 3, rounded
    up), and a request over the window is refused with "about" that many tokens."""
    env.fake.counts_tokens = False
    env.configure(window=TOO_SMALL)
    before = await env.snapshot()
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert env.fake.message_requests == []
    (asked,) = env.fake.count_requests
    tokens = estimate_tokens(asked.body["system"], asked.body["messages"])
    assert outcome.status is RefreshStatus.FAILED
    assert outcome.reason == expected_refusal(tokens, TOO_SMALL, about=True)
    assert await env.snapshot() == before


async def test_an_unknown_window_is_not_checked(env):
    """A model that is not Anthropic's with no window set: nothing is counted, the request is
    sent as before."""
    env.configure(window=0, model="qwen2.5-0.5b-instruct")
    env.fake.script(text(NEW))
    outcome = await env.core.refresh.refresh_now(env.workspace_id)
    assert outcome.status is RefreshStatus.APPLIED
    assert env.fake.count_requests == [] and len(env.fake.message_requests) == 1


# --- the window, the estimate, the count -------------------------------------------------------


def test_the_window_is_the_setting_else_anthropics_else_unknown():
    """A set window wins; a ``claude-`` model has Anthropic's 200,000 tokens; any other model
    has no known window."""
    assert context_window("claude-haiku-5-5") == ANTHROPIC_CONTEXT_WINDOW == 200_000
    assert context_window("claude-haiku-5-5", configured=32_768) == 32_768
    assert context_window("llama-3.2-3b", configured=32_768) == 32_768
    assert context_window("llama-3.2-3b") is None


def test_the_estimate_is_characters_over_three_rounded_up():
    """Text of the system prompt (string or blocks) and of every message, / 3, rounded up."""
    system = [{"type": "text", "text": "a" * 10, "cache_control": {"type": "ephemeral"}}]
    messages = [
        {"role": "user", "content": "b" * 20},
        {"role": "user", "content": [{"type": "text", "text": "c" * 1}]},
    ]
    assert estimate_tokens(system, messages) == math.ceil(31 / 3) == 11
    assert estimate_tokens("x" * 30_000, []) == 10_000
    assert estimate_tokens("", []) == 0


def test_the_refusal_keeps_the_reply_reserve_free():
    """A request fits while its tokens and the reserve fit the window; an unknown window always
    fits; an estimated size is "about"."""
    fits = RequestSize(24_576, counted=True)
    assert refusal(fits, window=32_768, reserve=8_192) is None
    over = RequestSize(24_577, counted=True)
    assert refusal(over, window=32_768, reserve=8_192) == (
        "the refresh request is 24,577 tokens, over the memory model's context window of "
        "32,768 tokens (with 8,192 kept for the reply); nothing was sent, and its conversations "
        "wait for the next refresh"
    )
    assert refusal(RequestSize(10**9, counted=True), window=None, reserve=8_192) is None
    estimated = refusal(RequestSize(41_200, counted=False), window=32_768, reserve=8_192)
    assert estimated is not None and estimated.startswith("the refresh request is about 41,200")


class _Client:
    """A model client whose count answers ``answer`` (or raises it)."""

    def __init__(self, answer: int | None | Exception) -> None:
        self.answer = answer
        self.counted = 0

    async def count_tokens(self, **_request: object) -> int | None:
        self.counted += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


async def test_the_size_is_the_count_else_the_estimate():
    """The endpoint's count when it has one; ``None`` (no counting there) or a failed count
    (logged) falls back to the estimate."""
    request = {"model": "m", "system": "s" * 9, "messages": [{"role": "user", "content": "u"}]}
    assert await request_size(_Client(1234), **request) == RequestSize(1234, counted=True)
    assert await request_size(_Client(None), **request) == RequestSize(4, counted=False)
    down = ProviderUnavailable("Could not reach the server.", reason="unreachable")
    assert await request_size(_Client(down), **request) == RequestSize(4, counted=False)


async def test_an_unknown_window_asks_nothing():
    """With no known window the client is not asked to count."""
    client = _Client(10**9)
    settings = Settings(memory_model="local")
    assert await check_fit(client, settings=settings, system="s", messages=[], reserve=1) is None
    assert client.counted == 0


# --- the setting -------------------------------------------------------------------------------


def test_the_window_setting_comes_from_the_file_or_the_environment_and_is_bounded(tmp_path):
    """``memory_context_window`` in ``settings.json``, overridden by
    ``YAK_MEMORY_CONTEXT_WINDOW``; a negative one is 0 (not set), a huge one is clamped, a
    malformed one ignored."""
    assert load_settings(tmp_path, env={}).memory_context_window == 0
    (tmp_path / "settings.json").write_text('{"memory_context_window": 32768}')
    assert load_settings(tmp_path, env={}).memory_context_window == 32_768
    env = {"YAK_MEMORY_CONTEXT_WINDOW": "8192"}
    assert load_settings(tmp_path, env=env).memory_context_window == 8_192
    env = {"YAK_MEMORY_CONTEXT_WINDOW": "-5"}
    assert load_settings(tmp_path, env=env).memory_context_window == 0
    env = {"YAK_MEMORY_CONTEXT_WINDOW": str(10**12)}
    assert load_settings(tmp_path, env=env).memory_context_window == MAX_CONTEXT_WINDOW
    env = {"YAK_MEMORY_CONTEXT_WINDOW": "32k"}
    assert load_settings(tmp_path, env=env).memory_context_window == 32_768
