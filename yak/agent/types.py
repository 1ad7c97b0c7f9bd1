"""What the agent loop tells its driver (the chat UI, ``yak ask``) and asks it.

Plain frozen dataclasses, Qt-free. The driver passes ``on_event`` to receive ``AgentEvent`` s as
they happen and an ``Approver`` that answers approval requests for mutating tools.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum

from yak.domain import TokenUsage


class ApprovalDecision(StrEnum):
    """The user's answer to a mutating tool call (write, edit, shell command)."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"  # this tool, for the rest of the session
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    """A mutating tool call waiting for the user.

    ``target`` is the workspace-relative path or the command line; ``detail`` what will happen
    (the new text, a unified diff for an edit, the full command)."""

    session_id: str
    tool_use_id: str
    tool: str
    target: str
    detail: str


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


@dataclass(frozen=True)
class TextDelta:
    """Assistant text as it streams."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    tool_use_id: str
    tool: str
    target: str  # short: the path, pattern or command


@dataclass(frozen=True)
class ToolCallFinished:
    tool_use_id: str
    tool: str
    target: str
    ok: bool
    summary: str  # one line: "read 120 lines", "denied by user", "refused: outside workspace"
    output: str  # what the model was told, capped for display


@dataclass(frozen=True)
class MessageStored:
    """A message of the turn was persisted (user prompt, assistant reply, tool results)."""

    message_id: str
    role: str


@dataclass(frozen=True)
class TurnFinished:
    """The turn ended. ``status``: ``"completed"``, ``"stopped"`` (user pressed Stop; what was
    said is kept), ``"failed"`` (``error`` is one sentence), ``"tool_limit"`` (runaway loop cut)."""

    status: str
    text: str  # the final assistant text of the turn
    usage: TokenUsage
    error: str | None = None


AgentEvent = TextDelta | ToolCallStarted | ToolCallFinished | MessageStored | TurnFinished
