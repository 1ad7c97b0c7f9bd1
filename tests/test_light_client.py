"""The light adapter (``yak/llm/light.py``) against the SDK adapter, both on the fake API: the
same request bytes, the same replies and events, the same error sentences; and the choice
between them (a turn started while the SDK is importing goes the light way)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap

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


async def _run(client, **request):
    events = []
    try:
        completion = await client.stream(on_event=events.append, **request)
    finally:
        await client.aclose()
    return completion, events


def _both(fake_api, reply, *, timeout_s: float = 10.0, base_url: str | None = None, **request):
    """The outcome of ``reply`` through each adapter: (completion, events) or the error."""
    request = {
        "model": "claude-test",
        "system": SYSTEM,
        "messages": MESSAGES,
        "tools": TOOLS,
    } | request
    url = base_url or fake_api.url
    outcomes = []
    for client in (
        Provider(base_url=url, timeout_s=timeout_s, max_retries=0),
        LightClient(api_key="test-key", base_url=url, timeout_s=timeout_s),
    ):
        fake_api.cache.clear()  # each adapter's request finds the same (empty) prompt cache
        fake_api.script(reply)
        try:
            outcomes.append(asyncio.run(_run(client, **request)))
        except ProviderError as exc:
            outcomes.append((type(exc).__name__, exc.reason, str(exc)))
    return outcomes


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
    for name in ("authorization", "anthropic-version", "content-type"):
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
    import threading

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

    def recording(name, *args):
        seen.append(sys.getswitchinterval())
        return real(name, *args)

    before = sys.getswitchinterval()
    monkeypatch.setattr(provider.importlib, "import_module", recording)
    provider.import_sdk()
    assert seen and all(v == provider.IMPORT_SWITCH_INTERVAL_S for v in seen)
    assert sys.getswitchinterval() == before
