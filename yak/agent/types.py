"""What the agent loop tells its driver (the chat UI, ``yak ask``) and asks it.

Plain frozen dataclasses, Qt-free. The driver passes ``on_event`` to receive ``AgentEvent`` s as
they happen and an ``Approver`` that answers approval requests for mutating tools.

Also the mark the loop stores after a reply that was cut off (see ``docs/agent.md``, "The
agent"), so every reader of a stored conversation recognises it: :func:`incomplete_mark` writes
it and :func:`incomplete_cause` reads it back.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from yak.domain import TokenUsage
from yak.ports import TextDelta as TextDelta  # streamed assistant text, passed on as it is


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
class CutFile:
    """An instruction file the chat got only part of (``yak.agent.instructions.cut_files``):
    ``shown`` of its ``chars`` characters (``0``: left out, the size limit was reached before
    it)."""

    name: str
    shown: int
    chars: int


@dataclass(frozen=True)
class InstructionsLoaded:
    """A session's first turn read the workspace's instruction files into its system prompt
    (``yak.agent.instructions``). ``files``: their names relative to the git root, outermost
    first (never empty: without files there is no event); ``cut``: those the model got only
    part of, for the user to be told as the model is (``loaded_line``)."""

    files: tuple[str, ...]
    cut: tuple[CutFile, ...] = ()


@dataclass(frozen=True)
class TurnFinished:
    """The turn ended. ``status``: ``"completed"``, ``"stopped"`` (user pressed Stop; what was
    said is kept), ``"failed"`` (``error`` is one sentence), ``"tool_limit"`` (runaway loop cut).

    ``cut_off`` is set on a failed turn whose reply had started to arrive: why it stopped, as a
    short clause ("the connection closed"). What arrived was stored, followed by
    :func:`incomplete_mark` of that clause. ``no_reply`` is set on a failed turn that got no
    word at all: the error sentence, stored as :func:`no_reply_mark`.
    """

    status: str
    text: str  # the final assistant text of the turn
    usage: TokenUsage
    error: str | None = None
    cut_off: str | None = None
    stop_reason: str | None = None  # the last reply's (``max_tokens``: cut at the token budget)
    no_reply: str | None = None  # failed before any word: the reason in the no-reply mark
    reason: str | None = None  # failed: the provider's reason (``ProviderError.reason``)


AgentEvent = (
    TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | MessageStored
    | InstructionsLoaded
    | TurnFinished
)


# The text block stored after a reply that was cut off: "[incomplete: the reply was cut off
# (the connection closed)]". A plain text block, so the stored conversation stays valid for the
# API and the model is told, on the next request, that its previous reply did not finish.
_INCOMPLETE_HEAD = "[incomplete: the reply was cut off ("
_INCOMPLETE_TAIL = ")]"
_INCOMPLETE_RE = re.compile(r"\[incomplete: the reply was cut off \((?P<cause>[^\n]*)\)\]")


def incomplete_mark(cause: str) -> str:
    """The mark stored after a cut reply; ``cause`` is a short clause on one line, e.g. ``"the
    connection closed"``."""
    return f"{_INCOMPLETE_HEAD}{' '.join(cause.split())}{_INCOMPLETE_TAIL}"


def incomplete_cause(text: str) -> str | None:
    """The cause in a stored text block that is exactly an :func:`incomplete_mark`, else
    ``None``."""
    match = _INCOMPLETE_RE.fullmatch(text)
    return match["cause"] if match else None


# The assistant message stored when a turn fails before any word arrives: "[no reply: <the error
# sentence>]", so a reopened session shows the question was not answered and why, and Retry is
# offered. It says nothing the model said: requests leave it out (``to_api_messages``).
_NO_REPLY_HEAD = "[no reply: "
_NO_REPLY_RE = re.compile(r"\[no reply: (?P<reason>[^\n]*)\]")


def no_reply_mark(reason: str) -> str:
    """The text stored for a turn that got no reply; ``reason`` is the error sentence (one
    line: whitespace runs become one space)."""
    return f"{_NO_REPLY_HEAD}{' '.join(reason.split())}]"


def no_reply_reason(text: str) -> str | None:
    """The reason in a stored text block that is exactly a :func:`no_reply_mark`, else
    ``None``."""
    match = _NO_REPLY_RE.fullmatch(text)
    return match["reason"] if match else None


def is_no_reply(content: Sequence[Mapping[str, Any]]) -> str | None:
    """The reason when a stored message's ``content`` is only a :func:`no_reply_mark`, else
    ``None``."""
    if len(content) != 1 or content[0].get("type") != "text":
        return None
    text = content[0].get("text")
    return no_reply_reason(text) if isinstance(text, str) else None
