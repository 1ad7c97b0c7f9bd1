"""Provider: the Anthropic Messages API through ``anthropic.AsyncAnthropic``, streaming.

The SDK is imported lazily (it costs seconds) on the first call; a client built with
``light_while_loading`` (the chat's) sends its requests through the light adapter
(``yak/llm/light.py``) while another thread is still importing it. Its own settings apply:
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``; a key may instead come from the OS keyring.
Every SDK/transport exception leaves this module as a ``yak.errors.ProviderError`` subclass with
a sentence a user can act on. A stream that ends before ``message_stop`` raises
``IncompleteResponse``, whatever the SDK returns. The key is never logged.

Measured with anthropic 2.14: a timeout or dropped connection *after* the response headers
arrived is not wrapped by the SDK; it surfaces as the transport's ``httpx2`` exception, so both
families are translated here. An ``event: error`` inside a stream arrives as an
``APIStatusError`` with status 200 and the error type in its body.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from yak.domain import TokenUsage
from yak.errors import (
    AuthenticationFailed,
    IncompleteResponse,
    MissingApiKey,
    Overloaded,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
    YakError,
)
from yak.llm import credentials
from yak.ports import Completion, StreamEvent, SystemPrompt, TextDelta, ToolUseStarted

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"

if TYPE_CHECKING:
    import ssl

    from yak.llm.light import LightClient

# The value types of the model-client port live with the port (the core uses them too).
__all__ = ["Completion", "Provider", "StreamEvent", "TextDelta", "ToolUseStarted"]


class Provider:
    """One configured connection to the Messages API.

    Args:
        api_key: explicit key; ``None`` means ``ANTHROPIC_API_KEY`` then the OS keyring.
        base_url: explicit base URL; ``None`` means ``ANTHROPIC_BASE_URL`` or the SDK default.
        timeout_s: per-request timeout in seconds (connect, and each wait for the next bytes
            of a stream).
        max_retries: the SDK's retries on 408/409/429/5xx and refused connections.
        light_while_loading: while another thread is still importing the SDK, send requests
            through the light adapter (``yak/llm/light.py``: the same request over plain HTTP,
            retried as the SDK retries it) instead of waiting for the import; the chat's turns
            use this, so the first message after launch leaves at once.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        light_while_loading: bool = False,
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url or None
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._light_while_loading = light_while_loading
        self._client: Any = None
        self._light: LightClient | None = None
        self._holding_import = False  # this client holds the SDK import (see hold_sdk_import)

    @property
    def base_url(self) -> str:
        """Where requests go: the explicit base URL, ``ANTHROPIC_BASE_URL``, or Anthropic's."""
        return (self._base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip(
            "/"
        )

    def _key(self) -> str:
        key = (self._api_key or "").strip() or credentials.api_key()
        if not key:
            raise MissingApiKey()
        return key

    def _sdk_client(self) -> Any:
        if self._client is None:
            key = self._key()
            anthropic = import_sdk()  # lazy: importing the SDK costs seconds

            self._client = anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self._base_url,
                timeout=self.timeout_s,
                max_retries=self.max_retries,
                http_client=anthropic.DefaultAsyncHttpxClient(verify=tls_context()),
            )
        return self._client

    async def stream(
        self,
        *,
        model: str,
        system: SystemPrompt,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int = 8192,
        on_event: Callable[[StreamEvent], None] | None = None,
    ) -> Completion:
        """Stream one reply; ``on_event`` sees text deltas and tool-call starts as they arrive.

        The request carries ``system``, ``messages`` and ``tools`` exactly as given, prompt-cache
        breakpoints (``cache_control``) included: which prefix to cache is the caller's choice
        (the agent's, see ``yak/agent/messages.py``). The completion's usage splits the input
        into uncached, cache-written and cache-read tokens.

        Args:
            model: the model name, e.g. ``claude-sonnet-4-5``.
            system: the system prompt, text or text blocks (omitted from the request when
                empty).
            messages: the conversation as Messages API dicts, oldest first.
            tools: tool definitions (name, description, input_schema), or ``None``.
            max_tokens: the reply's token budget.
            on_event: called on the event-loop thread for each ``TextDelta`` /
                ``ToolUseStarted``.

        Raises:
            MissingApiKey, AuthenticationFailed, RateLimited, Overloaded, ProviderUnavailable,
            IncompleteResponse, ProviderError. ``asyncio.CancelledError`` propagates (Stop).
        """
        if self._light_while_loading and not sdk_ready():

            def first_event(event: StreamEvent) -> None:
                self._let_import_go()  # the reply has begun: the import may share the CPU
                if on_event is not None:
                    on_event(event)

            try:
                return await self._light_client().stream(
                    model=model,
                    system=system,
                    messages=messages,
                    tools=tools,
                    max_tokens=max_tokens,
                    on_event=first_event,
                )
            finally:
                self._let_import_go()
        client = self._sdk_client()
        request = request_params(
            model=model, system=system, messages=messages, tools=tools, max_tokens=max_tokens
        )
        started = False  # response headers arrived: a later transport error cuts the reply
        snapshot = None
        completed = False
        tool_json: dict[int, list[str]] = {}  # the raw input of each tool call, as streamed
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    # One bound for the request and the SDK's retries until the reply starts;
                    # after that, timeout_s is the longest pause between two reads.
                    async with asyncio.timeout(self.timeout_s):
                        stream = await stack.enter_async_context(client.messages.stream(**request))
                except TimeoutError:
                    raise start_timeout_error(self.timeout_s) from None
                started = True
                check_content_type(_content_type(stream), base_url=self.base_url)
                events = stream.__aiter__()
                while True:
                    try:
                        event = await events.__anext__()
                    except StopAsyncIteration:
                        break
                    except (YakError, asyncio.CancelledError):
                        raise
                    except Exception as exc:
                        if is_provider_exception(exc):
                            raise
                        raise malformed_error(exc) from exc
                    kind = event.type
                    if kind == "text":
                        if on_event is not None and event.text:
                            on_event(TextDelta(event.text))
                    elif kind == "content_block_start":
                        block = event.content_block
                        if block.type == "tool_use" and on_event is not None:
                            on_event(ToolUseStarted(id=block.id, name=block.name))
                    elif kind == "content_block_delta":
                        partial = getattr(event.delta, "partial_json", None)
                        if isinstance(partial, str):
                            tool_json.setdefault(event.index, []).append(partial)
                    elif kind == "message_stop":
                        completed = True
                        snapshot = event.message
        except YakError:
            raise
        except Exception as exc:
            if not is_provider_exception(exc):
                raise  # a programming error (e.g. in on_event) crashes loudly
            raise self._translate(exc, started=started) from exc
        if not completed or snapshot is None:
            raise incomplete_error()
        try:
            completion = _completion(snapshot, model)
        except Exception as exc:  # a shape the SDK let through but no reply has
            raise malformed_error(exc) from exc
        check_reply(completion, tool_json)
        return completion

    async def complete(
        self, *, model: str, system: str, messages: list[dict[str, Any]], max_tokens: int = 8192
    ) -> Completion:
        """One reply without tools, for the memory rewrite (streamed underneath so a dropped
        stream is detected). Same errors as :meth:`stream`."""
        return await self.stream(
            model=model, system=system, messages=messages, max_tokens=max_tokens
        )

    async def check(self, *, model: str) -> str:
        """ "Test connection": a tiny request; returns a one-line success message or raises.

        Raises:
            the errors of :meth:`stream`.
        """
        reply = await self.stream(
            model=model,
            system="",
            messages=[{"role": "user", "content": "Reply with: ok"}],
            max_tokens=5,
        )
        return f"Connected to {shown_url(self.base_url)}: model {reply.model} answered."

    def warm_up(self, *, without_key: bool = True) -> bool:
        """Import the SDK (2–4 s) and build the client, so the first request does not wait for
        them. Synchronous: call it on a worker thread (``ChatService.warm_up`` does). Without a
        key only the SDK is imported (not an error), or nothing when ``without_key`` is false.

        Returns:
            ``True`` when the client was built, ``False`` when no API key was available.
        """
        if not without_key:
            try:
                self._key()
            except MissingApiKey:
                return False
        if self._light_while_loading and sdk_importing() and not sdk_ready():
            # Another thread is importing the SDK: requests go the light way meanwhile, and
            # the light client is built here, off the event loop. The import waits between two
            # modules until this client's first reply begins (at most IMPORT_HOLD_S).
            try:
                self._light_client()
            except MissingApiKey:
                return False
            if not self._holding_import:
                self._holding_import = True
                hold_sdk_import()
            return True
        import_sdk()
        try:
            self._sdk_client()
        except MissingApiKey:
            return False
        return True

    def _let_import_go(self) -> None:
        if self._holding_import:
            self._holding_import = False
            let_sdk_import_go()

    def _light_client(self) -> LightClient:
        if self._light is None:
            from yak.llm.light import LightClient

            self._light = LightClient(
                api_key=self._key(),
                base_url=self.base_url,
                timeout_s=self.timeout_s,
                max_retries=self.max_retries,
            )
        return self._light

    async def aclose(self) -> None:
        """Close the HTTP connections (a later call opens new ones)."""
        self._let_import_go()
        client, self._client = self._client, None
        light, self._light = self._light, None
        if client is not None:
            await client.close()
        if light is not None:
            await light.aclose()

    # --- error translation ------------------------------------------------------------------
    def _translate(self, exc: Exception, *, started: bool) -> ProviderError:
        error = translate_error(
            exc, started=started, base_url=self.base_url, timeout_s=self.timeout_s
        )
        log.info("model request failed: %s (%s)", error.reason, type(exc).__name__)
        return error


_sdk_imported = threading.Event()
_sdk_importers = 0  # threads inside import_sdk() now
_sdk_importers_lock = threading.Lock()
_switch_interval_before = 0.005  # the interpreter's thread switch interval before the import
IMPORT_SWITCH_INTERVAL_S = 0.0005  # seconds, while the SDK is being imported


def import_sdk() -> Any:
    """Import the ``anthropic`` package (seconds, the first time) and return it; while this
    runs, :func:`sdk_importing` is true for every thread. The light adapter, the TLS context
    and the transport's event-loop backend come first (the SDK needs the same ones, so this
    adds nothing to the whole), so a turn started meanwhile finds them ready. Meanwhile the
    interpreter switches threads every ``IMPORT_SWITCH_INTERVAL_S`` seconds, not 5 ms, so the
    event loop's thread is not kept waiting behind the import (restored after)."""
    global _sdk_importers, _switch_interval_before, _importer_thread
    with _sdk_importers_lock:
        _sdk_importers += 1
        if _sdk_importers == 1:
            # While the import holds the interpreter lock, the event loop's thread gets it back
            # within this interval rather than the default 5 ms, each time it wakes (a key
            # press, a socket ready): a first turn sent meanwhile is not slowed tenfold.
            _switch_interval_before = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_interval_before, IMPORT_SWITCH_INTERVAL_S))
            sys.meta_path.insert(0, _holding_finder)
    try:
        prepare_transport()
        with _sdk_importers_lock:
            if _importer_thread is None:
                _importer_thread = threading.get_ident()  # from here on it may be held
        module = importlib.import_module("anthropic")
    finally:
        with _sdk_importers_lock:
            _sdk_importers -= 1
            if _sdk_importers == 0:
                sys.setswitchinterval(_switch_interval_before)
                _importer_thread = None
                with contextlib.suppress(ValueError):
                    sys.meta_path.remove(_holding_finder)
    _sdk_imported.set()
    return module


class _HeldLoader:
    """A module's own loader, made to wait before running the module's code while a chat
    request is held ahead of the SDK import (see :func:`hold_sdk_import`). It waits with only
    that module's import lock held, never the interpreter's global one, so other threads
    import other modules meanwhile; then it puts the real loader back and delegates."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        create = getattr(self.loader, "create_module", None)
        return None if create is None else create(spec)

    def exec_module(self, module: Any) -> None:
        with _sdk_importers_lock:
            deadline = _import_held_until
        remaining = deadline - time.monotonic()
        if remaining > 0:
            _import_may_go.wait(remaining)
        module.__loader__ = module.__spec__.loader = self.loader
        self.loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _HoldingFinder:
    """First on ``sys.meta_path`` while the SDK is imported: in the importing thread only, it
    finds a module's spec with the finders after it and hands the module's loader to
    :class:`_HeldLoader`; everywhere else it finds nothing (the next finder answers)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if threading.get_ident() != _importer_thread:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is None:
                continue
            if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _HeldLoader(spec.loader)
            return spec
        return None


_import_may_go = threading.Event()
_import_may_go.set()
_import_held_until = 0.0  # time.monotonic() after which a held import goes on anyway
_import_holds = 0  # clients holding the import now
_importer_thread: int | None = None  # the thread importing the SDK, while it does
_holding_finder = _HoldingFinder()
IMPORT_HOLD_S = 1.0  # seconds a chat request may keep the SDK import waiting, at most


def hold_sdk_import() -> None:
    """Make the thread importing the SDK wait before its next module until
    :func:`let_sdk_import_go` (or ``IMPORT_HOLD_S`` seconds): a chat request sent meanwhile
    then has the interpreter to itself instead of sharing it with an import whose C parts hold
    it for a hundred milliseconds and more at a time (a first message on launch)."""
    global _import_holds, _import_held_until
    with _sdk_importers_lock:
        _import_holds += 1
        _import_held_until = time.monotonic() + IMPORT_HOLD_S
        _import_may_go.clear()


def let_sdk_import_go() -> None:
    """Undo one :func:`hold_sdk_import`; the import goes on once none is left."""
    global _import_holds
    with _sdk_importers_lock:
        _import_holds = max(0, _import_holds - 1)
        if _import_holds == 0:
            _import_may_go.set()


def prepare_transport() -> None:
    """Import what a first request needs without the SDK and build the TLS context: the light
    adapter and its HTTP library, the transport's asyncio backend and what anyio imports on a
    first connection (about 0.15 s of work, done once). The app runs it on a worker thread as
    soon as its window is painted, so a message sent the moment the chat can be used does not
    wait for it; :func:`import_sdk` runs it first (a held import never stops inside these: the
    light adapter needs them whole). Blocking."""
    importlib.import_module("yak.llm.light")
    with contextlib.suppress(ImportError):
        importlib.import_module("anyio._backends._asyncio")
        importlib.import_module("anyio.lowlevel")
    tls_context()


def sdk_importing() -> bool:
    """Whether some thread is importing the SDK through :func:`import_sdk` right now."""
    return _sdk_importers > 0


def sdk_ready() -> bool:
    """Whether the SDK is imported, so a request through it does not wait for the import."""
    return _sdk_imported.is_set() or ("anthropic" in sys.modules and not sdk_importing())


def request_params(
    *,
    model: str,
    system: SystemPrompt,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    max_tokens: int,
) -> dict[str, Any]:
    """The Messages API parameters of one request, as both adapters send them: ``system`` and
    ``tools`` left out when empty, everything else exactly as given (``cache_control``
    breakpoints included)."""
    # The SDK's order (its body lists the parameters so), which the light adapter's bytes keep.
    request: dict[str, Any] = {"max_tokens": max_tokens, "messages": messages, "model": model}
    if system:
        request["system"] = system
    if tools:
        request["tools"] = tools
    return request


def tls_context() -> ssl.SSLContext:
    """One TLS context, as the SDK's transport builds by default, shared by every client: building
    one loads the certificate authorities (tens of milliseconds), and a client is built for each
    refresh and each first turn after a close. Built once: a thread that asks while another
    builds it waits for that one (two at once took twice as long each, a first message's
    client among them)."""
    with _tls_lock:
        global _tls
        if _tls is None:
            try:
                import httpx2 as httpx  # anthropic 2.x
            except ImportError:
                httpx = importlib.import_module("httpx")
            _tls = httpx.create_ssl_context()
        return _tls


_tls: ssl.SSLContext | None = None
_tls_lock = threading.Lock()


def _transport_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """The SDK transport's (timeout, any transport error) exception classes."""
    try:
        import httpx2  # anthropic 2.x
    except ImportError:  # older SDKs ride on httpx, installed in its place (so imported by name)
        httpx = importlib.import_module("httpx")
        return (httpx.TimeoutException,), (httpx.TransportError,)
    return (httpx2.TimeoutException,), (httpx2.TransportError,)


def is_provider_exception(exc: BaseException) -> bool:
    """Whether ``exc`` comes from the SDK or its transport (and so is translated)."""
    import anthropic

    _timeouts, transport = _transport_errors()
    return isinstance(exc, (anthropic.AnthropicError, *transport))


def translate_error(
    exc: Exception,
    *,
    started: bool = False,
    base_url: str = DEFAULT_BASE_URL,
    timeout_s: float | None = None,
) -> ProviderError:
    """Turn an anthropic SDK or httpx2 exception into a ``ProviderError`` with one sentence.

    Args:
        exc: the exception raised by the SDK or its transport.
        started: the response had begun (headers received), so a transport error cut a reply.
        base_url: where the request went, for "could not reach" messages.
        timeout_s: the configured timeout in seconds, for the timeout message.
    """
    import anthropic

    if isinstance(exc, anthropic.APIStatusError):
        return status_error(int(getattr(exc, "status_code", 0) or 0), getattr(exc, "body", None))
    if isinstance(exc, anthropic.APITimeoutError):
        return timeout_error(started=started, base_url=base_url, timeout_s=timeout_s)
    if isinstance(exc, anthropic.APIConnectionError):
        return connection_error(started=started, base_url=base_url)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ProviderError(
            "The model's reply could not be understood; try again.", reason="bad_response"
        )
    transported = translate_transport_error(
        exc, started=started, base_url=base_url, timeout_s=timeout_s
    )
    if transported is not None:
        return transported
    return ProviderError(
        f"The model request failed: {type(exc).__name__}.", reason="provider_error"
    )


def translate_transport_error(
    exc: BaseException,
    *,
    started: bool,
    base_url: str,
    timeout_s: float | None,
) -> ProviderError | None:
    """The error for an exception of the HTTP transport (``httpx2``), which both the SDK and
    the light adapter (``yak/llm/light.py``) ride on; ``None`` for any other exception.

    Args:
        exc: the exception.
        started: the response had begun (headers received), so the error cut a reply.
        base_url: where the request went.
        timeout_s: the configured time limit in seconds.
    """
    timeouts, transport = _transport_errors()
    if isinstance(exc, timeouts):
        return timeout_error(started=started, base_url=base_url, timeout_s=timeout_s)
    if isinstance(exc, transport):
        return connection_error(started=started, base_url=base_url)
    return None


def shown_url(url: str) -> str:
    """``url`` as a message may show it: a user name and password (``http://user:pw@host``)
    left out, so a credential in ``ANTHROPIC_BASE_URL`` never reaches the screen, a log or a
    stored failure note."""
    scheme, found, rest = url.partition("://")
    if not found:
        return url
    authority, slash, path = rest.partition("/")
    host = authority.rpartition("@")[2]
    return f"{scheme}://{host}{slash}{path}"


def timeout_error(*, started: bool, base_url: str, timeout_s: float | None) -> ProviderError:
    """A request that timed out: before the reply started, or in a pause inside it."""
    after = f" after {timeout_s:g} s" if timeout_s else ""
    if started:
        return ProviderUnavailable(
            f"The model stopped sending{after} before its reply was complete; nothing from "
            "it was kept. Try again.",
            reason="timeout",
        )
    return ProviderUnavailable(
        f"The request to {shown_url(base_url)} timed out{after}; check your connection and "
        "try again.",
        reason="timeout",
    )


def connection_error(*, started: bool, base_url: str) -> ProviderError:
    """A connection that failed: refused before the reply, or dropped inside it."""
    if started:
        return IncompleteResponse(
            "The connection to the model dropped before the reply was complete; nothing "
            "from it was kept. Try again.",
            reason="incomplete",
        )
    return ProviderUnavailable(
        f"Could not reach {shown_url(base_url)}; check your network connection (or "
        "ANTHROPIC_BASE_URL / the base URL in Settings > Provider).",
        reason="unreachable",
    )


def start_timeout_error(timeout_s: float) -> ProviderUnavailable:
    """The model did not start answering within the request time limit (``timeout_s``)."""
    return ProviderUnavailable(
        f"The model did not start answering within {timeout_s:g} s "
        "(retries included); try again, or allow more time (--timeout, or the "
        "request time limit in Settings > Provider).",
        reason="timeout",
    )


def incomplete_error() -> IncompleteResponse:
    """A stream that ended before ``message_stop``."""
    return IncompleteResponse(
        "The reply from the model stopped before it was complete (the connection "
        "closed early); nothing from it was kept. Try again.",
        reason="incomplete",
    )


def check_content_type(kind: str, *, base_url: str) -> None:
    """Refuse a response that is not an event stream (a web page at a wrong base URL).

    Args:
        kind: the response's media type, lower case, ``""`` when unknown (then accepted).
        base_url: where the request went.

    Raises:
        ProviderError: ``reason="bad_response"``.
    """
    if kind not in ("", "text/event-stream"):
        raise ProviderError(
            f"The server at {shown_url(base_url)} answered with {kind[:40]} "
            "instead of the model's reply; check the base URL in Settings > "
            "Provider (or ANTHROPIC_BASE_URL).",
            reason="bad_response",
        )


def status_error(status: int, body: object) -> ProviderError:
    """The error for an HTTP error status, or an ``event: error`` inside a stream (status 200).

    Args:
        status: the response's HTTP status.
        body: the error body as parsed JSON (``{"type": "error", "error": {"type", "message"}}``),
            or its text when it was not JSON, or ``None``.
    """
    error_type, detail = _error_body(body)
    if status in (401, 403) or error_type in ("authentication_error", "permission_error"):
        code = status if status in (401, 403) else 401
        return AuthenticationFailed(
            f"Anthropic rejected the API key ({code}). Check ANTHROPIC_API_KEY or the key in "
            "Settings > Provider.",
            reason="auth",
        )
    if status == 429 or error_type == "rate_limit_error":
        return RateLimited(
            "Anthropic is rate limiting requests (429); wait a minute and try again.",
            reason="rate_limited",
        )
    if status == 529 or error_type == "overloaded_error":
        return Overloaded(
            "Anthropic is overloaded right now (529); try again in a few minutes.",
            reason="overloaded",
        )
    if status >= 500 or error_type == "api_error":
        shown = max(status, 500)
        return Overloaded(
            f"Anthropic had a server error ({shown}); try again shortly.", reason="server_error"
        )
    if status == 404 or error_type == "not_found_error":
        return ProviderError(
            f"The model or endpoint was not found (404){_colon(detail)}; check "
            "the model name and base URL in Settings > Provider.",
            reason="not_found",
        )
    if status == 413 or error_type == "request_too_large":
        return ProviderError(
            "The conversation is too large for one request (413); start a new conversation.",
            reason="too_large",
        )
    return ProviderError(
        f"Anthropic refused the request ({status}){_colon(detail)}.", reason="bad_request"
    )


def _error_body(body: object) -> tuple[str | None, str]:
    if isinstance(body, dict):
        error = body.get("error")
        inner = error if isinstance(error, dict) else body
        return inner.get("type"), str(inner.get("message") or "")
    return None, ""


def _colon(detail: str) -> str:
    detail = " ".join(detail.split())[:300].rstrip(".")
    return f": {detail}" if detail else ""


def _content_type(stream: Any) -> str:
    """The media type of a stream's response (``""`` when the SDK does not say)."""
    try:
        value = stream.response.headers.get("content-type") or ""
    except AttributeError:
        return ""
    return str(value).split(";")[0].strip().lower()


def malformed_error(exc: BaseException) -> ProviderError:
    """The error for a reply the SDK could not read (data that is not JSON, a missing part)."""
    log.info("malformed reply from the model: %s: %s", type(exc).__name__, exc)
    return ProviderError(
        "The model's reply was malformed (data that could not be read); nothing from it was "
        "kept. Try again.",
        reason="bad_response",
    )


def check_reply(completion: Completion, tool_json: dict[int, list[str]]) -> None:
    """Refuse a reply no well-formed answer has: no content at all (unless the token budget
    ran out), or a tool call whose input is not one JSON object.

    Raises:
        ProviderError: ``reason="empty_reply"`` or ``"bad_tool_input"``.
    """
    if not completion.content and completion.stop_reason != "max_tokens":
        raise ProviderError(
            "The model sent an empty reply (no content at all); nothing was changed. Try again.",
            reason="empty_reply",
        )
    for index, block in enumerate(completion.content):
        if block.get("type") != "tool_use":
            continue
        raw = "".join(tool_json.get(index, [])) or "{}"
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            name = str(block.get("name") or "a tool")
            raise ProviderError(
                f"The model sent a call to {name[:60]} whose input is not valid JSON; nothing "
                "was run. Try again.",
                reason="bad_tool_input",
            )


def _completion(message: Any, requested_model: str) -> Completion:
    blocks: list[dict[str, Any]] = []
    for block in message.content:
        if block.type == "text":
            blocks.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            if not isinstance(block.input or {}, dict):
                raise TypeError("a tool call's input is not an object")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": block.id,
                    "name": block.name,
                    "input": dict(block.input or {}),
                }
            )
        else:  # thinking and other blocks are kept as the API sent them
            blocks.append(block.model_dump(mode="json", exclude_none=True))
    return Completion(
        content=tuple(blocks),
        stop_reason=message.stop_reason,
        model=getattr(message, "model", None) or requested_model,
        usage=usage_of(getattr(message, "usage", None)),
    )


def usage_of(usage: Any) -> TokenUsage:
    """The SDK's ``Usage`` (or the API's usage object, parsed) as Yak's; a field the API left
    out (or sent as null) counts 0."""

    def count(name: str) -> int:
        if isinstance(usage, dict):
            return int(usage.get(name) or 0)
        return int(getattr(usage, name, 0) or 0)

    return TokenUsage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_creation_input_tokens=count("cache_creation_input_tokens"),
        cache_read_input_tokens=count("cache_read_input_tokens"),
    )
