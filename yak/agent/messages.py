"""What the agent sends: the system prompt and the stored conversation as Messages API
messages (pure functions, no I/O; "The agent" in docs/architecture.md)."""

from __future__ import annotations

import platform
import sys
from datetime import datetime

from yak.domain import ChatMessage
from yak.memory.injection import memory_block

INTERRUPTED_RESULT = "Not run: the turn was interrupted before this tool call ran."


def system_prompt(
    *,
    workspace_path: str,
    memory: str,
    memory_enabled: bool,
    today: datetime | None = None,
    platform_name: str | None = None,
) -> str:
    """The chat system prompt: the memory block first, then environment facts, then rules.

    Args:
        workspace_path: the workspace root (its normalized key).
        memory: the workspace's memory document ("" when none).
        memory_enabled: the workspace's memory switch; off means no block at all.
        today: the date to state (default: now, local time).
        platform_name: the platform to state (default: this machine's).
    """
    today = today or datetime.now().astimezone()
    platform_name = platform_name or _platform_name()
    shell = "cmd.exe" if sys.platform == "win32" else "/bin/sh"
    parts = []
    block = memory_block(memory) if memory_enabled else ""
    if block:
        parts.append(block)
    parts.append(
        "Environment:\n"
        f"- Workspace (project folder): {workspace_path}\n"
        f"- Platform: {platform_name}; run_command uses {shell} in the workspace\n"
        f"- Date: {today.date().isoformat()}"
    )
    parts.append(
        "You are Yak, a coding agent working inside the workspace above with the user. Use the "
        "tools to read and search before you answer questions about the project. Paths are "
        "relative to the workspace; nothing outside it can be read or written. Writing, editing "
        "and running commands ask the user first; when a call is denied, do not retry it. Keep "
        "answers short and concrete."
    )
    return "\n\n".join(parts)


def _platform_name() -> str:
    return f"{platform.system() or sys.platform} {platform.release()} ({platform.machine()})"


# --- stored messages -> API messages --------------------------------------------------------
def clean_block(block: dict) -> dict | None:
    """A stored block as the API accepts it, or ``None`` to leave it out."""
    kind = block.get("type")
    if kind == "text":
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
    left out; the conversation starts with the user.
    """
    out: list[dict] = []
    pending: list[str] = []  # tool_use ids of the last assistant message still unanswered
    for message in history:
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
