"""What the agent sends: the system prompt, the stored conversation as Messages API messages, and
the prompt-cache breakpoints (pure functions, no I/O; "The agent" in docs/agent.md).

The prompt cache: a request is read in the API's order (tools, then the system blocks, then the
messages), and every prefix that ends at a ``cache_control`` breakpoint is cached for five
minutes; a later request whose prefix is byte-identical up to a breakpoint reads it from the
cache. The agent marks four breakpoints (the API allows at most :data:`MAX_BREAKPOINTS`):

1. the last tool definition (the tools never change);
2. the static instructions, the first system block: byte-identical for every session of every
   workspace, so nothing volatile (date, path, memory) goes in it;
3. the session block, the second system block: the instruction files' block, the memory block
   and the environment facts,
   built once when the session's first turn starts, stored with the session and reused
   byte-identical on every later request, also after a restart (a memory refresh takes effect
   in the next session);
4. the last block of the last message, so each request reads the previous one's prefix (the
   conversation grows only at its end).

A hand edit of the memory made after the session block was taken reaches the agent as a stored
:data:`MEMORY_NOTE` block at the head of the next user turn (:func:`memory_edit_note`), which
is sent as text; the system prompt is never rebuilt.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from yak.agent.types import is_no_reply
from yak.domain import ChatMessage
from yak.memory.prompts.injection import memory_block

INTERRUPTED_RESULT = "Not run: the turn was interrupted before this tool call ran."

MAX_BREAKPOINTS = 4  # the Messages API refuses a request with more cache_control blocks
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}  # the cache_control of every breakpoint (5 min)

STATIC_INSTRUCTIONS = (
    "You are Yak, a coding agent working with the user inside one project folder, the workspace "
    "named under Environment below. Use the tools to read and search before you answer questions "
    "about the project. Paths are relative to the workspace; nothing outside it can be read or "
    "written. Writing, editing and running commands ask the user first; when a call is denied, do "
    "not retry it. Keep answers short and concrete."
)

# A stored user-message block that carries a note from Yak rather than the user's words: the API
# gets its ``text`` as a text block; the transcript and the memory refresh leave it out.
MEMORY_NOTE = "memory_note"
EDITED_NOTE = (
    "[The user edited the workspace memory since this conversation started; the current "
    "document follows and replaces any earlier copy.]"
)
CLEARED_NOTE = (
    "[The user cleared the workspace memory since this conversation started; disregard any "
    "earlier copy of it.]"
)


def session_block(
    *,
    workspace_path: str,
    memory: str,
    memory_enabled: bool,
    instructions: str = "",
    memory_notes: Mapping[int, Sequence[str]] | None = None,
    memory_date: date | None = None,
    today: datetime | None = None,
    platform_name: str | None = None,
) -> str:
    """The session block of the system prompt: the instruction files' block (the user's
    instructions), the memory block (background notes), then environment facts.

    Built once per session (when its first turn starts) and stored with it: the date is the day
    the conversation started.

    Args:
        workspace_path: the workspace root (its normalized key).
        memory: the workspace's memory document ("" when none).
        memory_enabled: the workspace's memory switch; off means no memory block.
        instructions: the instruction files' block (``yak.agent.instructions``; "" for none),
            sent whether memory is on or off.
        memory_notes: notes on the memory's lines for the model by 0-based index
            (``memory_block``'s ``line_notes``): a reference that is gone, a line's age.
        memory_date: the memory document's date (its last write).
        today: the date to state (default: now, local time).
        platform_name: the platform to state (default: this machine's).
    """
    today = today or datetime.now().astimezone()
    platform_name = platform_name or _platform_name()
    shell = "cmd.exe" if sys.platform == "win32" else "/bin/sh"
    parts = [instructions] if instructions else []
    block = (
        memory_block(memory, line_notes=memory_notes, written_on=memory_date)
        if memory_enabled
        else ""
    )
    if block:
        parts.append(block)
    parts.append(
        "Environment:\n"
        f"- Workspace (project folder): {workspace_path}\n"
        f"- Platform: {platform_name}; run_command uses {shell} in the workspace\n"
        f"- Date (when this conversation started): {today.date().isoformat()}"
    )
    return "\n\n".join(parts)


def system_blocks(session: str) -> list[dict[str, Any]]:
    """The system prompt as sent: the static instructions, then the session block (see
    :func:`session_block`), each ending in a cache breakpoint."""
    return [_cached({"type": "text", "text": text}) for text in (STATIC_INSTRUCTIONS, session)]


def cached_tools(definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool definitions with a cache breakpoint on the last one (copies; the input is left
    as it was)."""
    if not definitions:
        return []
    return [*definitions[:-1], _cached(definitions[-1])]


def with_cache_breakpoint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with a cache breakpoint on the last block of its last message, so the
    next request reads this one's prefix from the cache. Copies only what changes: the list
    given (which the agent keeps appending to) and the stored blocks stay without it."""
    if not messages:
        return []
    last = messages[-1]
    content = last.get("content")
    if isinstance(content, str):
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}]
    else:
        blocks = list(content or [])
    if not blocks:
        return list(messages)
    blocks[-1] = _cached(blocks[-1])
    return [*messages[:-1], {**last, "content": blocks}]


def count_breakpoints(
    system: str | list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
) -> int:
    """How many ``cache_control`` breakpoints a request carries (the API allows 4)."""
    blocks: list[Any] = list(tools or [])
    if not isinstance(system, str):
        blocks.extend(system)
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            blocks.extend(content or [])
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)


def memory_edit_note(content: str, version: int) -> dict[str, Any]:
    """The stored block that tells the agent about a hand edit of the memory made after its
    session block was taken: a one-line note, then the current document as a memory block
    (tags neutralized), or only a note when the document is now empty.

    Args:
        content: the memory document now.
        version: its version (kept in the block; the API never sees it).
    """
    block = memory_block(content)
    text = f"{EDITED_NOTE}\n{block}" if block else CLEARED_NOTE
    return {"type": MEMORY_NOTE, "text": text, "version": version}


def _cached(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": dict(EPHEMERAL)}


def _platform_name() -> str:
    return f"{platform.system() or sys.platform} {platform.release()} ({platform.machine()})"


# --- stored messages -> API messages --------------------------------------------------------
def clean_block(block: dict) -> dict | None:
    """A stored block as the API accepts it, or ``None`` to leave it out (a
    :data:`MEMORY_NOTE` becomes a text block)."""
    kind = block.get("type")
    if kind in ("text", MEMORY_NOTE):
        text = block.get("text")
        return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block.get("id"),
            "name": block.get("name"),
            "input": block.get("input") if isinstance(block.get("input"), dict) else {},
        }
    if kind == "tool_result":
        out = {
            "type": "tool_result",
            "tool_use_id": block.get("tool_use_id"),
            "content": block.get("content") if block.get("content") is not None else "",
        }
        if block.get("is_error"):
            out["is_error"] = True
        return out
    return None  # thinking and unknown blocks are not replayed


def to_api_messages(history: list[ChatMessage]) -> list[dict]:
    """Turn stored messages into a valid Messages API conversation.

    Repairs what an interrupted turn (a crash, an older Yak) can leave behind: consecutive
    messages of one role are merged; a tool call without a result gets an "interrupted" result;
    results without their call are dropped; results come first in their message; empty text is
    left out; the conversation starts with the user; the mark of a turn that got no reply
    (``yak.agent.types.no_reply_mark``) is left out, so its question and the next one are one
    user turn, as if it had never been stored.
    """
    out: list[dict] = []
    pending: list[str] = []  # tool_use ids of the last assistant message still unanswered
    for message in history:
        if message.role == "assistant" and is_no_reply(message.content) is not None:
            continue  # a turn that got no reply: nothing the model said
        blocks = [b for b in (clean_block(dict(x)) for x in message.content) if b]
        if message.role == "assistant":
            if pending:
                _append(out, "user", [tool_result(i, INTERRUPTED_RESULT) for i in pending])
                pending = []
            if not out:
                continue  # the API wants the user first
            if blocks:
                _append(out, "assistant", blocks)
                pending = [b["id"] for b in blocks if b["type"] == "tool_use"]
        else:
            results = {b["tool_use_id"]: b for b in blocks if b["type"] == "tool_result"}
            others = [b for b in blocks if b["type"] != "tool_result"]
            answered = [results.get(i) or tool_result(i, INTERRUPTED_RESULT) for i in pending]
            pending = []
            if answered or others:
                _append(out, "user", answered + others)
    if pending:
        _append(out, "user", [tool_result(i, INTERRUPTED_RESULT) for i in pending])
    return out


def _append(out: list[dict], role: str, blocks: list[dict]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": list(blocks)})


def tool_result(tool_use_id: str, text: str, *, is_error: bool = True) -> dict:
    block: dict[str, object] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}
    if is_error:
        block["is_error"] = True
    return block
