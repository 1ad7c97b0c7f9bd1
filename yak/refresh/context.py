"""Whether a refresh request fits the memory model's context window ("Context" in
``docs/refresh.md``).

A request too large for the window is not sent: a server may cut it silently (llama.cpp's
server used to truncate an over-long prompt, and with context shift it drops the oldest tokens
while the reply is written) or refuse it, and a cut request would fold conversations the model
never read. The window is the one the person set for the memory model
(``Settings.memory_context_window``, for a local server), else the known window of Anthropic's
models, else unknown (nothing is checked). The request's size is the endpoint's own count
(``ModelClient.count_tokens``) or, where the endpoint cannot count, :func:`estimate_tokens`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from yak.config import Settings
from yak.errors import ProviderError
from yak.ports import ModelClient, SystemPrompt

log = logging.getLogger(__name__)

# Tokens: the context window of every Claude model (Anthropic's "Models overview" and "Context
# windows" pages: 200K tokens; a 1M window is a beta that needs a request header Yak does not
# send). A model named ``claude-…`` is taken to be one of them.
ANTHROPIC_CONTEXT_WINDOW = 200_000
ANTHROPIC_MODEL_PREFIX = "claude-"
# The estimate's characters per token (see estimate_tokens).
CHARACTERS_PER_TOKEN = 3


@dataclass(frozen=True)
class RequestSize:
    """How large a request is.

    Attributes:
        tokens: its input tokens.
        counted: ``True`` when the endpoint counted them, ``False`` for :func:`estimate_tokens`.
    """

    tokens: int
    counted: bool


def context_window(model: str, *, configured: int = 0) -> int | None:
    """The memory model's context window in tokens.

    Args:
        model: the model's name as sent (``claude-haiku-…``, a local server's model).
        configured: the person's setting (``Settings.memory_context_window``); ``0``: not set.

    Returns:
        ``configured`` when set, else :data:`ANTHROPIC_CONTEXT_WINDOW` for a ``claude-`` model,
        else ``None`` (unknown: the request is not checked).
    """
    if configured > 0:
        return configured
    if model.startswith(ANTHROPIC_MODEL_PREFIX):
        return ANTHROPIC_CONTEXT_WINDOW
    return None


def estimate_tokens(system: SystemPrompt, messages: list[dict[str, Any]]) -> int:
    """A request's input tokens when the endpoint cannot count them: its characters (the text
    of the system prompt and of every message; any other block as its JSON) divided by
    :data:`CHARACTERS_PER_TOKEN`, rounded up.

    Why 3: Anthropic puts a token at about 3.5 characters of English, and code, numbers and
    most other languages have fewer characters per token; counting more tokens than there are
    refuses a request near the limit rather than letting the server cut it. The reply's
    ``max_tokens`` is kept free on top of this (:func:`refusal`), as the window holds both.
    """
    characters = sum(_characters(block) for block in _blocks(system, messages))
    return math.ceil(characters / CHARACTERS_PER_TOKEN)


def refusal(size: RequestSize, *, window: int | None, reserve: int) -> str | None:
    """The sentence refusing a request that does not fit, or ``None`` when it fits.

    Args:
        size: the request's input tokens.
        window: the context window in tokens; ``None`` (unknown) always fits.
        reserve: the reply's ``max_tokens``, kept free in the window.

    Returns:
        ``None``, or a sentence (lower case, like every refresh reason) saying the size, the
        window and the reserve, that nothing was sent and that the conversations wait.
    """
    if window is None or size.tokens + reserve <= window:
        return None
    about = "" if size.counted else "about "
    return (
        f"the refresh request is {about}{size.tokens:,} tokens, over the memory model's context "
        f"window of {window:,} tokens (with {reserve:,} kept for the reply); nothing was sent, "
        "and its conversations wait for the next refresh"
    )


async def request_size(
    client: ModelClient, *, model: str, system: SystemPrompt, messages: list[dict[str, Any]]
) -> RequestSize:
    """The request's size: the endpoint's count, else (no counting there, or the count
    failed: logged) :func:`estimate_tokens`. A failure the request itself would meet (no key,
    no connection) is then reported by the request."""
    try:
        tokens = await client.count_tokens(model=model, system=system, messages=messages)
    except ProviderError as exc:
        log.info("could not count the request's tokens (%s); estimating them", exc.reason)
        tokens = None
    if tokens is None:
        return RequestSize(estimate_tokens(system, messages), counted=False)
    return RequestSize(tokens, counted=True)


async def check_fit(
    client: ModelClient,
    *,
    settings: Settings,
    system: SystemPrompt,
    messages: list[dict[str, Any]],
    reserve: int,
) -> str | None:
    """Whether a memory-model request fits its context window (:func:`context_window` of the
    settings' ``memory_model`` and ``memory_context_window``), counted with ``client`` when the
    window is known (no request otherwise).

    A request whose estimate, doubled, still fits beside the reply is not counted: no round
    trip for the usual refresh (its transcript budget keeps it far below Anthropic's window).

    Returns:
        ``None`` when it fits or the window is unknown, else :func:`refusal`'s sentence.
    """
    window = context_window(settings.memory_model, configured=settings.memory_context_window)
    if window is None:
        return None
    if 2 * estimate_tokens(system, messages) + reserve <= window:
        return None  # fits even were the estimate off by half
    size = await request_size(client, model=settings.memory_model, system=system, messages=messages)
    return refusal(size, window=window, reserve=reserve)


def _blocks(system: SystemPrompt, messages: list[dict[str, Any]]) -> Iterable[Any]:
    yield system
    for message in messages:
        yield message.get("content", "")


def _characters(value: Any) -> int:
    """The characters of a prompt part: a string, text blocks (their text), other blocks (their
    JSON)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_characters(item) for item in value)
    if isinstance(value, dict) and value.get("type") == "text":
        return len(str(value.get("text", "")))
    return len(json.dumps(value, ensure_ascii=False))
