"""Provider: the Anthropic Messages API through ``anthropic.AsyncAnthropic``, streaming.

The SDK is imported on first use (it costs seconds; ``yak.llm.sdk``), on a worker thread:
``warm_up`` pays that cost before the first request. Its own settings apply:
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``; a key may instead come from the OS keyring.
Every SDK/transport exception leaves this module as a ``yak.errors.ProviderError`` subclass with
a sentence a user can act on (``yak.llm.errors``). A stream that ends before ``message_stop``
raises ``IncompleteResponse``, whatever the SDK returns. The key is never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict, Unpack

from yak.config import endpoint_url
from yak.domain import TokenUsage
from yak.errors import MissingApiKey, ProviderError, YakError
from yak.llm import credentials, sdk
from yak.llm.errors import (
    check_content_type,
    check_reply,
    incomplete_error,
    is_provider_exception,
    malformed_error,
    not_a_message_error,
    shown_url,
    start_timeout_error,
    translate_error,
)
from yak.ports import Completion, StreamEvent, SystemPrompt, TextDelta, ToolUseStarted

log = logging.getLogger(__name__)

# The answers of an endpoint without token counting: no such route (404), a method not allowed
# on it (405), not implemented (501). Anthropic answers 404 for an unknown model too; the
# request itself then fails with its own sentence.
NO_COUNTING_STATUSES = frozenset({404, 405, 501})


class MessagesRequest(TypedDict):
    """The parameters of one request, as ``ModelClient.stream`` and ``complete`` take them.

    Attributes:
        model: the model name, e.g. ``claude-sonnet-4-5``.
        system: the system prompt, text or text blocks (omitted from the request when empty).
        messages: the conversation as Messages API dicts, oldest first.
        tools: tool definitions (name, description, input_schema); none when absent or empty.
        tool_choice: which tool the model must call (``{"type": "tool", "name": …}`` forces
            one); the API's default (``auto``) when absent.
        max_tokens: the reply's token budget (8192 when absent).
    """

    model: str
    system: SystemPrompt
    messages: list[dict[str, Any]]
    tools: NotRequired[list[dict[str, Any]] | None]
    tool_choice: NotRequired[dict[str, Any] | None]
    max_tokens: NotRequired[int]


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
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self._api_key = api_key
        self._base_url = base_url or None
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._client: Any = None

    @property
    def base_url(self) -> str:
        """Where requests go: the explicit base URL, ``ANTHROPIC_BASE_URL``, or Anthropic's."""
        return endpoint_url(self._base_url, os.environ)

    def _key(self) -> str:
        key = (self._api_key or "").strip() or credentials.api_key()
        if not key:
            raise MissingApiKey()
        return key

    def _sdk_client(self) -> Any:
        if self._client is None:
            key = self._key()
            loaded = sdk.load()  # seconds the first time; see warm_up
            self._client = loaded.anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self._base_url,
                timeout=self.timeout_s,
                max_retries=self.max_retries,
                http_client=loaded.anthropic.DefaultAsyncHttpxClient(verify=loaded.tls),
            )
        return self._client

    async def stream(
        self,
        *,
        on_event: Callable[[StreamEvent], None] | None = None,
        **request: Unpack[MessagesRequest],
    ) -> Completion:
        """Stream one reply (``ModelClient.stream``); ``on_event`` sees text deltas and tool-call
        starts as they arrive.

        The request carries ``system``, ``messages`` and ``tools`` exactly as given, prompt-cache
        breakpoints (``cache_control``) included: which prefix to cache is the caller's choice
        (the agent's, see ``yak/agent/messages.py``). The completion's usage splits the input
        into uncached, cache-written and cache-read tokens.

        Args:
            on_event: called on the event-loop thread for each ``TextDelta`` /
                ``ToolUseStarted``.
            request: the request's parameters (:class:`MessagesRequest`).

        Raises:
            MissingApiKey, AuthenticationFailed, RateLimited, Overloaded, ProviderUnavailable,
            IncompleteResponse, ProviderError. ``asyncio.CancelledError`` propagates (Stop).
        """
        client = self._sdk_client()
        params = request_params(request)
        model = request["model"]
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
                        stream = await stack.enter_async_context(client.messages.stream(**params))
                except TimeoutError:
                    raise start_timeout_error(self.timeout_s) from None
                started = True
                kind = _content_type(stream)
                if kind == "application/json":  # a server that does not stream: its one reply
                    snapshot = await self._unstreamed(stream, on_event, tool_json)
                    completed = True
                    events = _NoEvents()
                else:
                    check_content_type(kind, base_url=self.base_url)
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

    async def _unstreamed(
        self,
        stream: Any,
        on_event: Callable[[StreamEvent], None] | None,
        tool_json: dict[int, list[str]],
    ) -> Any:
        """The reply of a server that answered a streamed request with one JSON message (some
        Anthropic-compatible servers ignore ``stream: true``), read as the SDK's ``Message``;
        ``on_event`` sees its text and tool calls at once, and ``tool_json`` gets each tool
        call's input.

        Raises:
            ProviderError: ``reason="bad_response"``, the JSON is not a Messages API reply.
        """
        body = await stream.response.aread()
        try:
            message = sdk.load().anthropic.types.Message.model_validate_json(body)
        except ValueError as exc:
            raise not_a_message_error(self.base_url) from exc
        for index, block in enumerate(message.content):
            if block.type == "text" and on_event is not None and block.text:
                on_event(TextDelta(block.text))
            elif block.type == "tool_use":
                tool_json[index] = [json.dumps(block.input)]
                if on_event is not None:
                    on_event(ToolUseStarted(id=block.id, name=block.name))
        return message

    async def complete(self, **request: Unpack[MessagesRequest]) -> Completion:
        """One reply for the memory rewrite: :meth:`stream` with no one watching the deltas
        (streamed underneath so a dropped stream is detected). The request is sent as given,
        its ``cache_control`` breakpoints included (the tool form forces its one tool with
        ``tool_choice``). Same errors as :meth:`stream`."""
        return await self.stream(**request)

    async def count_tokens(self, **request: Unpack[MessagesRequest]) -> int | None:
        """The input tokens of a request (``ModelClient.count_tokens``): the SDK's
        ``messages.count_tokens`` (``POST /v1/messages/count_tokens``, which Anthropic's API and
        llama.cpp's server answer), with the request as :meth:`stream` would send it (its
        ``max_tokens`` aside: a count generates nothing).

        Returns:
            The count, or ``None`` when the endpoint has no such route (an answer of
            :data:`NO_COUNTING_STATUSES`: a proxy or server that cannot count).

        Raises:
            the errors of :meth:`stream` (a request that does not start answering within
            ``timeout_s``, retries included, is ``ProviderUnavailable``).
        """
        client = self._sdk_client()
        params = request_params(request)
        del params["max_tokens"]  # not a parameter of the count
        try:
            async with asyncio.timeout(self.timeout_s):
                counted = await client.messages.count_tokens(**params)
        except TimeoutError:
            raise start_timeout_error(self.timeout_s) from None
        except YakError:
            raise
        except Exception as exc:
            if not is_provider_exception(exc):
                raise
            status = getattr(exc, "status_code", None)
            if status in NO_COUNTING_STATUSES:
                log.info("%s cannot count tokens (%s)", shown_url(self.base_url), status)
                return None
            raise self._translate(exc, started=False) from exc
        tokens = getattr(counted, "input_tokens", None)
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            raise malformed_error(TypeError(f"input_tokens is {tokens!r}"))
        return tokens

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
        sdk.load()
        try:
            self._sdk_client()
        except MissingApiKey:
            return False
        return True

    async def aclose(self) -> None:
        """Close the HTTP connections (a later call opens new ones)."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # --- error translation ------------------------------------------------------------------
    def _translate(self, exc: Exception, *, started: bool) -> ProviderError:
        error = translate_error(
            exc, started=started, base_url=self.base_url, timeout_s=self.timeout_s
        )
        log.info("model request failed: %s (%s)", error.reason, type(exc).__name__)
        return error


def request_params(request: MessagesRequest) -> dict[str, Any]:
    """The Messages API parameters of one request: ``system`` and ``tools`` left out when empty,
    ``max_tokens`` 8192 unless given, everything else exactly as given (``cache_control``
    breakpoints included)."""
    params: dict[str, Any] = {
        "max_tokens": request.get("max_tokens", 8192),
        "messages": request["messages"],
        "model": request["model"],
    }
    if request["system"]:
        params["system"] = request["system"]
    if request.get("tools"):
        params["tools"] = request["tools"]
        if request.get("tool_choice"):
            params["tool_choice"] = request["tool_choice"]
    return params


class _NoEvents:
    """No stream events: the reply came whole (:meth:`Provider._unstreamed`)."""

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


def _content_type(stream: Any) -> str:
    """The media type of a stream's response (``""`` when the SDK does not say)."""
    try:
        value = stream.response.headers.get("content-type") or ""
    except AttributeError:
        return ""
    return str(value).split(";")[0].strip().lower()


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
