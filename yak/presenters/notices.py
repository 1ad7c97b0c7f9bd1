"""One-off sentences of the front ends: a held reason as data, a read-only database, Test
connection, a failed turn, a folder whose memory is elsewhere, a conversation's tooltip."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from yak.domain import (
    ChatSession,
    MemorySummary,
    ModelCheck,
    SessionOrigin,
)
from yak.held import HeldLine, held_line_words
from yak.text import plural


def held_json(held: HeldLine) -> dict[str, Any]:
    """One reason a proposal waits, as data: the line held (``""`` for a reason about several
    lines or the whole rewrite), its kind, its detail, the lines it names, and its sentence."""
    return {
        "line": held.line,
        "kind": str(held.kind),
        "detail": held.detail,
        "lines": list(held.lines),
        "reason": held_line_words(held),
    }


def read_only_words(data_dir: str | None) -> str:
    """The window's banner when the database was opened read-only (a read-only or immutable
    data folder): what still works, what does not, and what to do about it."""
    where = f" in {data_dir}" if data_dir else ""
    return (
        f"Read-only: the Yak database{where} cannot be written, so changes cannot be saved "
        "(memory edits, refreshes, new messages). You can read everything. Make the folder "
        "writable and restart Yak to save changes."
    )


def connection_words(checks: Sequence[ModelCheck]) -> str:
    """What "Test connection" found, one line per model: the success sentence (which names
    the model), or ``"Memory model M: <the error's sentence>"``. When every model failed with
    the same sentence (a wrong key, no server), that sentence once."""
    errors = {check.error for check in checks}
    if len(checks) > 1 and len(errors) == 1 and None not in errors:
        return str(checks[0].error)
    return "\n".join(
        check.answered
        if check.answered is not None
        else f"{check.role.capitalize()} model {check.model}: {check.error}"
        for check in checks
    )


NO_KEY_HERE = (
    "No API key is set: enter one in the API key field above, or set ANTHROPIC_API_KEY "
    "before starting Yak."
)
"""Settings › Provider's answer to Test connection without a key (the error's own sentence
points to this page)."""


"""Settings › Provider's answer to Test connection without a key (the error's own sentence
points to this page)."""


REFRESH_STOPPED = (
    "Refresh stopped: nothing was written; its conversations wait for the next refresh."
)


def turn_failure(error: str, reason: str | None, *, front_end: str) -> str:
    """A failed turn's sentence with what to do that fits where it is read: a request the
    server refused as too large (``reason="too_large"``, HTTP 413) names the way out there.

    Args:
        error: the provider's sentence.
        reason: the provider's reason (``TurnFinished.reason``).
        front_end: ``"window"``, ``"ask"`` (a new conversation each time) or
            ``"ask_continued"`` (``yak ask --continue`` or ``--session``).
    """
    if reason != "too_large":
        return error
    advice = {
        "window": "Start a new conversation (Ctrl+N), or send a shorter message.",
        "ask": "Send a shorter prompt.",
        "ask_continued": (
            "Send a shorter prompt, or ask without --continue or --session to start a new "
            "conversation."
        ),
    }[front_end]
    return f"{error} {advice}"


# --- a folder without a memory of its own ---------------------------------------------------
def enclosing_words(path: str, enclosing: MemorySummary) -> str:
    """The sentence for a folder with no memory of its own inside a workspace that has one
    (``yak memory show``, ``yak ask``, the MCP tools): the enclosing path, its size and the
    command that reads it."""
    where = enclosing.workspace.path
    return (
        f"{path} has no memory of its own; the enclosing workspace {where} has "
        f"{plural(enclosing.lines, 'line')}: 'yak memory show -w {shlex.quote(where)}'"
    )


def renamed_words(path: str, orphan: MemorySummary) -> str:
    """The sentence for a folder with no memory that looks like a workspace whose folder is
    gone (renamed or moved): the old path, its size and the ``reattach`` command that moves
    its memory here (or declines it)."""
    old = orphan.workspace.path
    return (
        f"{path} looks like {old}, which no longer exists and has a memory of "
        f"{plural(orphan.lines, 'line')}: 'yak memory reattach {shlex.quote(old)} -w "
        f"{shlex.quote(path)}' moves it here."
    )


# --- conversations ------------------------------------------------------------------------------
def session_tooltip(session: ChatSession) -> str:
    """The conversation list's tooltip: the whole title and, for a conversation a one-shot
    ``yak ask`` started on the command line, that it did (the list marks it too)."""
    if session.origin is SessionOrigin.ASK:
        return f"{session.title}\nStarted with 'yak ask' on the command line"
    return session.title
