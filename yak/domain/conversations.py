"""Conversations: sessions, their stored messages, the tokens model calls used, and a model's
answer to "Test connection".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

DEFAULT_SESSION_TITLE = "New conversation"  # a session before its first prompt titles it


class SessionOrigin(StrEnum):
    """Where a conversation was started (stored with it): in the window, or by a one-shot
    ``yak ask`` on the command line, which the window's conversation list marks."""

    WINDOW = "window"
    ASK = "ask"


@dataclass(frozen=True)
class TokenUsage:
    """Tokens a model call (or a sum of calls) used, as the Messages API reports them.

    The API splits the input three ways: ``input_tokens`` (read at the full price, after the
    last cache breakpoint or without caching), ``cache_creation_input_tokens`` (written to the
    prompt cache) and ``cache_read_input_tokens`` (read from it, at a tenth of the price);
    :attr:`total_input_tokens` is their sum. Usages add up with ``+``.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        """Field-wise sum (a turn's calls, a session's turns)."""
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    @property
    def total_input_tokens(self) -> int:
        """Every input token sent, cached or not: uncached + written to + read from the cache
        (the "12.4k in" of "12.4k in, 91% cached")."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def cached_share(self) -> float:
        """The share of :attr:`total_input_tokens` read from the prompt cache, 0.0 to 1.0
        (0.0 when nothing was sent): the "91% cached" of "12.4k in, 91% cached"."""
        total = self.total_input_tokens
        return self.cache_read_input_tokens / total if total else 0.0


@dataclass(frozen=True)
class ChatSession:
    """A conversation in a workspace."""

    id: str
    workspace_id: str
    title: str
    created_at: datetime
    updated_at: datetime
    # The session block of the system prompt (memory block and environment facts) exactly as
    # its first turn sent it, reused byte-identical on every later request so the prompt cache
    # holds (``None``: no turn has started yet). See ``yak/agent/messages.py``.
    prompt_snapshot: str | None = None
    snapshot_memory_version: int | None = None  # the memory document version it was taken at
    # The last memory version a hand edit was noted at in this session (a note per version).
    noted_memory_version: int | None = None
    origin: SessionOrigin = SessionOrigin.WINDOW  # where it was started


@dataclass(frozen=True)
class ChatMessage:
    """A stored message. ``content`` is a list of Anthropic-style content blocks (dicts with a
    ``type`` of ``text``, ``tool_use`` or ``tool_result``), JSON-serializable."""

    id: str
    session_id: str
    workspace_id: str
    role: str  # "user" or "assistant"
    content: tuple[dict[str, Any], ...]
    created_at: datetime
    model: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.get("text", "") for b in self.content if b.get("type") == "text")


@dataclass(frozen=True)
class ModelCheck:
    """One model's answer to "Test connection" (``ChatService.test_connection``).

    Attributes:
        role: ``"chat"`` or ``"memory"`` (the model's use; one check may cover both when
            they are the same model: ``"chat and memory"``).
        model: the model name asked for.
        answered: the one-line success sentence, or ``None`` when it failed.
        error: the failure's one sentence, or ``None`` when it answered.
    """

    role: str
    model: str
    answered: str | None = None
    error: str | None = None
