"""The model adapter's failures as Yak's errors: one sentence a user can act on for each.

Every exception of the SDK or its HTTP transport leaves ``yak.llm`` as a
``yak.errors.ProviderError`` subclass through :func:`translate_error`; the other functions here
build the errors the adapter raises itself (a reply cut short, malformed, empty, a web page at a
wrong base URL). A credential in a base URL never reaches a sentence (:func:`shown_url`).

Measured with anthropic 2.x: a timeout or dropped connection *after* the response headers
arrived is not wrapped by the SDK; it surfaces as the transport's own exception, so both
families are translated. An ``event: error`` inside a stream arrives as an ``APIStatusError``
with status 200 and the error type in its body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Container
from typing import NamedTuple

from yak.config import DEFAULT_BASE_URL
from yak.errors import (
    AuthenticationFailed,
    IncompleteResponse,
    Overloaded,
    ProviderError,
    ProviderUnavailable,
    RateLimited,
)
from yak.llm import sdk
from yak.ports import Completion

log = logging.getLogger(__name__)


def is_provider_exception(exc: BaseException) -> bool:
    """Whether ``exc`` comes from the SDK or its transport (and so is translated). Call it only
    once the SDK is loaded (a client raised ``exc``)."""
    loaded = sdk.load()
    return isinstance(exc, (loaded.anthropic.AnthropicError, *loaded.transport_errors))


def translate_error(
    exc: Exception,
    *,
    started: bool = False,
    base_url: str = DEFAULT_BASE_URL,
    timeout_s: float | None = None,
) -> ProviderError:
    """Turn an exception of the SDK or its transport into a ``ProviderError`` with one sentence.

    Args:
        exc: the exception raised by the SDK or its transport.
        started: the response had begun (headers received), so a transport error cut a reply.
        base_url: where the request went, named in the sentence (:func:`server_name`).
        timeout_s: the configured timeout in seconds, for the timeout message.
    """
    loaded = sdk.load()
    anthropic = loaded.anthropic
    if isinstance(exc, anthropic.APIStatusError):
        return status_error(
            int(getattr(exc, "status_code", 0) or 0), getattr(exc, "body", None), base_url=base_url
        )
    if isinstance(exc, (anthropic.APITimeoutError, *loaded.timeouts)):
        return timeout_error(started=started, base_url=base_url, timeout_s=timeout_s)
    if isinstance(exc, (anthropic.APIConnectionError, *loaded.transport_errors)):
        return connection_error(started=started, base_url=base_url)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return ProviderError(
            "The model's reply could not be understood; try again.", reason="bad_response"
        )
    return ProviderError(
        f"The model request failed: {type(exc).__name__}.", reason="provider_error"
    )


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
        "ANTHROPIC_BASE_URL / the base URL in Settings › Provider).",
        reason="unreachable",
    )


def start_timeout_error(timeout_s: float) -> ProviderUnavailable:
    """The model did not start answering within the request time limit (``timeout_s``)."""
    return ProviderUnavailable(
        f"The model did not start answering within {timeout_s:g} s "
        "(retries included); try again, or allow more time (--timeout, or the "
        "request time limit in Settings › Provider).",
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
            "instead of the model's reply; check the base URL in Settings › "
            "Provider (or ANTHROPIC_BASE_URL).",
            reason="bad_response",
        )


def not_a_message_error(base_url: str) -> ProviderError:
    """A server that answered without streaming, with JSON that is not a Messages API reply."""
    return ProviderError(
        f"{server_name(base_url)} answered without streaming, and its answer is not a "
        "Messages API reply; check that the base URL in Settings › Provider (or "
        "ANTHROPIC_BASE_URL) is an Anthropic-compatible server.",
        reason="bad_response",
    )


class _StatusRule(NamedTuple):
    """The error for the statuses and API error types that match, in this order."""

    statuses: Container[int]
    error_types: tuple[str, ...]
    error: type[ProviderError]
    reason: str
    # ``{server}``: who answered (``server_name``); ``{code}``: the status shown; ``{detail}``:
    # the API's message, if any
    sentence: str
    shown: int  # the status shown when only the error type matched


_STATUS_RULES = (
    _StatusRule(
        (401, 403),
        ("authentication_error", "permission_error"),
        AuthenticationFailed,
        "auth",
        "{server} rejected the API key ({code}). Check ANTHROPIC_API_KEY or the key in "
        "Settings › Provider.",
        401,
    ),
    _StatusRule(
        (429,),
        ("rate_limit_error",),
        RateLimited,
        "rate_limited",
        "{server} is rate limiting requests (429); wait a minute and try again.",
        429,
    ),
    _StatusRule(
        (529,),
        ("overloaded_error",),
        Overloaded,
        "overloaded",
        "{server} is overloaded right now (529); try again in a few minutes.",
        529,
    ),
    _StatusRule(
        range(500, 1000),
        ("api_error",),
        Overloaded,
        "server_error",
        "{server} had a server error ({code}); try again shortly.",
        500,
    ),
    _StatusRule(
        (404,),
        ("not_found_error",),
        ProviderError,
        "not_found",
        "The model or endpoint was not found (404){detail}; check the model name and base URL "
        "in Settings › Provider.",
        404,
    ),
    _StatusRule(
        (413,),
        ("request_too_large",),
        ProviderError,
        "too_large",
        "{server} refused the request as too large (413){detail}.",
        413,
    ),
)


def status_error(status: int, body: object, *, base_url: str = DEFAULT_BASE_URL) -> ProviderError:
    """The error for an HTTP error status, or an ``event: error`` inside a stream (status 200).

    Args:
        status: the response's HTTP status.
        body: the error body as parsed JSON (``{"type": "error", "error": {"type", "message"}}``),
            or its text when it was not JSON, or ``None``.
        base_url: the server that answered; the sentence names it (:func:`server_name`).
    """
    error_type, detail = _error_body(body)
    server = server_name(base_url)
    for rule in _STATUS_RULES:
        if status in rule.statuses or error_type in rule.error_types:
            code = status if status in rule.statuses else rule.shown
            sentence = rule.sentence.format(server=server, code=code, detail=_colon(detail))
            return rule.error(sentence, reason=rule.reason)
    return ProviderError(
        f"{server} refused the request ({status}){_colon(detail)}.", reason="bad_request"
    )


def server_name(base_url: str) -> str:
    """Who answered, as the subject of a sentence: ``Anthropic`` for Anthropic's own API
    (``api.anthropic.com``), else ``The server at HOST`` (its host and port, without a user
    name or password: a proxy or a local model is not blamed on Anthropic)."""
    scheme, found, rest = base_url.partition("://")
    authority = (rest if found else scheme).partition("/")[0].rpartition("@")[2]
    host = authority.rpartition(":")[0] if authority.count(":") == 1 else authority
    if host.lower().rstrip(".") in ("api.anthropic.com", "anthropic.com"):
        return "Anthropic"
    return f"The server at {authority}" if authority else "The server"


def _error_body(body: object) -> tuple[str | None, str]:
    if isinstance(body, dict):
        error = body.get("error")
        inner = error if isinstance(error, dict) else body
        return inner.get("type"), str(inner.get("message") or "")
    return None, ""


def _colon(detail: str) -> str:
    detail = " ".join(detail.split())[:300].rstrip(".")
    return f": {detail}" if detail else ""


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

    Args:
        completion: the reply.
        tool_json: the raw input of each tool call as streamed, by content-block index.

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
