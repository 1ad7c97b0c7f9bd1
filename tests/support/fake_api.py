"""A scripted fake of the Anthropic Messages API, served over HTTP on 127.0.0.1.

Tests talk to it with the real ``anthropic`` SDK (``ANTHROPIC_BASE_URL``), so the transport, the
SSE parsing and the SDK's retries are the ones users run (``docs/testing.md``, "Tests").

Usage (the ``fake_api`` fixture in ``tests/conftest.py`` starts one per test and sets
``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY=test-key`` for the test and its subprocesses)::

    from tests.support.fake_api import text, tool_use, error, hang, cut

    def test_something(fake_api):
        fake_api.script(tool_use("read_file", {"path": "a.txt"}), text("Done."))
        ...  # code under test calls the API twice
        body = fake_api.requests[0].body          # the JSON the client sent
        assert fake_api.requests[0].headers["authorization"] == "Bearer test-key"

Replies (module-level constructors, each returns a :class:`Reply`):

- ``text(s, *, chunks=None, usage=None, stop_reason="end_turn", model=None,
  chunk_delay_s=0.0, gate=None, pause_after=1)`` — an assistant text message. Streamed as SSE
  (``event:`` lines, ``message_start`` carrying ``usage``, one ``text_delta`` per chunk; default
  chunks are words) when the request has ``"stream": true``, plain JSON otherwise.
  ``chunk_delay_s`` paces the deltas (benchmarks only; tests must not depend on timing).
  ``gate`` (a ``threading.Event``) pauses the stream after ``pause_after`` deltas until the test
  sets it — to look at a UI mid-stream or press Stop.
- ``tool_use(name, input, *, id=None, text=None, usage=None)`` — a reply whose last block is
  a tool call (``stop_reason="tool_use"``), optionally preceded by text.
- ``message(content, *, stop_reason="end_turn", usage=None, model=None)`` — any list of
  ``text`` / ``tool_use`` blocks (several tool calls in one reply).
- ``error(status, *, error_type=None, message=None, retry_after=None, retry_after_ms=None)`` —
  an HTTP error with Anthropic's JSON error body (401 ``authentication_error``, 429
  ``rate_limit_error``, 529 ``overloaded_error``, 500 ``api_error``, 400
  ``invalid_request_error`` by default). ``retry_after`` (seconds) / ``retry_after_ms`` set the
  headers the SDK honours when it retries.
- ``stream_error(*, error_type="overloaded_error", message=None, after_deltas=1, text="...")``
  — a stream that starts, then sends an ``event: error`` (as the API does mid-stream).
- ``hang(*, after_deltas=None)`` — never answer: sleep until the client gives up (its timeout)
  or the server stops. With ``after_deltas`` (streaming only) the stream starts and stalls after
  that many deltas. Never blocks the fixture's shutdown.
- ``cut(text="Partial answ", *, after_deltas=2)`` — a stream cut halfway: ``message_start``,
  a text block and ``after_deltas`` deltas, then the socket closes without ``message_delta`` /
  ``message_stop``. For a non-streaming request, a JSON body shorter than its Content-Length.
- ``malformed(fault)`` — data no real API sends, one kind of fault per name in
  :data:`MALFORMED_FAULTS`: ``sse_not_json`` (an event whose data is not JSON),
  ``unknown_event`` (an event type the SDK does not know, with no text after it),
  ``unknown_block`` (a content block of an unknown type), ``body_not_json`` (a 200 whose body
  is HTML), ``error_not_json`` (a 502 whose body is HTML), ``empty_content`` (a complete message
  with no content blocks), ``empty_text`` (one empty text block), ``broken_tool_json`` (a tool
  call whose streamed input is not valid JSON), ``tool_input_not_object`` (a tool call whose
  input is a JSON list), ``missing_message`` (a ``message_start`` without its message),
  ``bad_stop_reason`` (a stop reason the SDK does not know), ``no_events`` (a stream that closes
  at once), ``garbage_lines`` (lines that are not SSE at all).

Usage (the tokens a reply reports): ``usage=(input, output)`` or ``(input, output,
cache_creation, cache_read)`` reports exactly that. ``usage=None`` (the default) reports 5 output
tokens and, for the input, what the prompt cache below counted when the request marks any
``cache_control`` breakpoint, or 10 uncached input tokens when it marks none.

The prompt cache (:class:`PromptCache`, ``fake.cache``) simulates the API's: a request is read
as one sequence of blocks in the API's order (each tool definition, each system block, each
content block of each message, all under the request's model), and every prefix that ends at a
block carrying ``cache_control`` is remembered for ``ttl_s`` (5 minutes; ``fake.cache.clock`` is
injectable). A later request whose prefix up to one of its breakpoints, or up to a block at most
20 blocks before one (the API's lookback), is byte-identical (canonical JSON, the
``cache_control`` markers left out) to a remembered, unexpired one reads those tokens from the
cache (``cache_read_input_tokens``, and the entry's time to live restarts); the tokens from there
to its last breakpoint are written (``cache_creation_input_tokens``); the rest are
``input_tokens``. Tokens are counted as characters of canonical JSON / 4, rounded up, per block.
A prefix under ``min_tokens`` (default 0; the real API's minimum is 1,024 for most models) is
not cached. Like the API, a request with more than 4 breakpoints is refused (400) without taking
a scripted reply. The accounting runs for every answered request (an error reply excepted), so a
scripted usage does not stop the cache from filling.

Scripting (methods of :class:`FakeAnthropic`, i.e. of the fixture's value):

- ``script(*replies)`` appends to the queue; each request to ``POST /v1/messages`` takes the next
  one (a request the SDK retries takes another). An item may also be a callable
  ``fn(body: dict) -> Reply | str`` (a ``str`` means ``text(str)``), used once.
- ``respond_with(fn)`` sets the responder used when the queue is empty (same callable shape; it
  may be called many times; ``None`` clears it).
- With an empty queue and no responder, the fake answers 400 ``invalid_request_error``
  "fake: no scripted reply left" (400 is not retried, so a test fails fast and visibly).
- ``requests``: a list of :class:`RecordedRequest` (``method``, ``path``, ``headers`` with
  lower-case names, ``body`` the parsed JSON or ``None``, ``raw`` its bytes, ``unmarked`` the
  body without its ``cache_control`` markers, ``usage`` the usage dict the fake reported or
  ``None``), in arrival order, including retries.
  ``message_requests`` filters ``POST /v1/messages``; ``count_requests`` filters
  ``POST /v1/messages/count_tokens``.
- ``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}``, N counted as the prompt
  cache counts a request (:func:`count_request_tokens`), without taking a scripted reply;
  ``counts_tokens = False`` makes it answer 404 (an endpoint that cannot count).
- ``streams = False`` answers every request with one JSON message, ``stream: true`` or not, as
  some Anthropic-compatible servers do.
- ``url``: the base URL (``http://127.0.0.1:<port>``), ``pending``: replies still queued,
  ``drop_pending()`` drops them.
- ``start()`` / ``stop()`` (also a context manager). ``stop()`` releases hanging and gated
  handlers, so shutdown never waits on them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
HANG_LIMIT_S = 120.0  # a hanging handler gives up on its own after this, even without stop()
CACHE_TTL_S = 300.0  # the API's ephemeral cache: 5 minutes from the last use
CACHE_LOOKBACK_BLOCKS = 20  # how far before a breakpoint the API looks for a cached prefix
MAX_BREAKPOINTS = 4  # cache_control blocks the API accepts in one request
UNCOUNTED_USAGE = (10, 5)  # what a reply reports for a request without breakpoints
OUTPUT_TOKENS = 5  # output tokens a reply reports unless scripted


@dataclass(frozen=True)
class Reply:
    """One scripted answer; build it with the module's constructors."""

    kind: str  # "message", "error", "hang", "cut", "stream_error", "malformed"
    content: tuple[dict, ...] = ()
    stop_reason: str | None = "end_turn"
    usage: tuple[int, ...] | None = None  # (in, out) or (in, out, cache write, cache read)
    model: str | None = None
    chunks: tuple[str, ...] | None = None  # text deltas of a single text block
    chunk_delay_s: float = 0.0
    gate: threading.Event | None = None
    pause_after: int = 1
    status: int = 200
    error_type: str | None = None
    message: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    after_deltas: int | None = None


@dataclass
class RecordedRequest:
    """A request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    usage: dict[str, int] | None = None  # the usage the fake reported for it
    raw: bytes = b""  # the body's bytes as they arrived

    @property
    def unmarked(self) -> Any:
        """The body without its prompt-cache breakpoints (``cache_control`` keys), for tests
        that compare what was said rather than what was marked for caching."""
        return without_cache_control(self.body)


def without_cache_control(value: Any) -> Any:
    """``value`` (parsed JSON) with every ``cache_control`` key removed, at any depth."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def _words(s: str) -> tuple[str, ...]:
    parts = re.findall(r"\S+\s*|\s+", s)
    return tuple(parts) if parts else (s,)


def text(
    s: str,
    *,
    chunks: list[str] | None = None,
    usage: tuple[int, ...] | None = None,
    stop_reason: str = "end_turn",
    model: str | None = None,
    chunk_delay_s: float = 0.0,
    gate: threading.Event | None = None,
    pause_after: int = 1,
) -> Reply:
    """An assistant text reply (see the module docstring)."""
    pieces = tuple(chunks) if chunks is not None else _words(s)
    return Reply(
        kind="message",
        content=({"type": "text", "text": "".join(pieces)},),
        stop_reason=stop_reason,
        usage=usage,
        model=model,
        chunks=pieces,
        chunk_delay_s=chunk_delay_s,
        gate=gate,
        pause_after=pause_after,
    )


def tool_use(
    name: str,
    input: dict,
    *,
    id: str | None = None,
    text: str | None = None,
    usage: tuple[int, ...] | None = None,
    stop_reason: str = "tool_use",
) -> Reply:
    """A reply calling one tool, optionally after some text (``stop_reason="max_tokens"``: a
    call cut at the output limit)."""
    blocks: list[dict] = []
    if text:
        blocks.append({"type": "text", "text": text})
    blocks.append(
        {"type": "tool_use", "id": id or f"toolu_{_next_id()}", "name": name, "input": input}
    )
    return Reply(kind="message", content=tuple(blocks), stop_reason=stop_reason, usage=usage)


def message(
    content: list[dict],
    *,
    stop_reason: str = "end_turn",
    usage: tuple[int, ...] | None = None,
    model: str | None = None,
) -> Reply:
    """A reply made of arbitrary ``text`` / ``tool_use`` blocks."""
    blocks = []
    for b in content:
        if b.get("type") == "tool_use" and not b.get("id"):
            b = {**b, "id": f"toolu_{_next_id()}"}
        blocks.append(b)
    return Reply(
        kind="message", content=tuple(blocks), stop_reason=stop_reason, usage=usage, model=model
    )


def error(
    status: int,
    *,
    error_type: str | None = None,
    message: str | None = None,
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
) -> Reply:
    """An HTTP error with Anthropic's JSON error body."""
    headers = []
    if retry_after is not None:
        headers.append(("retry-after", str(retry_after)))
    if retry_after_ms is not None:
        headers.append(("retry-after-ms", str(retry_after_ms)))
    return Reply(
        kind="error",
        status=status,
        error_type=error_type or _ERROR_TYPES.get(status, "api_error"),
        message=message or f"fake error {status}",
        headers=tuple(headers),
    )


def stream_error(
    *,
    error_type: str = "overloaded_error",
    message: str | None = None,
    after_deltas: int = 1,
    text: str = "Partial answer",
) -> Reply:
    """A stream that starts and then sends an ``event: error``."""
    return Reply(
        kind="stream_error",
        error_type=error_type,
        message=message or f"fake {error_type}",
        after_deltas=after_deltas,
        content=({"type": "text", "text": text},),
        chunks=_words(text),
    )


def hang(*, after_deltas: int | None = None, text: str = "Still thinking about it") -> Reply:
    """Never answer (or, streaming, stall after ``after_deltas`` deltas)."""
    return Reply(
        kind="hang",
        after_deltas=after_deltas,
        content=({"type": "text", "text": text},),
        chunks=_words(text),
    )


def cut(text: str = "Partial answ", *, after_deltas: int = 2) -> Reply:
    """A stream that closes without ``message_stop`` after ``after_deltas`` deltas."""
    return Reply(
        kind="cut",
        after_deltas=after_deltas,
        content=({"type": "text", "text": text},),
        chunks=_words(text),
    )


_counter = 0
_counter_lock = threading.Lock()


MALFORMED_FAULTS = (
    "sse_not_json",
    "unknown_event",
    "unknown_block",
    "body_not_json",
    "error_not_json",
    "empty_content",
    "empty_text",
    "broken_tool_json",
    "tool_input_not_object",
    "missing_message",
    "bad_stop_reason",
    "no_events",
    "garbage_lines",
)


def malformed(fault: str) -> Reply:
    """A reply with one kind of malformed data (a name in :data:`MALFORMED_FAULTS`)."""
    if fault not in MALFORMED_FAULTS:
        raise ValueError(f"unknown fault {fault!r}")
    return Reply(kind="malformed", message=fault)


def _next_id() -> str:
    global _counter
    with _counter_lock:
        _counter += 1
        return f"fake{_counter:06d}"


def canonical_json(value: Any) -> str:
    """The bytes a prefix is compared by: sorted keys, no blanks, Unicode kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def approx_tokens(value: Any) -> int:
    """A deterministic stand-in for the tokenizer: characters of canonical JSON / 4, rounded
    up, at least 1."""
    return max(1, math.ceil(len(canonical_json(value)) / 4))


def _unmarked(block: Any) -> tuple[Any, bool]:
    """A block without its ``cache_control`` marker, and whether it had one."""
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}, True
    return block, False


def request_blocks(body: dict) -> list[tuple[Any, bool]]:
    """A request as the cache reads it: each tool, each system block, each content block of each
    message (with its message's index and role), in that order, each with whether it carries a
    breakpoint."""
    out: list[tuple[Any, bool]] = []
    for tool in body.get("tools") or []:
        block, marked = _unmarked(tool)
        out.append(({"tool": block}, marked))
    system = body.get("system") or []
    for item in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        block, marked = _unmarked(item)
        out.append(({"system": block}, marked))
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for item in items:
            block, marked = _unmarked(item)
            out.append(({"message": index, "role": message.get("role"), "block": block}, marked))
    return out


def count_request_tokens(body: dict) -> int:
    """A request's input tokens as the fake's token counting answers them: :func:`approx_tokens`
    of each block of :func:`request_blocks` (``cache_control`` markers left out), added up, as
    the prompt cache counts them."""
    return sum(approx_tokens(block) for block, _marked in request_blocks(body))


def count_breakpoints(body: dict) -> int:
    """The ``cache_control`` blocks of a request (the API accepts at most 4)."""
    return sum(1 for _block, marked in request_blocks(body) if marked)


@dataclass(frozen=True)
class CacheUsage:
    """How the cache counted one request's input."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    breakpoints: int


class PromptCache:
    """The API's prompt cache, simulated (see the module docstring).

    Args:
        clock: seconds, monotonic (tests pass a fake one).
        ttl_s: how long a prefix stays after its last write or read.
        min_tokens: prefixes shorter than this are never cached.

    Attributes:
        entries: ``{prefix digest: expiry time}``.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        ttl_s: float = CACHE_TTL_S,
        min_tokens: int = 0,
    ) -> None:
        self.clock = clock
        self.ttl_s = ttl_s
        self.min_tokens = min_tokens
        self.entries: dict[str, float] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every prefix."""
        with self._lock:
            self.entries.clear()

    def account(self, body: dict) -> CacheUsage:
        """Count a request's input tokens, reading and writing the cache as the API would."""
        blocks = request_blocks(body)
        digest = hashlib.sha256(canonical_json({"model": body.get("model")}).encode())
        keys: list[str] = []
        totals: list[int] = []  # tokens from the start through each block
        running = 0
        for block, _marked in blocks:
            digest.update(canonical_json(block).encode())
            keys.append(digest.copy().hexdigest())
            running += approx_tokens(block)
            totals.append(running)
        marks = [i for i, (_block, marked) in enumerate(blocks) if marked]
        if not marks:
            return CacheUsage(running, 0, 0, 0)
        with self._lock:
            now = self.clock()
            self.entries = {k: t for k, t in self.entries.items() if t > now}
            hit = -1  # the last block of the longest cached prefix
            for mark in marks:
                for i in range(mark, max(mark - CACHE_LOOKBACK_BLOCKS, 0) - 1, -1):
                    if keys[i] in self.entries:
                        hit = max(hit, i)
                        break
            read = totals[hit] if hit >= 0 else 0
            written = [m for m in marks if m > hit and totals[m] >= self.min_tokens]
            creation = totals[written[-1]] - read if written else 0
            for i in [*written, *([hit] if hit >= 0 else [])]:
                self.entries[keys[i]] = now + self.ttl_s
        return CacheUsage(running - read - creation, creation, read, len(marks))


Responder = Callable[[dict], "Reply | str"]


class FakeAnthropic:
    """The fake server; see the module docstring for the scripting API."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        cache_ttl_s: float = CACHE_TTL_S,
        min_cacheable_tokens: int = 0,
    ) -> None:
        self.cache = PromptCache(clock=clock, ttl_s=cache_ttl_s, min_tokens=min_cacheable_tokens)
        self.requests: list[RecordedRequest] = []
        self.counts_tokens = True  # False: /v1/messages/count_tokens answers 404
        self.streams = True  # False: stream: true is ignored, every reply is one JSON message
        self._queue: deque[Reply | Responder] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        """Serve on an ephemeral 127.0.0.1 port in a daemon thread."""
        fake = self

        class Handler(_Handler):
            owner = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging and gated handlers are released first."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL to give the SDK (no trailing slash)."""
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- scripting --------------------------------------------------------------------------
    def script(self, *replies: Reply | Responder) -> FakeAnthropic:
        """Queue replies (or one-shot callables ``fn(body) -> Reply | str``)."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def respond_with(self, fn: Responder | None) -> FakeAnthropic:
        """Answer with ``fn(body)`` whenever the queue is empty (``None`` clears it)."""
        self._responder = fn
        return self

    def drop_pending(self) -> int:
        """Drop the replies still queued (a client that gave up early took fewer than were
        scripted); returns how many were dropped."""
        with self._lock:
            dropped = len(self._queue)
            self._queue.clear()
        return dropped

    @property
    def pending(self) -> int:
        """Replies still queued."""
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/messages`` requests."""
        return [r for r in self.requests if r.method == "POST" and r.path == "/v1/messages"]

    @property
    def count_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/messages/count_tokens`` requests."""
        return [
            r for r in self.requests if r.method == "POST" and r.path == "/v1/messages/count_tokens"
        ]

    def _next_reply(self, body: dict) -> Reply:
        with self._lock:
            item = self._queue.popleft() if self._queue else self._responder
        if item is None:
            return error(400, message="fake: no scripted reply left")
        if isinstance(item, Reply):
            return item
        produced = item(body)
        return text(produced) if isinstance(produced, str) else produced

    def _usage(self, reply: Reply, body: dict) -> dict[str, int] | None:
        """The usage a reply reports (``None`` for an error), the cache counted on the way."""
        if reply.kind == "error":
            return None
        counted = self.cache.account(body)
        if reply.usage is not None:
            scripted = (*reply.usage, 0, 0)[:4]
        elif counted.breakpoints:
            scripted = (
                counted.input_tokens,
                OUTPUT_TOKENS,
                counted.cache_creation_input_tokens,
                counted.cache_read_input_tokens,
            )
        else:
            scripted = (*UNCOUNTED_USAGE, 0, 0)
        names = (
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        )
        return dict(zip(names, scripted, strict=True))

    def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds`` unless the server stops; True when stopping."""
        return self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeAnthropic
    protocol_version = "HTTP/1.0"  # every response ends with the connection: a cut is an EOF

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep pytest output clean

    # --- HTTP verbs -------------------------------------------------------------------------
    def do_GET(self) -> None:
        self._record(None)
        if self.path.split("?")[0] == "/v1/models":
            self._json(
                200,
                {
                    "data": [
                        {
                            "type": "model",
                            "id": "claude-fake",
                            "display_name": "Fake",
                            "created_at": "2025-01-01T00:00:00Z",
                        }
                    ],
                    "has_more": False,
                    "first_id": "claude-fake",
                    "last_id": "claude-fake",
                },
            )
        else:
            self._error(404, "not_found_error", f"fake: no route {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        recorded = self._record(body)
        recorded.raw = raw
        if self.path.split("?")[0] == "/v1/messages/count_tokens" and isinstance(body, dict):
            self._count_tokens(body)
            return
        if self.path.split("?")[0] != "/v1/messages" or not isinstance(body, dict):
            self._error(404, "not_found_error", f"fake: no route {self.path}")
            return
        breakpoints = count_breakpoints(body)
        if breakpoints > MAX_BREAKPOINTS:
            self._error(
                400,
                "invalid_request_error",
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                f"Found {breakpoints}.",
            )
            return
        reply = self.owner._next_reply(body)
        recorded.usage = self.owner._usage(reply, body)
        streaming = bool(body.get("stream")) and self.owner.streams
        model = reply.model or body.get("model") or "claude-fake"
        # The client may go away (Stop, timeout): then nothing is left to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._answer(reply, streaming=streaming, model=model, usage=recorded.usage or {})

    # --- answers ----------------------------------------------------------------------------
    def _count_tokens(self, body: dict) -> None:
        """``POST /v1/messages/count_tokens``: the request's tokens as the fake counts them
        (:func:`count_request_tokens`), or 404 while ``owner.counts_tokens`` is off."""
        if not self.owner.counts_tokens:
            self._error(404, "not_found_error", f"fake: no route {self.path}")
            return
        self._json(200, {"input_tokens": count_request_tokens(body)})

    def _answer(self, reply: Reply, *, streaming: bool, model: str, usage: dict[str, int]) -> None:
        if reply.kind == "error":
            self._error(
                reply.status,
                reply.error_type or "api_error",
                reply.message or "",
                headers=reply.headers,
            )
        elif reply.kind == "malformed":
            self._malformed(str(reply.message), model, usage)
        elif reply.kind == "hang" and (not streaming or reply.after_deltas is None):
            self.owner._wait(HANG_LIMIT_S)
            self.close_connection = True
        elif reply.kind == "cut" and not streaming:
            payload = json.dumps(_message_json(reply, model, usage)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.close_connection = True
        elif not streaming and reply.kind == "message":
            self._json(200, _message_json(reply, model, usage))
        elif not streaming:  # stream_error without stream: plain overloaded error
            self._error(529, reply.error_type or "overloaded_error", reply.message or "")
        else:
            self._stream(reply, model, usage)

    def _stream(self, reply: Reply, model: str, usage: dict[str, int]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", f"req_{_next_id()}")
        self.end_headers()
        msg = _message_json(reply, model, usage)
        start = {
            **msg,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        }
        self._event("message_start", {"type": "message_start", "message": start})
        self._event("ping", {"type": "ping"})
        deltas_sent = 0
        limit = reply.after_deltas if reply.kind != "message" else None
        for index, block in enumerate(reply.content):
            if block["type"] == "text":
                self._event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
                pieces = (
                    reply.chunks
                    if reply.chunks is not None and len(reply.content) == 1
                    else _words(block["text"])
                )
                for piece in pieces:
                    if limit is not None and deltas_sent >= limit:
                        self._end_early(reply, index)
                        return
                    if reply.gate is not None and deltas_sent == reply.pause_after:
                        while not reply.gate.wait(0.05):
                            if self.owner._stopping.is_set():
                                return
                    self._event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
                    deltas_sent += 1
                    if reply.chunk_delay_s:
                        time.sleep(reply.chunk_delay_s)
            else:
                self._event(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {
                            "type": "tool_use",
                            "id": block["id"],
                            "name": block["name"],
                            "input": {},
                        },
                    },
                )
                encoded = json.dumps(block.get("input", {}))
                half = len(encoded) // 2
                for part in (encoded[:half], encoded[half:]):
                    self._event(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part},
                        },
                    )
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        if limit is not None:  # fewer deltas than the limit: still end early
            self._end_early(reply, len(reply.content))
            return
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _malformed(self, fault: str, model: str, usage: dict[str, int]) -> None:
        """Answer with one kind of malformed data (see :func:`malformed`)."""
        if fault in ("body_not_json", "error_not_json"):
            page = b"<html><body>502 Bad Gateway</body></html>"
            self.send_response(200 if fault == "body_not_json" else 502)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        self.close_connection = True
        if fault == "no_events":
            return
        if fault == "garbage_lines":
            self.wfile.write(b"this is not\nserver-sent events\n\n")
            return
        empty = Reply(kind="message", content=())
        start = {**_message_json(empty, model, usage), "stop_reason": None}
        if fault == "missing_message":
            self._event("message_start", {"type": "message_start"})
        else:
            self._event("message_start", {"type": "message_start", "message": start})
        block: dict[str, Any] | None = None
        deltas: list[dict[str, Any]] = []
        if fault == "sse_not_json":
            self.wfile.write(b"event: content_block_delta\ndata: {not json at all\n\n")
        elif fault == "unknown_event":
            self._event("mystery_event", {"type": "mystery_event", "index": 0})
        elif fault == "unknown_block":
            block = {"type": "mystery_block", "payload": "?"}
        elif fault == "empty_text":
            block = {"type": "text", "text": ""}
        elif fault in ("broken_tool_json", "tool_input_not_object"):
            block = {
                "type": "tool_use",
                "id": f"toolu_{_next_id()}",
                "name": "read_file",
                "input": {},
            }
            partial = '{"path": "README.md", ' if fault == "broken_tool_json" else '["README.md"]'
            deltas = [{"type": "input_json_delta", "partial_json": partial}]
        elif fault == "bad_stop_reason":
            block = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": "Hello"}]
        if block is not None:
            self._event(
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": block},
            )
            for delta in deltas:
                self._event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": 0, "delta": delta},
                )
            self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        stop = "tool_use" if fault in ("broken_tool_json", "tool_input_not_object") else "end_turn"
        if fault == "bad_stop_reason":
            stop = "mystery_reason"
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 1)},
            },
        )
        self._event("message_stop", {"type": "message_stop"})

    def _end_early(self, reply: Reply, index: int) -> None:
        """Finish a cut, stalled or failing stream at this point."""
        if reply.kind == "hang":
            self.owner._wait(HANG_LIMIT_S)
        elif reply.kind == "stream_error":
            self._event(
                "error",
                {"type": "error", "error": {"type": reply.error_type, "message": reply.message}},
            )
        self.close_connection = True  # "cut": just close the socket

    # --- plumbing ---------------------------------------------------------------------------
    def _record(self, body: Any) -> RecordedRequest:
        headers = {k.lower(): v for k, v in self.headers.items()}
        recorded = RecordedRequest(
            method=self.command, path=self.path.split("?")[0], headers=headers, body=body
        )
        self.owner.requests.append(recorded)
        return recorded

    def _event(self, name: str, data: dict) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, payload: dict, headers: tuple[tuple[str, str], ...] = ()) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_{_next_id()}")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self, status: int, error_type: str, message: str, headers: tuple[tuple[str, str], ...] = ()
    ) -> None:
        self._json(
            status,
            {"type": "error", "error": {"type": error_type, "message": message}},
            headers=headers,
        )


def _message_json(reply: Reply, model: str, usage: dict[str, int]) -> dict:
    return {
        "id": f"msg_{_next_id()}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(b) for b in reply.content],
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": dict(usage),
    }
