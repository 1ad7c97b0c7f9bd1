"""Provider: the Anthropic Messages API through ``anthropic.AsyncAnthropic``, streaming.

The SDK is imported lazily (it costs seconds) on the first call. Its own settings apply:
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``; a key may instead come from the OS keyring.
Every SDK/transport exception leaves this module as a ``yak.errors.ProviderError`` subclass with
a sentence a user can act on. A stream that ends before ``message_stop`` raises
``IncompleteResponse``, whatever the SDK returns. The key is never logged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from yak.domain import TokenUsage


@dataclass(frozen=True)
class Completion:
    """A finished model reply. ``content`` holds Anthropic-style blocks as dicts
    (``{"type": "text", "text": ...}``, ``{"type": "tool_use", "id", "name", "input"}``)."""

    content: tuple[dict, ...]
    stop_reason: str | None
    model: str
    usage: TokenUsage = field(default_factory=TokenUsage)

    @property
    def text(self) -> str:
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


@dataclass(frozen=True)
class TextDelta:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class ToolUseStarted:
    """The model started a tool call (its input is complete only in the final Completion)."""

    id: str
    name: str


StreamEvent = TextDelta | ToolUseStarted


class Provider:
    """One configured connection to the Messages API.

    Args:
        api_key: explicit key; ``None`` means ``ANTHROPIC_API_KEY`` then the OS keyring.
        base_url: explicit base URL; ``None`` means ``ANTHROPIC_BASE_URL`` or the SDK default.
        timeout_s: per-request timeout in seconds.
        max_retries: the SDK's retries on 408/409/429/5xx and refused connections.
    """

    def __init__(self, *, api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 120.0, max_retries: int = 2) -> None:
        raise NotImplementedError

    async def stream(self, *, model: str, system: str, messages: list[dict],
                     tools: list[dict] | None = None, max_tokens: int = 8192,
                     on_event: Callable[[StreamEvent], None] | None = None) -> Completion:
        """Stream one reply; ``on_event`` sees text deltas and tool-call starts as they arrive.

        Raises:
            MissingApiKey, AuthenticationFailed, RateLimited, Overloaded, ProviderUnavailable,
            IncompleteResponse, ProviderError. ``asyncio.CancelledError`` propagates (Stop).
        """
        raise NotImplementedError

    async def complete(self, *, model: str, system: str, messages: list[dict],
                       max_tokens: int = 8192) -> Completion:
        """One reply without tools, for the memory rewrite (streamed underneath so a dropped
        stream is detected). Same errors as :meth:`stream`."""
        raise NotImplementedError

    async def check(self, *, model: str) -> str:
        """"Test connection": a tiny request; returns a one-line success message or raises."""
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError


