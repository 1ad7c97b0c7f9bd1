"""The light adapter: one streaming Messages API call over plain HTTP, without the SDK.

Importing the ``anthropic`` SDK takes seconds (its pydantic types); a chat turn started while
the app's warm-up is still importing it would wait for that. This adapter sends the same
request through ``httpx2`` (the SDK's own HTTP library, a fraction of the import) and reads the
reply with ``httpx2``'s server-sent-events parser, giving the same ``Completion`` and
``StreamEvent``s, and the same ``ProviderError`` sentences (``yak/llm/provider.py`` holds the
translations both use). It retries as the SDK does, for the same ``max_retries``: a refused or
timed-out connection, a 408, 409, 429 or 5xx (or what the ``x-should-retry`` header says) is
sent again after the SDK's wait (``retry-after-ms`` / ``retry-after`` when the API gives one,
else its jittered exponential backoff), numbered by ``x-stainless-retry-count`` as the SDK
numbers it, until the reply starts; a reply cut afterwards is not sent again. The time limit
covers the retries and their waits, as on the SDK path. ``Provider`` chooses it (see
``docs/architecture.md``, "The agent").
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from yak.errors import ProviderError, YakError
from yak.llm.provider import (
    check_content_type,
    check_reply,
    incomplete_error,
    malformed_error,
    request_params,
    start_timeout_error,
    status_error,
    tls_context,
    translate_transport_error,
    usage_of,
)
from yak.ports import Completion, StreamEvent, SystemPrompt, TextDelta, ToolUseStarted

log = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2026-10-21"
"""The Messages API version the installed SDK sends (its ``anthropic-version`` header; a test
compares the two adapters' headers, so an SDK update that changes it is noticed)."""

DEFAULT_MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
"""The SDK's retry constants (``anthropic._constants``; a test compares them)."""


def request_body(params: dict[str, Any]) -> bytes:
    """The JSON bytes of a streaming request, as the SDK encodes them: its key order (the
    parameters, then ``"stream": true``), compact separators, UTF-8 left unescaped, so the
    prompt-cache prefix is byte-identical whichever adapter sent it."""
    body = {**params, "stream": True}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class LightClient:
    """The streaming Messages call over ``httpx2``.

    Args:
        api_key: the API key (sent as the SDK sends it, a bearer token).
        base_url: where requests go, without a trailing slash (``/v1/messages`` is appended).
        timeout_s: the request time limit in seconds: for the reply to start (retries and
            their waits included), and the longest pause inside it.
        max_retries: how many times a failed request is sent again, as the SDK's
            ``max_retries`` (the same failures, the same waits).
    """

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout_s: float,
        max_retries: int = DEFAULT_MAX_RETRIES,
    ) -> None:
        import httpx2

        self._api_key = api_key
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout_s), verify=tls_context())

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
        """Stream one reply, as ``Provider.stream`` does (same arguments, result and errors).

        Raises:
            AuthenticationFailed, RateLimited, Overloaded, ProviderUnavailable,
            IncompleteResponse, ProviderError. ``asyncio.CancelledError`` propagates (Stop).
        """
        params = request_params(
            model=model, system=system, messages=messages, tools=tools, max_tokens=max_tokens
        )
        started = False
        reply = _Reply()
        try:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    # One bound for the request and its retries until the reply starts, as on
                    # the SDK path; after that, timeout_s is the longest pause between reads.
                    async with asyncio.timeout(self.timeout_s):
                        source = await self._open(stack, request_body(params))
                except TimeoutError:
                    raise start_timeout_error(self.timeout_s) from None
                started = True
                response = source.response
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                check_content_type(kind, base_url=self.base_url)
                async for sse in source:
                    if sse.event == "ping" or sse.event == "message":
                        continue  # "message": an event without a name, which the SDK skips
                    if sse.event == "error":
                        raise status_error(response.status_code, _parsed(sse.data))
                    if not sse.data:
                        continue
                    event = reply.take(sse.data)
                    if on_event is not None and event is not None:
                        on_event(event)
        except YakError:
            raise
        except Exception as exc:
            error = translate_transport_error(
                exc, started=started, base_url=self.base_url, timeout_s=self.timeout_s
            )
            if error is None:
                raise  # a programming error (e.g. in on_event) crashes loudly
            log.info("model request failed: %s (%s)", error.reason, type(exc).__name__)
            raise error from exc
        return reply.completion(model)

    async def _open(self, stack: contextlib.AsyncExitStack, body: bytes) -> Any:
        """Send the request, again after each failure the SDK retries, until a reply starts;
        the open event source is left on ``stack``.

        Raises:
            ProviderError: an HTTP error status not retried, or the last one.
            httpx2.TransportError: the connection failed, and no retry is left.
        """
        import httpx2

        for retries_taken in range(self.max_retries + 1):
            remaining = self.max_retries - retries_taken
            headers = {
                "authorization": f"Bearer {self._api_key}",  # how the SDK sends an API key
                "anthropic-version": ANTHROPIC_VERSION,
                "content-type": "application/json",
                "x-stainless-retry-count": str(retries_taken),  # the SDK numbers each attempt
            }
            wait_headers: Mapping[str, str] | None = None
            async with contextlib.AsyncExitStack() as attempt:
                try:
                    source = await attempt.enter_async_context(
                        self._http.sse(
                            f"{self.base_url}/v1/messages",
                            method="POST",
                            content=body,
                            headers=headers,
                        )
                    )
                except httpx2.TransportError as exc:
                    if remaining <= 0:
                        raise
                    failure = type(exc).__name__
                else:
                    response = source.response
                    if response.status_code < 400:
                        await stack.enter_async_context(attempt.pop_all())
                        return source
                    if remaining <= 0 or not should_retry(response.status_code, response.headers):
                        await response.aread()
                        raise status_error(response.status_code, _parsed(response.text))
                    failure = str(response.status_code)
                    wait_headers = response.headers
            # The failed response is closed; a Stop (cancellation) ends this wait at once.
            delay = retry_delay(retries_taken, wait_headers)
            log.info("model request failed (%s); sending it again in %.2f s", failure, delay)
            await asyncio.sleep(delay)
        raise RuntimeError("unreachable: the last attempt returns or raises")

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether the SDK sends a request again after this error status (its ``_should_retry``):
    what the ``x-should-retry`` header says, else 408, 409, 429 and 5xx."""
    verdict = headers.get("x-should-retry")
    if verdict == "true":
        return True
    if verdict == "false":
        return False
    return status in (408, 409, 429) or status >= 500


def retry_delay(retries_taken: int, headers: Mapping[str, str] | None) -> float:
    """Seconds to wait before the next attempt, as the SDK computes them
    (``_calculate_retry_timeout``): the ``retry-after-ms`` or ``retry-after`` header (seconds or
    an HTTP date) when positive, else 0.5 s doubled per attempt taken, at most 8 s, less up to a
    quarter of random jitter.

    Args:
        retries_taken: the attempts before this wait, less one (0 after the first request).
        headers: the failed response's headers; ``None`` when no response came (a connection
            error).
    """
    retry_after = _retry_after(headers)
    if retry_after is not None and retry_after > 0:
        return min(retry_after, 4_294_967.0)  # the SDK's cap (the longest sleep a platform takes)
    sleep_seconds = min(INITIAL_RETRY_DELAY * pow(2.0, min(retries_taken, 1000)), MAX_RETRY_DELAY)
    return max(sleep_seconds * (1 - 0.25 * random.random()), 0.0)


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait the API asks for, in seconds, as the SDK reads it; ``None`` when it asks none."""
    if headers is None:
        return None
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    retry_header = headers.get("retry-after")
    seconds = _number(retry_header)
    if seconds is not None or retry_header is None:
        return seconds
    retry_date = email.utils.parsedate_tz(retry_header)
    if retry_date is None:
        return None
    return float(email.utils.mktime_tz(retry_date) - time.time())


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Reply:
    """The message as the stream builds it, event by event, as the SDK accumulates it."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.completed = False
        self.tool_json: dict[int, list[str]] = {}  # each tool call's input, as streamed

    def take(self, data: str) -> StreamEvent | None:
        """Apply one event's data (JSON text); returns what to tell the caller, if anything.

        Raises:
            ProviderError: the data is not JSON, or not an event a reply can hold here.
        """
        try:
            event = json.loads(data)
            return self._apply(event)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as exc:
            raise malformed_error(exc) from exc

    def _apply(self, event: dict[str, Any]) -> StreamEvent | None:
        kind = event["type"]
        if self.message is None:
            if kind != "message_start":
                raise RuntimeError(f"{kind} before message_start")
            message = event["message"]
            self.message = {**message, "content": list(message.get("content") or [])}
            self.message["usage"] = dict(message.get("usage") or {})
            return None
        content: list[dict[str, Any]] = self.message["content"]
        if kind == "content_block_start":
            block = dict(event["content_block"])
            content.append(block)
            if block["type"] == "tool_use":
                return ToolUseStarted(id=block["id"], name=block["name"])
        elif kind == "content_block_delta":
            index = event["index"]
            block, delta = content[index], event["delta"]
            if delta["type"] == "text_delta" and block["type"] == "text":
                block["text"] += delta["text"]
                return TextDelta(delta["text"]) if delta["text"] else None
            if delta["type"] == "input_json_delta":
                self.tool_json.setdefault(index, []).append(delta["partial_json"])
            elif delta["type"] == "thinking_delta" and block["type"] == "thinking":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta" and block["type"] == "thinking":
                block["signature"] = delta["signature"]
        elif kind == "message_delta":
            delta, usage = event["delta"], event.get("usage") or {}
            self.message["stop_reason"] = delta.get("stop_reason")
            totals = self.message["usage"]
            totals["output_tokens"] = usage.get("output_tokens")
            for name in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                if usage.get(name) is not None:  # totals so far; an absent one keeps its value
                    totals[name] = usage[name]
        elif kind == "message_stop":
            self.completed = True
        return None

    def completion(self, requested_model: str) -> Completion:
        """The finished reply.

        Raises:
            IncompleteResponse: the stream ended before ``message_stop``.
            ProviderError: no content, or a tool call whose input is not one JSON object.
        """
        if not self.completed or self.message is None:
            raise incomplete_error()
        blocks: list[dict[str, Any]] = []
        for index, block in enumerate(self.message["content"]):
            if block.get("type") == "text":
                blocks.append({"type": "text", "text": block["text"]})
            elif block.get("type") == "tool_use":
                raw = "".join(self.tool_json.get(index, []))
                try:
                    value = json.loads(raw) if raw else (block.get("input") or {})
                except ValueError:
                    value = {}  # check_reply below refuses it with its sentence
                if not isinstance(value, dict):
                    raise malformed_error(TypeError("a tool call's input is not an object"))
                blocks.append(
                    {"type": "tool_use", "id": block["id"], "name": block["name"], "input": value}
                )
            else:  # thinking and other blocks are kept as the API sent them
                blocks.append(_without_nulls(block))
        completion = Completion(
            content=tuple(blocks),
            stop_reason=self.message.get("stop_reason"),
            model=self.message.get("model") or requested_model,
            usage=usage_of(self.message.get("usage")),
        )
        check_reply(completion, self.tool_json)
        return completion


def _parsed(text: str) -> object:
    """An error body as JSON, or the text itself when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


__all__ = [
    "ANTHROPIC_VERSION",
    "LightClient",
    "ProviderError",
    "request_body",
    "retry_delay",
    "should_retry",
]
