"""The light adapter (``yak/llm/light.py``) against the SDK adapter, both on the fake API: the
same request bytes, the same replies and events, the same error sentences, the same retries
(the statuses, the waits, the attempts' count); and the choice between them (a turn started
while the SDK is importing goes the light way)."""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from tests.support.fake_api import (
    MALFORMED_FAULTS,
    cut,
    error,
    hang,
    malformed,
    message,
    stream_error,
    text,
    tool_use,
)
from yak.errors import ProviderError
from yak.llm import light as light_module
from yak.llm.light import LightClient
from yak.llm.provider import Provider

SYSTEM = [
    {"type": "text", "text": "Static instructions.", "cache_control": {"type": "ephemeral"}},
    {
        "type": "text",
        "text": 'Session: café, 日本, \u2028 "quoted" \\ end',
        "cache_control": {"type": "ephemeral"},
    },
]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
        "cache_control": {"type": "ephemeral"},
    }
]
MESSAGES = [
    {"role": "user", "content": [{"type": "text", "text": "Hi — what is in a.txt? ✓"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}}
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": "x = 1.5e3\n",
                "cache_control": {"type": "ephemeral"},
            }
        ],
    },
]


HEADERS = ("authorization", "anthropic-version", "content-type", "x-stainless-retry-count")
"""The request headers both adapters send alike (the key, the API version, the body's type and
which attempt this is)."""


async def _run(client, **request):
    events = []
    try:
        completion = await client.stream(on_event=events.append, **request)
    finally:
        await client.aclose()
    return completion, events


def _both(fake_api, reply, *, timeout_s: float = 10.0, base_url: str | None = None, **request):
    """The outcome of ``reply`` through each adapter: (completion, events) or the error."""
    sent = _sent(fake_api, reply, max_retries=0, timeout_s=timeout_s, base_url=base_url, **request)
    return [outcome for outcome, _requests in sent]


def _sent(
    fake_api,
    *replies,
    max_retries: int,
    timeout_s: float = 10.0,
    base_url: str | None = None,
    **request,
):
    """Each adapter's outcome of the scripted ``replies`` (its completion and events, or its
    error) and the requests it sent, the SDK adapter's first; the replies neither took are
    dropped in between."""
    request = {
        "model": "claude-test",
        "system": SYSTEM,
        "messages": MESSAGES,
        "tools": TOOLS,
    } | request
    url = base_url or fake_api.url
    results = []
    for client in (
        Provider(base_url=url, timeout_s=timeout_s, max_retries=max_retries),
        LightClient(api_key="test-key", base_url=url, timeout_s=timeout_s, max_retries=max_retries),
    ):
        fake_api.drop_pending()
        fake_api.cache.clear()  # each adapter's request finds the same (empty) prompt cache
        fake_api.script(*replies)
        before = len(fake_api.message_requests)
        try:
            outcome = asyncio.run(_run(client, **request))
        except ProviderError as exc:
            outcome = (type(exc).__name__, exc.reason, str(exc))
        results.append((outcome, fake_api.message_requests[before:]))
    fake_api.drop_pending()
    return results


@pytest.mark.parametrize(
    "reply",
    [
        text("Hello there, how are you?", usage=(12, 7, 300, 900)),
        tool_use("read_file", {"path": "b.txt", "n": [1, 2.5, None]}, text="Let me look."),
        message(
            [
                {"type": "text", "text": "Two calls."},
                {"type": "tool_use", "id": "toolu_a", "name": "glob", "input": {"pattern": "*.py"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}},
            ],
            stop_reason="tool_use",
        ),
        text("Cut at the limit", stop_reason="max_tokens"),
    ],
    ids=["text", "tool_use", "two_tools", "max_tokens"],
)
def test_the_same_stream_gives_the_same_completion_and_events(fake_api, reply):
    """A scripted reply (text, tool calls with streamed JSON input, cache usage, stop reason)
    read by the light adapter equals the SDK adapter's: the Completion and the events."""
    sdk, light = _both(fake_api, reply)
    assert light == sdk
    assert sdk[0].content  # a real reply was compared, not two failures


def test_both_adapters_send_the_same_bytes_and_the_headers_that_matter(fake_api):
    """The request body is byte-identical JSON (so the prompt-cache prefix is the same), to the
    same path, with the same key (a bearer token), API version and content type."""
    _both(fake_api, text("ok"))
    sdk, light = fake_api.message_requests
    assert light.raw == sdk.raw
    assert b'"cache_control":{"type":"ephemeral"}' in sdk.raw
    assert light.path == sdk.path == "/v1/messages"
    for name in HEADERS:
        assert light.headers[name] == sdk.headers[name], name


@pytest.mark.parametrize(
    "reply",
    [
        error(401),
        error(403),
        error(404, message="model: claude-nope"),
        error(413),
        error(429, retry_after=30),
        error(500),
        error(529),
        error(400, message="messages: bad"),
        stream_error(),
        stream_error(error_type="api_error"),
        cut(),
        *[malformed(fault) for fault in MALFORMED_FAULTS],
    ],
    ids=lambda reply: f"{reply.kind}-{reply.status}-{reply.error_type}-{reply.message}",
)
def test_every_error_kind_gives_the_same_sentence(fake_api, reply):
    """Each HTTP error, error event, cut stream and malformed reply fails both adapters with the
    same ProviderError class, reason and sentence (or succeeds equally)."""
    sdk, light = _both(fake_api, reply)
    assert light == sdk


def test_a_refused_connection_and_a_hang_give_the_same_sentences(fake_api):
    """A closed port ("could not reach …") and a server that never answers within the time
    limit fail both adapters with the same sentence."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    sdk, light = _both(fake_api, text("never"), base_url=closed)
    assert light == sdk
    assert "Could not reach" in sdk[2]
    fake_api.drop_pending()
    sdk, light = _both(fake_api, hang(), timeout_s=0.5)
    assert light == sdk
    assert sdk[1] == "timeout"
    fake_api.drop_pending()
    sdk, light = _both(fake_api, hang(after_deltas=1), timeout_s=0.5)
    assert light == sdk
    assert "stopped sending" in sdk[2]


def test_stop_cancels_the_light_request(fake_api):
    """Cancelling a light request mid-reply (Esc/Stop) raises CancelledError and closes it."""
    gate = threading.Event()
    fake_api.script(text("one two three four", gate=gate))
    events = []

    async def scenario():
        client = LightClient(api_key="test-key", base_url=fake_api.url, timeout_s=10)
        task = asyncio.create_task(
            client.stream(model="m", system="", messages=MESSAGES[:1], on_event=events.append)
        )
        while not events:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await client.aclose()

    try:
        asyncio.run(scenario())
    finally:
        gate.set()
    assert [event.text for event in events] == ["one "]


# --- retries: the SDK's, for the same max_retries --------------------------------------------


def _with_header(reply, name: str, value: str):
    """``reply`` (an HTTP error) with one more response header."""
    return dataclasses.replace(reply, headers=(*reply.headers, (name, value)))


@pytest.mark.parametrize(
    ("replies", "requests"),
    [
        ((error(529, retry_after_ms=1), text("Recovered.")), 2),
        ((error(429, retry_after=0.001), text("Recovered.")), 2),
        ((error(500, retry_after_ms=1), error(408, retry_after_ms=1), text("Recovered.")), 3),
        ((error(409, retry_after_ms=1), text("Recovered.")), 2),
        (
            (
                _with_header(error(400, retry_after_ms=1), "x-should-retry", "true"),
                text("Recovered."),
            ),
            2,
        ),
    ],
    ids=["529", "429-retry-after", "500-then-408", "409", "400-x-should-retry"],
)
def test_an_error_the_sdk_retries_gives_the_reply_after_the_same_requests(
    fake_api, replies, requests
):
    """A 529, 429, 5xx, 408 or 409 (or any status the API marks ``x-should-retry: true``)
    before the reply starts is sent again: the light adapter returns the reply the SDK adapter
    returns, after as many requests, ``retry-after`` (seconds) and ``retry-after-ms`` honoured."""
    (sdk, sdk_sent), (light, light_sent) = _sent(fake_api, *replies, max_retries=2)
    assert light == sdk
    assert light[0].text == "Recovered."
    assert len(light_sent) == len(sdk_sent) == requests


def test_a_retried_request_sends_the_same_bytes_and_headers_as_the_sdks(fake_api):
    """Each attempt repeats the first one's bytes, and both adapters number the attempts alike
    (``x-stainless-retry-count`` 0, 1, 2), so the API sees the same requests in the same order."""
    replies = (error(529, retry_after_ms=1), error(429, retry_after=0.001), text("ok"))
    (_sdk, sdk_sent), (_light, light_sent) = _sent(fake_api, *replies, max_retries=2)
    assert len(light_sent) == len(sdk_sent) == 3
    for sdk, light in zip(sdk_sent, light_sent, strict=True):
        assert light.raw == sdk.raw == sdk_sent[0].raw
        for name in HEADERS:
            assert light.headers[name] == sdk.headers[name], name
    assert [r.headers["x-stainless-retry-count"] for r in light_sent] == ["0", "1", "2"]


@pytest.mark.parametrize(
    ("statuses", "sentence"),
    [
        ((529, 529, 529), "Anthropic is overloaded right now (529)"),
        ((429, 429, 429), "Anthropic is rate limiting requests (429)"),
        ((503, 429, 500), "Anthropic had a server error (500)"),
    ],
)
def test_retries_exhausted_give_the_sdks_sentence(fake_api, statuses, sentence):
    """An error on every attempt ends, after max_retries + 1 requests, with the sentence the
    SDK adapter gives for the last one; the reply scripted after them is never asked for."""
    replies = [error(status, retry_after_ms=1) for status in statuses] + [text("never")]
    (sdk, sdk_sent), (light, light_sent) = _sent(fake_api, *replies, max_retries=2)
    assert light == sdk
    assert sdk[2].startswith(sentence)
    assert len(light_sent) == len(sdk_sent) == 3


@pytest.mark.parametrize(
    "first",
    [
        error(400, message="messages: bad", retry_after_ms=1),
        error(401, retry_after_ms=1),
        error(404, retry_after_ms=1),
        _with_header(error(529, retry_after_ms=1), "x-should-retry", "false"),
        cut(),
        stream_error(),
        malformed("sse_not_json"),
    ],
    ids=["400", "401", "404", "529-x-should-retry-false", "cut", "stream_error", "malformed"],
)
def test_what_the_sdk_does_not_retry_is_not_sent_again(fake_api, first):
    """A refusal (400, 401, 404), a status the API marks ``x-should-retry: false``, and any
    failure after the reply started (a stream cut midway, an error event, malformed data) end
    both adapters after one request, with the same sentence."""
    (sdk, sdk_sent), (light, light_sent) = _sent(fake_api, first, text("never"), max_retries=2)
    assert light == sdk
    assert isinstance(sdk[0], str)  # an error, not the reply scripted after it
    assert len(light_sent) == len(sdk_sent) == 1


def test_a_cut_stream_is_not_sent_again(fake_api):
    """A reply cut after its first words is an incomplete reply on both adapters, not a retry."""
    (sdk, sdk_sent), (light, light_sent) = _sent(fake_api, cut(), text("never"), max_retries=2)
    assert light == sdk
    assert sdk[1] == "incomplete"
    assert len(light_sent) == len(sdk_sent) == 1


def test_a_refused_connection_is_retried_as_the_sdk_retries_it(fake_api, monkeypatch):
    """A closed port is tried max_retries + 1 times by both adapters, then gives the same
    "could not reach" sentence (the waits made short, as the SDK's own tests make them)."""
    from anthropic._base_client import BaseClient

    waits = {"sdk": 0, "light": 0}

    def sdk_wait(*_args, **_kwargs):
        waits["sdk"] += 1
        return 0.001

    def light_wait(*_args):
        waits["light"] += 1
        return 0.001

    monkeypatch.setattr(BaseClient, "_calculate_retry_timeout", sdk_wait)
    monkeypatch.setattr(light_module, "retry_delay", light_wait)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    (sdk, _), (light, _) = _sent(fake_api, text("never"), max_retries=2, base_url=closed)
    assert light == sdk
    assert "Could not reach" in sdk[2]
    assert waits == {"sdk": 2, "light": 2}


def test_the_time_limit_covers_the_retries_and_their_waits(fake_api):
    """A wait the API asks for that outlasts the time limit ends both adapters with the same
    "did not start answering" sentence, without sending the request again."""
    replies = (error(529, retry_after=30), text("too late"))
    (sdk, sdk_sent), (light, light_sent) = _sent(fake_api, *replies, max_retries=2, timeout_s=0.5)
    assert light == sdk
    assert sdk[1] == "timeout" and "(retries included)" in sdk[2]
    assert len(light_sent) == len(sdk_sent) == 1


def test_stop_during_the_wait_before_a_retry_ends_the_request_at_once(fake_api, monkeypatch):
    """Stop while the light adapter waits out a 529's ``retry-after`` (30 s) cancels the
    request then: the task ends cancelled and the retry is never sent."""
    waiting = threading.Event()
    asked: list[float] = []
    real = light_module.retry_delay

    def recorded(retries_taken, headers):
        asked.append(real(retries_taken, headers))
        waiting.set()
        return asked[-1]

    monkeypatch.setattr(light_module, "retry_delay", recorded)
    fake_api.script(error(529, retry_after=30), text("never sent"))

    async def scenario():
        client = LightClient(api_key="test-key", base_url=fake_api.url, timeout_s=60)
        task = asyncio.create_task(
            client.stream(model="m", system="", messages=MESSAGES[:1], max_tokens=16)
        )
        while not waiting.is_set() and not task.done():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)  # the task is in its wait now
        task.cancel()
        await asyncio.wait([task], timeout=20)  # a bound for a broken build, not a measure
        await client.aclose()
        return task

    task = asyncio.run(scenario())
    assert task.cancelled()
    assert asked == [30.0]
    assert len(fake_api.message_requests) == 1
    assert fake_api.pending == 1


RETRY_HEADERS = [
    {},
    {"retry-after-ms": "250"},
    {"retry-after-ms": "250", "retry-after": "9"},
    {"retry-after-ms": "soon", "retry-after": "4"},
    {"retry-after": "3"},
    {"retry-after": "2.5"},
    {"retry-after": "0"},
    {"retry-after-ms": "-5"},
    {"retry-after": "100000000"},
    {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},
    {"retry-after": "in a while"},
]


@pytest.mark.parametrize("headers", RETRY_HEADERS, ids=str)
@pytest.mark.parametrize("retries_taken", [0, 1, 2, 5])
def test_the_wait_before_a_retry_is_the_sdks(monkeypatch, headers, retries_taken):
    """The light adapter waits what the installed SDK waits: the API's ``retry-after-ms`` or
    ``retry-after`` (seconds or a date) when positive, else the SDK's backoff and jitter."""
    import anthropic
    import httpx2
    from anthropic import _base_client, _constants
    from anthropic._models import FinalRequestOptions

    monkeypatch.setattr(_base_client, "random", lambda: 0.6)
    monkeypatch.setattr(light_module.random, "random", lambda: 0.6)
    assert light_module.DEFAULT_MAX_RETRIES == _constants.DEFAULT_MAX_RETRIES
    max_retries = 6
    with anthropic.Anthropic(api_key="test-key", max_retries=max_retries) as client:
        options = FinalRequestOptions(method="post", url="/v1/messages")
        sdk = client._calculate_retry_timeout(
            max_retries - retries_taken, options, httpx2.Headers(headers)
        )
    assert light_module.retry_delay(retries_taken, httpx2.Headers(headers)) == sdk
    if not headers:
        assert light_module.retry_delay(retries_taken, None) == sdk  # a refused connection


def test_a_wait_until_a_date_is_the_sdks():
    """``retry-after`` as an HTTP date in the future is the time until then, as in the SDK."""
    import anthropic
    import httpx2
    from anthropic._models import FinalRequestOptions

    headers = httpx2.Headers(
        {"retry-after": email.utils.formatdate(time.time() + 120, usegmt=True)}
    )
    with anthropic.Anthropic(api_key="test-key") as client:
        options = FinalRequestOptions(method="post", url="/v1/messages")
        sdk = client._calculate_retry_timeout(2, options, headers)
    light = light_module.retry_delay(0, headers)
    assert 100 < sdk <= 121
    assert light == pytest.approx(sdk, abs=1.0)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 413, 429, 500, 502, 503, 529])
@pytest.mark.parametrize("verdict", [None, "true", "false", "perhaps"])
def test_which_errors_are_retried_is_the_sdks(status, verdict):
    """The light adapter retries the statuses the installed SDK retries, and obeys the
    ``x-should-retry`` header as it does."""
    import anthropic
    import httpx2

    headers = httpx2.Headers({"x-should-retry": verdict} if verdict else {})
    response = httpx2.Response(
        status, headers=headers, request=httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    )
    with anthropic.Anthropic(api_key="test-key") as client:
        expected = client._should_retry(response)
    assert light_module.should_retry(status, headers) is expected


CHOICE = textwrap.dedent(
    """
    import asyncio, importlib.abc, importlib.machinery, sys, threading
    release = threading.Event()

    class SlowSdk(importlib.abc.MetaPathFinder):
        # The SDK's module body waits until the turn is over, as a slow machine's import would.
        def find_spec(self, name, path, target=None):
            if name != "anthropic":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            run = spec.loader.exec_module
            spec.loader.exec_module = lambda module: (release.wait(60), run(module))
            return spec

    sys.meta_path.insert(0, SlowSdk())
    from yak.llm import provider as p
    warm = threading.Thread(target=p.import_sdk)
    warm.start()
    while not p.sdk_importing():
        pass
    client = p.Provider(light_while_loading=True, timeout_s=10)
    assert client.warm_up() is True  # returns at once: the import is another thread's
    deltas = []
    reply = asyncio.run(client.stream(model="m", system="", messages=[{"role": "user",
        "content": "hi"}], on_event=lambda e: deltas.append(e.text)))
    print(reply.content[0]["text"], "|", "".join(deltas), "|", p.sdk_ready())
    release.set()
    warm.join()
    print("ready", p.sdk_ready())
    """
)


def test_a_turn_while_the_sdk_imports_goes_the_light_way(fake_api):
    """While another thread imports the SDK, a chat client's request does not wait for it: the
    reply arrives through the light adapter before the import is done; then the SDK is used."""
    fake_api.script(text("Fast first reply."))
    out = subprocess.run(
        [sys.executable, "-c", CHOICE], capture_output=True, text=True, timeout=90, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "Fast first reply. | Fast first reply. | False",
        "ready True",
    ]
    assert "anthropic" not in fake_api.message_requests[0].headers.get("user-agent", "").lower()


def test_the_light_path_does_not_import_the_sdk(fake_api):
    """A chat client's request made before the SDK is imported leaves without importing it."""
    program = textwrap.dedent(
        """
        import asyncio, sys
        from yak.llm.provider import Provider
        client = Provider(light_while_loading=True, timeout_s=10)
        reply = asyncio.run(client.stream(model="m", system="", messages=[{"role": "user",
            "content": "hi"}]))
        asyncio.run(client.aclose())
        print(reply.content[0]["text"], "anthropic" in sys.modules)
        """
    )
    fake_api.script(text("Light."))
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Light. False"


def test_the_sdk_import_shortens_the_thread_switch_interval_and_restores_it(monkeypatch):
    """While the SDK is imported the loop's thread gets the interpreter back within 0.5 ms, not
    5 ms; afterwards the interval is what it was."""
    from yak.llm import provider

    seen = []
    real = provider.importlib.import_module

    def recording(name, *args, **kwargs):
        seen.append(sys.getswitchinterval())
        return real(name, *args, **kwargs)

    before = sys.getswitchinterval()
    monkeypatch.setattr(provider.importlib, "import_module", recording)
    provider.import_sdk()
    assert seen and all(v == provider.IMPORT_SWITCH_INTERVAL_S for v in seen)
    assert sys.getswitchinterval() == before


def test_the_chat_client_retries_the_light_way_with_its_max_retries(fake_api):
    """A chat client's request made before the SDK is imported is retried as often as the
    client's ``max_retries`` says, then fails with the SDK's sentence, still without the SDK."""
    program = textwrap.dedent(
        """
        import asyncio, sys
        from yak.errors import ProviderError
        from yak.llm.provider import Provider
        client = Provider(light_while_loading=True, timeout_s=10, max_retries=1)
        try:
            asyncio.run(client.stream(model="m", system="", messages=[{"role": "user",
                "content": "hi"}]))
        except ProviderError as exc:
            print(exc.reason, "anthropic" in sys.modules)
        asyncio.run(client.aclose())
        """
    )
    fake_api.script(error(529, retry_after_ms=1), error(529, retry_after_ms=1), text("never"))
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "overloaded False"
    assert len(fake_api.message_requests) == 2
    assert fake_api.pending == 1


def test_a_held_sdk_import_waits_between_modules_and_other_imports_go_on():
    """A first message's client holds the SDK import: the importing thread stops before its
    next module (a few at most arrive while held), an unrelated module imports in another
    thread meanwhile, and once let go the SDK finishes with its real loaders and the import
    hook gone. In a fresh interpreter, where the SDK is not imported yet."""
    program = textwrap.dedent(
        """
        import sys, threading, time
        from yak.llm import provider
        provider.IMPORT_HOLD_S = 30.0  # a stuck hold would time the test out
        started = threading.Event()
        real = provider.importlib.import_module
        def first_then(name, *args, **kwargs):
            started.set()
            return real(name, *args, **kwargs)
        provider.importlib.import_module = first_then
        worker = threading.Thread(target=provider.import_sdk)
        provider.hold_sdk_import()
        worker.start()
        started.wait(10)
        time.sleep(0.3)
        before = len(sys.modules)
        time.sleep(0.5)
        held_meanwhile = len(sys.modules) - before
        import xml.dom.minidom  # another thread's import is not held
        provider.let_sdk_import_go()
        worker.join(60)
        import anthropic
        print(held_meanwhile, provider.sdk_ready(), type(anthropic.__loader__).__name__,
              any(type(f).__name__ == "_HoldingFinder" for f in sys.meta_path))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=25, check=False
    )
    assert out.returncode == 0, out.stderr
    held, ready, loader, hook = out.stdout.split()
    assert int(held) <= 1  # xml.dom.minidom is counted after, not during
    assert (ready, loader, hook) == ("True", "SourceFileLoader", "False")
