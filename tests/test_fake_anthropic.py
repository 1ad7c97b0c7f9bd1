"""The fake Messages API works with the real anthropic SDK: streaming, JSON, tools, errors."""

from __future__ import annotations

import asyncio
import threading

import anthropic
import httpx2
import pytest

from tests.support.fake_api import (
    approx_tokens,
    cut,
    error,
    hang,
    message,
    request_blocks,
    stream_error,
    text,
    tool_use,
)


def client(**kwargs) -> anthropic.AsyncAnthropic:
    """An SDK client configured only by the environment the fixture set."""
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("timeout", 10)
    return anthropic.AsyncAnthropic(**kwargs)


async def stream_events(**create_kwargs) -> list:
    async with client() as c:
        stream = await c.messages.create(stream=True, **create_kwargs)
        return [event async for event in stream]


BASIC = {"model": "claude-test", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}


def test_streamed_text_reaches_the_sdk_with_usage_and_message_stop(fake_api):
    """A scripted text reply streams as SSE: the SDK assembles the text, usage and stop."""
    fake_api.script(text("Hello there, friend."))

    async def run():
        async with client() as c, c.messages.stream(**BASIC) as stream:
            deltas = [t async for t in stream.text_stream]
            return deltas, await stream.get_final_message()

    deltas, final = asyncio.run(run())
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, friend."
    assert final.content[0].text == "Hello there, friend."
    assert final.stop_reason == "end_turn"
    assert final.usage.input_tokens == 10 and final.usage.output_tokens == 5
    request = fake_api.message_requests[0]
    assert request.body["stream"] is True
    assert request.headers["authorization"] == "Bearer test-key"
    assert fake_api.pending == 0


def test_plain_json_reply_when_not_streaming(fake_api):
    """Without ``stream`` the same script item answers as one JSON message."""
    fake_api.script(text("Plain."))
    result = asyncio.run(_create())
    assert result.content[0].text == "Plain."
    assert "stream" not in fake_api.requests[0].body


async def _create(**kwargs):
    async with client(**kwargs) as c:
        return await c.messages.create(**BASIC)


def test_tool_use_streams_its_input_json(fake_api):
    """A tool_use reply arrives with its input assembled from input_json_delta events."""
    fake_api.script(tool_use("read_file", {"path": "src/a.py"}, text="Let me look."))

    async def run():
        async with client() as c, c.messages.stream(**BASIC) as stream:
            return await stream.get_final_message()

    final = asyncio.run(run())
    assert final.stop_reason == "tool_use"
    assert final.content[0].text == "Let me look."
    assert final.content[1].name == "read_file"
    assert final.content[1].input == {"path": "src/a.py"}
    assert final.content[1].id.startswith("toolu_")


def test_several_blocks_in_one_message(fake_api):
    """``message`` scripts several tool calls in one reply."""
    fake_api.script(
        message(
            [
                {"type": "tool_use", "name": "glob", "input": {"pattern": "*"}},
                {"type": "tool_use", "name": "grep", "input": {"pattern": "x"}},
            ],
            stop_reason="tool_use",
        )
    )
    result = asyncio.run(_create())
    assert [b.name for b in result.content] == ["glob", "grep"]
    assert result.content[0].id != result.content[1].id


@pytest.mark.parametrize(
    ("status", "exc_type"),
    [
        (401, anthropic.AuthenticationError),
        (429, anthropic.RateLimitError),
        (529, anthropic.InternalServerError),
        (500, anthropic.InternalServerError),
        (400, anthropic.BadRequestError),
    ],
)
def test_http_errors_become_sdk_status_errors(fake_api, status, exc_type):
    """Each scripted HTTP error reaches the SDK as its status error, with the JSON body."""
    fake_api.script(error(status, message="nope"))
    with pytest.raises(exc_type) as info:
        asyncio.run(_create())
    assert info.value.status_code == status
    assert "nope" in str(info.value)


def test_retries_take_the_next_scripted_reply_and_honour_retry_after(fake_api):
    """The SDK retries a 429 (retry-after-ms honoured) and a 529, each taking the next reply."""
    fake_api.script(error(429, retry_after_ms=10), error(529, retry_after_ms=10), text("ok"))
    result = asyncio.run(_create(max_retries=2))
    assert result.content[0].text == "ok"
    assert len(fake_api.message_requests) == 3


def test_hang_times_out_the_client_and_does_not_block_shutdown(fake_api):
    """A hang is ended by the client's timeout; the fixture still stops promptly."""
    fake_api.script(hang())
    with pytest.raises(anthropic.APITimeoutError):
        asyncio.run(_create(timeout=0.5))


def test_stream_stall_after_some_deltas(fake_api):
    """``hang(after_deltas=1)`` starts the stream then stalls until the client's read timeout.

    Measured: a timeout after the headers arrived surfaces as the transport's
    ``httpx2.ReadTimeout`` in SDKs before 2.17, and wrapped as ``anthropic.APITimeoutError``
    from 2.17 on (its body reads are wrapped); the provider translates both."""
    fake_api.script(hang(after_deltas=1))

    async def run():
        got = []
        async with client(timeout=0.5) as c:
            stream = await c.messages.create(stream=True, **BASIC)
            async for event in stream:
                got.append(event.type)
        return got

    with pytest.raises((httpx2.ReadTimeout, anthropic.APITimeoutError)):
        asyncio.run(run())


def test_cut_stream_ends_without_message_stop(fake_api):
    """A cut stream delivers a start and some deltas, then ends with no message_stop."""
    fake_api.script(cut("one two three four", after_deltas=2))
    events = asyncio.run(stream_events(**BASIC))
    types = [e.type for e in events]
    assert types[0] == "message_start"
    assert types.count("content_block_delta") == 2
    assert "message_stop" not in types and "message_delta" not in types


def test_cut_json_reply_is_a_broken_body(fake_api):
    """Without streaming, a cut is a body shorter than its Content-Length: a connection error."""
    fake_api.script(cut())
    with pytest.raises(anthropic.APIConnectionError):
        asyncio.run(_create())


def test_error_event_mid_stream(fake_api):
    """``stream_error`` sends ``event: error`` after a delta; the SDK raises a status error."""
    fake_api.script(stream_error(error_type="overloaded_error", after_deltas=1))
    with pytest.raises(anthropic.APIStatusError) as info:
        asyncio.run(stream_events(**BASIC))
    assert "overloaded_error" in str(info.value)


def test_callable_script_items_and_default_responder(fake_api):
    """A queued callable answers once from the request body; ``respond_with`` answers the rest;
    an exhausted script without a responder answers 400 so the test fails fast."""
    fake_api.script(lambda body: f"echo {body['messages'][0]['content']}")
    fake_api.respond_with(lambda body: text(f"model={body['model']}"))
    first = asyncio.run(_create())
    second = asyncio.run(_create())
    assert first.content[0].text == "echo hi"
    assert second.content[0].text == "model=claude-test"
    fake_api.respond_with(None)
    with pytest.raises(anthropic.BadRequestError, match="no scripted reply left"):
        asyncio.run(_create())


def test_gate_pauses_a_stream_mid_reply(fake_api):
    """A gated text reply sends ``pause_after`` deltas, waits for the test, then finishes."""
    gate = threading.Event()
    fake_api.script(text("a b c d", gate=gate, pause_after=2))

    async def run():
        seen: list[str] = []
        async with client() as c, c.messages.stream(**BASIC) as stream:
            async for delta in stream.text_stream:
                seen.append(delta)
                if len(seen) == 2:
                    assert not gate.is_set()
                    gate.set()
            final = await stream.get_final_message()
        return seen, final

    seen, final = asyncio.run(run())
    assert "".join(seen) == "a b c d"
    assert final.stop_reason == "end_turn"


# --- the prompt cache ---------------------------------------------------------------------------
MARK = {"type": "ephemeral"}


def cached_request(*, system: str = "Static rules. " * 40, turns: int = 1) -> dict:
    """A request marking the tool, the first system block and the last message's last block,
    with ``turns`` user questions (and the answers between them)."""
    messages: list[dict] = []
    for n in range(turns):
        if n:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": f"a{n}"}]})
        messages.append({"role": "user", "content": [{"type": "text", "text": f"question {n}"}]})
    messages[-1]["content"][-1]["cache_control"] = MARK
    return {
        "model": "claude-test",
        "max_tokens": 100,
        "tools": [
            {
                "name": "read_file",
                "description": "Read a file. " * 30,
                "input_schema": {"type": "object", "properties": {}},
                "cache_control": MARK,
            }
        ],
        "system": [
            {"type": "text", "text": system, "cache_control": MARK},
            {"type": "text", "text": "Unmarked facts."},
        ],
        "messages": messages,
    }


def tokens_through(body: dict, count: int) -> int:
    """The fake's token count of a request's first ``count`` blocks (tools, system, messages)."""
    return sum(approx_tokens(block) for block, _marked in request_blocks(body)[:count])


def sent(fake_api, body: dict, *, stream: bool = False) -> tuple[int, int, int]:
    """Send ``body`` once (a scripted "ok"), and return (input, cache write, cache read) as the
    SDK parsed them from the fake's reply."""
    fake_api.script(text("ok"))

    async def run():
        async with client() as c:
            if stream:
                async with c.messages.stream(**body) as s:
                    return (await s.get_final_message()).usage
            return await c.messages.create(**body)

    reply = asyncio.run(run())
    usage = reply if stream else reply.usage
    return (
        usage.input_tokens,
        usage.cache_creation_input_tokens,
        usage.cache_read_input_tokens,
    )


def test_a_prefix_is_written_once_then_read(fake_api):
    """The first request writes everything up to its last breakpoint and pays the rest as
    input; the same request again reads that prefix from the cache (streamed and not)."""
    body = cached_request()
    total = tokens_through(body, 4)
    first = sent(fake_api, body)
    assert first == (0, total, 0)
    assert sent(fake_api, body, stream=True) == (0, 0, total)
    assert fake_api.message_requests[1].usage == {
        "input_tokens": 0,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": total,
    }


def test_one_changed_byte_misses_everything_after_it(fake_api):
    """A system block one character different reads only the tools (their breakpoint) from the
    cache and writes the rest again."""
    sent(fake_api, cached_request())
    changed = cached_request(system="Static rules! " + "Static rules. " * 39)
    tools = tokens_through(changed, 1)
    assert sent(fake_api, changed) == (0, tokens_through(changed, 4) - tools, tools)


def test_a_growing_conversation_reads_the_previous_turn(fake_api):
    """The incremental pattern: the breakpoint moves to the new last message, and the request
    reads the previous one's prefix (found within the 20-block lookback) and writes the new
    answer and question."""
    sent(fake_api, cached_request(turns=1))
    grown = cached_request(turns=2)
    before = tokens_through(grown, 4)  # tool, two system blocks, the first question
    assert sent(fake_api, grown) == (0, tokens_through(grown, 6) - before, before)


def test_the_model_is_part_of_the_prefix(fake_api):
    """The cache is per model: the same request to another model reads nothing."""
    sent(fake_api, cached_request())
    other = {**cached_request(), "model": "claude-other"}
    assert sent(fake_api, other)[2] == 0


def test_cached_prefixes_live_five_minutes_from_their_last_use(fake_api):
    """With an injected clock: a read within five minutes restarts the entry's time to live;
    five minutes without a use and the prefix is written again."""
    now = [0.0]
    fake_api.cache.clock = lambda: now[0]
    body = cached_request()
    total = tokens_through(body, 4)
    assert sent(fake_api, body) == (0, total, 0)
    now[0] = 299.0
    assert sent(fake_api, body) == (0, 0, total)
    now[0] = 598.0
    assert sent(fake_api, body) == (0, 0, total)
    now[0] = 898.5
    assert sent(fake_api, body) == (0, total, 0)


def test_a_prefix_under_the_minimum_is_not_cached(fake_api):
    """Below ``min_tokens`` nothing is written or read: every token is plain input."""
    fake_api.cache.min_tokens = 100_000
    body = cached_request()
    total = tokens_through(body, 4)
    assert sent(fake_api, body) == (total, 0, 0)
    assert sent(fake_api, body) == (total, 0, 0)


def test_more_than_four_breakpoints_are_refused_like_the_api(fake_api):
    """Five ``cache_control`` blocks: 400 ``invalid_request_error`` and no scripted reply is
    taken."""
    body = cached_request(turns=2)
    body["system"][1]["cache_control"] = MARK
    for turn in body["messages"][:2]:
        turn["content"][0]["cache_control"] = MARK
    fake_api.script(text("never sent"))

    async def run():
        async with client() as c:
            return await c.messages.create(**body)

    with pytest.raises(anthropic.BadRequestError, match="maximum of 4 blocks with cache_control"):
        asyncio.run(run())
    assert fake_api.pending == 1


def test_scripted_usage_is_reported_as_is_and_the_cache_still_fills(fake_api):
    """``usage=(in, out, write, read)`` reaches the SDK unchanged; the request still fills the
    cache, so the next one reads it; a request without breakpoints reports 10 input tokens."""
    body = cached_request()
    fake_api.script(text("ok", usage=(7, 3, 11, 13)))

    async def run(request: dict):
        async with client() as c, c.messages.stream(**request) as s:
            return (await s.get_final_message()).usage

    usage = asyncio.run(run(body))
    assert (usage.input_tokens, usage.output_tokens) == (7, 3)
    assert (usage.cache_creation_input_tokens, usage.cache_read_input_tokens) == (11, 13)
    assert sent(fake_api, body)[2] == tokens_through(body, 4)
    assert sent(fake_api, BASIC) == (10, 0, 0)
