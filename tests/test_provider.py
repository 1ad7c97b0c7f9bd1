"""Provider against the fake Messages API with the real SDK: streaming, errors translated into
Yak's own with a sentence a user can act on, cut streams refused, the key kept private."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest

from tests.support.fake_api import (
    count_request_tokens,
    cut,
    error,
    hang,
    stream_error,
    text,
    tool_use,
)
from yak.domain import TokenUsage
from yak.errors import (
    AuthenticationFailed,
    IncompleteResponse,
    MissingApiKey,
    Overloaded,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
)
from yak.llm import credentials
from yak.llm.errors import status_error
from yak.llm.provider import Provider, TextDelta, ToolUseStarted

MESSAGES = [{"role": "user", "content": "hello"}]


def run_stream(provider: Provider, **kwargs):
    events: list = []

    async def go():
        try:
            return await provider.stream(
                model="claude-test",
                system=kwargs.pop("system", "sys"),
                messages=MESSAGES,
                on_event=events.append,
                **kwargs,
            )
        finally:
            await provider.aclose()

    return asyncio.run(go()), events


def test_stream_delivers_deltas_and_a_completion(fake_api):
    """Text arrives as deltas in order; the completion carries text, usage, model, stop reason;
    the request carried the system prompt, the tools and the key as a bearer token."""
    fake_api.script(text("One two three.", usage=(42, 7)))
    tools = [
        {
            "name": "read_file",
            "description": "Read.",
            "input_schema": {"type": "object", "properties": {}},
        }
    ]
    completion, events = run_stream(Provider(max_retries=0), tools=tools, system="Be brief.")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "One two three."
    assert len(events) == 3
    assert completion.text == "One two three."
    assert completion.content == ({"type": "text", "text": "One two three."},)
    assert completion.stop_reason == "end_turn"
    assert completion.model == "claude-test"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (42, 7)
    body = fake_api.message_requests[0].body
    assert body["system"] == "Be brief." and body["tools"] == tools and body["stream"] is True
    assert fake_api.message_requests[0].headers["authorization"] == "Bearer test-key"


def test_system_blocks_and_breakpoints_are_sent_as_given_and_cache_usage_is_read(fake_api):
    """System text blocks and ``cache_control`` markers reach the API unchanged; the
    completion's usage carries the cache writes and reads the API reported (streamed in
    ``message_start``)."""
    fake_api.script(text("Cached.", usage=(3, 4, 1200, 800)))
    system = [
        {"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Session."},
    ]
    completion, _events = run_stream(Provider(max_retries=0), system=system)
    assert fake_api.message_requests[0].body["system"] == system
    assert completion.usage == TokenUsage(
        input_tokens=3,
        output_tokens=4,
        cache_creation_input_tokens=1200,
        cache_read_input_tokens=800,
    )


def test_tool_use_reply_is_reported_and_completed(fake_api):
    """A tool call is announced when it starts and its full input is in the completion."""
    fake_api.script(
        tool_use("grep", {"pattern": "TODO", "path": "src"}, id="toolu_9", text="Searching.")
    )
    completion, events = run_stream(Provider(max_retries=0))
    assert ToolUseStarted(id="toolu_9", name="grep") in events
    assert completion.stop_reason == "tool_use"
    assert completion.content[1] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "grep",
        "input": {"pattern": "TODO", "path": "src"},
    }


def test_complete_and_check(fake_api):
    """``complete`` sends no tools; ``check`` answers with a one-line success sentence."""
    fake_api.script(text("rewritten"), text("ok"))
    provider = Provider(max_retries=0)

    async def go():
        try:
            done = await provider.complete(model="claude-mem", system="s", messages=MESSAGES)
            return done, await provider.check(model="claude-test")
        finally:
            await provider.aclose()

    done, message = asyncio.run(go())
    assert done.text == "rewritten"
    assert "tools" not in fake_api.message_requests[0].body
    assert message == f"Connected to {fake_api.url}: model claude-test answered."
    assert "system" not in fake_api.message_requests[1].body


@pytest.mark.parametrize(
    ("reply", "exc_type", "reason", "sentence"),
    [
        (
            error(401),
            AuthenticationFailed,
            "auth",
            (
                "The server at {host} rejected the API key (401). Check ANTHROPIC_API_KEY or the "
                "key in Settings › Provider."
            ),
        ),
        (error(429), RateLimited, "rate_limited", "rate limiting"),
        (error(529), Overloaded, "overloaded", "overloaded right now (529)"),
        (error(500), Overloaded, "server_error", "server error (500)"),
        (error(400, message="messages: bad"), ProviderError, "bad_request", "(400): messages: bad"),
        (stream_error(error_type="overloaded_error"), Overloaded, "overloaded", "overloaded"),
    ],
)
def test_http_errors_are_translated(fake_api, reply, exc_type, reason, sentence):
    """Each provider fault leaves as its YakError with one actionable sentence, never the key."""
    fake_api.script(reply)
    with pytest.raises(exc_type) as info:
        run_stream(Provider(max_retries=0))
    assert info.value.reason == reason
    host = fake_api.url.partition("://")[2].rstrip("/")
    assert sentence.format(host=host) in str(info.value)
    assert "Anthropic" not in str(info.value)  # a local server is not blamed on Anthropic
    assert "test-key" not in str(info.value)
    assert info.value.exit_code == 4


@pytest.mark.parametrize(
    ("base_url", "named"),
    [
        ("https://api.anthropic.com", "Anthropic"),
        ("https://api.anthropic.com/", "Anthropic"),
        ("http://localhost:8080/v1", "The server at localhost:8080"),
        ("https://user:secret@proxy.example.com", "The server at proxy.example.com"),
    ],
)
def test_status_errors_name_the_server_that_answered(base_url, named):
    """Anthropic's own API is called Anthropic; any other base URL is named by its host (never
    with a password), for every status sentence."""
    for status in (401, 429, 529, 500, 400):
        sentence = str(status_error(status, None, base_url=base_url))
        assert sentence.startswith(f"{named} "), sentence
        assert "secret" not in sentence


def test_retries_are_the_sdks_and_400_is_not_retried(fake_api):
    """With max_retries=1, a 500 then a good reply succeeds (two requests); a 400 is final."""
    fake_api.script(error(500, retry_after_ms=1), text("recovered"))
    completion, _ = run_stream(Provider(max_retries=1))
    assert completion.text == "recovered"
    assert len(fake_api.message_requests) == 2

    fake_api.script(error(400), text("never sent"))
    with pytest.raises(ProviderError):
        run_stream(Provider(max_retries=1))
    assert len(fake_api.message_requests) == 3
    assert fake_api.pending == 1


def test_rate_limit_persisting_through_retries(fake_api):
    """429 on every attempt ends as RateLimited after max_retries+1 requests."""
    fake_api.script(error(429, retry_after_ms=1), error(429, retry_after_ms=1))
    with pytest.raises(RateLimited):
        run_stream(Provider(max_retries=1))
    assert len(fake_api.message_requests) == 2


def test_hang_is_a_timeout(fake_api):
    """No answer within the timeout: ProviderUnavailable with reason ``timeout``."""
    fake_api.script(hang())
    with pytest.raises(ProviderUnavailable) as info:
        run_stream(Provider(max_retries=0, timeout_s=0.5))
    assert info.value.reason == "timeout"
    assert str(info.value).startswith(
        "The model did not start answering within 0.5 s (retries included); try again, or "
        "allow more time (--timeout"
    )


def test_the_time_limit_bounds_the_sdks_retries_too(fake_api):
    """A provider that never answers: the time limit covers the SDK's retries, so the request
    ends when it runs out instead of being sent again (three hangs scripted, one taken)."""
    fake_api.script(hang(), hang(), hang())
    with pytest.raises(ProviderUnavailable) as info:
        run_stream(Provider(max_retries=2, timeout_s=0.5))
    assert info.value.reason == "timeout" and "(retries included)" in str(info.value)
    assert len(fake_api.message_requests) == 1


def test_stall_mid_stream_is_a_timeout(fake_api):
    """A stream that stops sending is a timeout even though the SDK does not wrap it."""
    fake_api.script(hang(after_deltas=1))
    with pytest.raises(ProviderUnavailable) as info:
        run_stream(Provider(max_retries=0, timeout_s=0.5))
    assert info.value.reason == "timeout"


def test_cut_stream_is_incomplete_although_the_sdk_returns_normally(fake_api):
    """A stream closed before message_stop raises IncompleteResponse (the deltas already seen
    are not a reply); the same script without the cut succeeds."""
    fake_api.script(cut("Partial answer here", after_deltas=2))
    with pytest.raises(IncompleteResponse) as info:
        run_stream(Provider(max_retries=0))
    assert "nothing from it was kept" in str(info.value)

    fake_api.script(text("Partial answer here"))
    completion, _ = run_stream(Provider(max_retries=0))
    assert completion.text == "Partial answer here"


def test_refused_connection_is_unavailable():
    """Nothing listening at the base URL: ProviderUnavailable naming the URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ProviderUnavailable) as info:
        run_stream(Provider(api_key="k", base_url=url, max_retries=0, timeout_s=5))
    assert info.value.reason == "unreachable"
    assert url in str(info.value)


def test_missing_key_raises_before_any_request(fake_api, monkeypatch, memory_keyring):
    """No env key and an empty keyring: MissingApiKey and the server sees nothing."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingApiKey) as info:
        run_stream(Provider(max_retries=0))
    assert "Set ANTHROPIC_API_KEY or add a key in Settings › Provider" in str(info.value)
    assert fake_api.requests == []


def test_keyring_key_is_used_when_the_environment_has_none(fake_api, monkeypatch, memory_keyring):
    """The key stored from Settings authenticates the request."""
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    credentials.set_api_key("sk-from-keyring")
    fake_api.script(text("hi"))
    run_stream(Provider(max_retries=0))
    assert fake_api.requests[0].headers["authorization"] == "Bearer sk-from-keyring"


def test_the_key_never_reaches_the_logs(fake_api, caplog):
    """Even at DEBUG, through a retry and a failure, no log record contains the key."""
    caplog.set_level(logging.DEBUG)
    fake_api.script(error(500, retry_after_ms=1), error(401))
    with pytest.raises(AuthenticationFailed):
        run_stream(Provider(max_retries=1))
    assert caplog.records  # the SDK and the provider did log
    assert "test-key" not in caplog.text


def test_programming_errors_in_the_callback_are_not_disguised(fake_api):
    """A bug in on_event crashes as itself, not as a provider error."""
    fake_api.script(text("boom"))
    provider = Provider(max_retries=0)

    def broken(_event):
        raise KeyError("bug")

    async def go():
        try:
            await provider.stream(model="m", system="", messages=MESSAGES, on_event=broken)
        finally:
            await provider.aclose()

    with pytest.raises(KeyError):
        asyncio.run(go())


def test_a_credential_in_the_base_url_is_never_in_the_message():
    """A base URL carrying a user name and password (``http://user:pw@host``): the
    "could not reach" sentence names the host without them, so they reach neither the screen
    nor the failure note stored with the conversation."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://user:BasePw-9@127.0.0.1:{port}"
    with pytest.raises(ProviderUnavailable) as info:
        run_stream(Provider(api_key="k", base_url=url, max_retries=0, timeout_s=5))
    assert str(info.value).startswith(f"Could not reach http://127.0.0.1:{port}; check")
    assert "BasePw-9" not in str(info.value) and "user" not in str(info.value)


# --- counting tokens ---------------------------------------------------------------------------


def run_count(provider: Provider, **kwargs):
    async def go():
        try:
            return await provider.count_tokens(
                model="claude-test", system=kwargs.pop("system", "sys"), messages=MESSAGES, **kwargs
            )
        finally:
            await provider.aclose()

    return asyncio.run(go())


def test_count_tokens_asks_the_endpoint_and_returns_its_count(fake_api):
    """``count_tokens`` posts the request (system, messages, tools as ``stream`` would send
    them, no ``max_tokens``) to ``/v1/messages/count_tokens`` and returns the endpoint's count;
    no reply is generated."""
    tools = [{"name": "t", "description": "T.", "input_schema": {"type": "object"}}]
    counted = run_count(Provider(max_retries=0), system="Be brief.", tools=tools)
    (request,) = fake_api.requests
    assert request.path == "/v1/messages/count_tokens"
    assert request.body == {
        "model": "claude-test",
        "system": "Be brief.",
        "messages": MESSAGES,
        "tools": tools,
    }
    assert counted == count_request_tokens(request.body) and counted > 0
    assert fake_api.message_requests == []


def test_count_tokens_is_none_where_the_endpoint_cannot_count(fake_api):
    """An endpoint without the route (404) cannot count: ``None``, not an error."""
    fake_api.counts_tokens = False
    assert run_count(Provider(max_retries=0)) is None
    assert len(fake_api.count_requests) == 1


def test_count_tokens_translates_other_failures():
    """Nothing listening: the same ProviderUnavailable sentence as a request."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(ProviderUnavailable) as info:
        run_count(Provider(api_key="k", base_url=url, max_retries=0, timeout_s=5))
    assert info.value.reason == "unreachable" and url in str(info.value)
