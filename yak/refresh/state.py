"""Where a workspace's refresh stands, and the sentences every front end shows about it (pure
data and functions, no I/O): the refresh state the scheduler's ``snapshot()`` returns
(:class:`RefreshState`) and its status line (:func:`refresh_status`), the memory list's status
cell, the ceiling check the editor runs before it asks to save, the floor question it asks before
a save that collapses the document (:func:`shrink_question`), and one-line outcome sentences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from yak.domain import (
    FLOOR_MIN_CHARS,
    FLOOR_RATIO,
    RefreshAttempt,
    RefreshOutcome,
    RefreshState,
    RefreshStatus,
    Workspace,
    count_lines,
)
from yak.memory.document import ceiling_message
from yak.memory.guards import check_rewrite, non_blank_lines
from yak.text import plural

__all__ = [
    "EXPORT_FORMATS",
    "PAUSED_TEXT",
    "UNFOLDED_TEXT",
    "UNFOLDED_TIP",
    "LastRefresh",
    "StatusLine",
    "ceiling_message",
    "default_export_name",
    "describe_outcome",
    "list_status",
    "missing_key",
    "refresh_status",
    "shrink_question",
]

# Export formats and the file suffix each gets by default (the command line and the Export… dialog).
EXPORT_FORMATS = {"text": ".txt", "markdown": ".md", "json": ".json"}

# The refresher flags a provider failure "provider:<reason>"; a missing key's reason is "no_key".
MISSING_KEY_FLAG = "provider:no_key"
PAUSED = "paused"
PAUSED_TEXT = "refresh paused: no API key — add one in Settings › Provider"

_REFUSED = {
    RefreshStatus.REFUSED_FLOOR,
    RefreshStatus.REFUSED_CEILING,
    RefreshStatus.REFUSED_EMPTY,
    RefreshStatus.REFUSED_PLACEHOLDER,
    RefreshStatus.REFUSED_NOT_DOCUMENT,
}


@dataclass(frozen=True)
class LastRefresh:
    """A workspace's newest refresh attempt, as the memory list needs it (no reply).

    Attributes:
        status: the attempt's outcome.
        reason: why, in a sentence.
        created_at: when the attempt was recorded (UTC).
        flags: the attempt's flags (``provider:no_key``…).
    """

    status: RefreshStatus
    reason: str
    created_at: datetime
    flags: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatusLine:
    """The memory panel's status line.

    Attributes:
        kind: ``"up_to_date"``, ``"pending"``, ``"running"``, ``"review"`` (a proposal waits),
            ``"refused"``, ``"failed"``, ``"off"`` (memory switched off), ``"unfolded"``
            (conversations wait to be folded in and nothing is queued), or
            the two that are advice rather than alarm: ``"paused"`` (no API key, automatic
            refreshes wait) and ``"no_key"`` (a forced refresh failed for want of a key).
        text: what the user reads, e.g. ``"pending in 8 s"`` or ``"refused: the reply …"``.
        action: the button offered beside it: ``"review"`` (open the proposal waiting),
            ``"diff"`` (the last refresh's changes), ``"view"`` (open the refused reply),
            ``"retry"`` (run the refresh again), ``"add_key"`` (open Settings › Provider) or
            ``None``.
    """

    kind: str
    text: str
    action: str | None = None


def refresh_status(state: RefreshState, *, due_in: float | None = None) -> StatusLine:
    """The status line for ``state``.

    Running and pending win; then a forced refresh that failed for want of an API key (while
    none is known to be available), then the pause of automatic refreshes without a key; otherwise
    the last attempt speaks, unless the document was written after it (a hand edit after a
    refusal is the newest word, so the line says up to date).

    Args:
        state: the workspace's refresh state.
        due_in: seconds left until a pending refresh (defaults to ``state.due_in``); shown
            rounded up to whole seconds.
    """
    if state.state == "running":
        return StatusLine("running", "refreshing…")
    if not state.memory_enabled:
        return StatusLine("off", "memory off: not used in conversations nor refreshed")
    if state.state == "pending":
        left = state.due_in if due_in is None else due_in
        seconds = max(0, math.ceil(left or 0.0))
        return StatusLine("pending", f"pending in {seconds} s")
    attempt = state.last_attempt
    newer_write = (
        attempt is not None
        and state.document_updated_at is not None
        and state.document_updated_at > attempt.created_at
    )
    if (
        attempt is not None
        and not newer_write
        and missing_key(attempt)
        and state.key_available is not True
    ):
        return StatusLine("no_key", f"failed: {attempt.reason}", "add_key")
    if state.state == PAUSED:
        return StatusLine("paused", PAUSED_TEXT, "add_key")
    if state.proposals:
        waiting = f"{plural(state.proposals, 'change')} to review"
        if attempt is not None and not newer_write:
            status = RefreshStatus(attempt.status)
            if status in _REFUSED or status in (RefreshStatus.FAILED, RefreshStatus.SUPERSEDED):
                # a refresh after the proposal went wrong: say so, the review still waits
                waiting += f" · last refresh {status.value.partition('_')[0]}: {attempt.reason}"
        return StatusLine("review", waiting, "review")
    if attempt is None or newer_write:
        return _settled(state)
    status = RefreshStatus(attempt.status)
    if status is RefreshStatus.APPLIED and (attempt.added or attempt.removed):
        return StatusLine("up_to_date", f"refreshed: +{attempt.added} −{attempt.removed}", "diff")
    if status in _REFUSED:
        return StatusLine("refused", f"refused: {attempt.reason}", "view")
    if status in (RefreshStatus.FAILED, RefreshStatus.SUPERSEDED):
        return StatusLine(
            "failed",
            f"{'failed' if status is RefreshStatus.FAILED else 'superseded'}: {attempt.reason}",
            "retry",
        )
    return _settled(state)


def _settled(state: RefreshState) -> StatusLine:
    """Nothing runs, waits or went wrong: up to date, unless conversations still wait to be
    folded in (after a hand edit over a refusal, a trimmed save or a restore); the panel's
    Refresh button folds them in."""
    if state.unfolded:
        return StatusLine("unfolded", "new conversations not folded in yet")
    return StatusLine("up_to_date", "up to date")


UNFOLDED_TEXT = "not folded in yet"
UNFOLDED_TIP = "New conversations wait to be folded into the memory; Refresh folds them in."


def list_status(
    last: LastRefresh | None,
    *,
    updated_at: datetime | None = None,
    paused: bool = False,
    unfolded: bool = False,
) -> tuple[str, str]:
    """The memory list's Status cell for a workspace, and its tooltip.

    Args:
        last: the newest refresh attempt, or ``None`` when there was none.
        updated_at: when the document was last written; a write after the attempt (a hand
            edit after a refusal) is the newest word, so the cell says up to date.
        paused: the workspace's automatic refresh waits for an API key.
        unfolded: conversations wait to be folded in; the cell then never says up to date.

    Returns:
        ``(text, tooltip)``: ``("paused", …)``, ``("not folded in yet", …)``,
        ``("up to date", …)``, the outcome's own name
        for the rest (``"refused_floor"``, ``"failed"``, ``"superseded"``…) with its reason as
        the tooltip, or ``("", "")`` when nothing was ever attempted.
    """
    if paused:
        return PAUSED, PAUSED_TEXT
    if last is None:
        return (UNFOLDED_TEXT, UNFOLDED_TIP) if unfolded else ("", "")
    settled = (updated_at is not None and updated_at > last.created_at) or RefreshStatus(
        last.status
    ) in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE)
    if settled and unfolded:
        return UNFOLDED_TEXT, UNFOLDED_TIP
    if updated_at is not None and updated_at > last.created_at:
        return "up to date", "The memory was written after the last refresh."
    status = RefreshStatus(last.status)
    if status in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE):
        return "up to date", last.reason
    return status.value, last.reason


def missing_key(result: RefreshAttempt | RefreshOutcome | LastRefresh) -> bool:
    """Whether a refresh attempt (or outcome) failed because no API key was available."""
    return RefreshStatus(result.status) is RefreshStatus.FAILED and MISSING_KEY_FLAG in result.flags


def describe_outcome(outcome: RefreshOutcome) -> str:
    """One line for a finished forced refresh in words, e.g. ``"Refreshed: version 4, 57
    lines"`` or ``"Refresh refused: <reason>"`` (the status codes are for scripts)."""
    status = RefreshStatus(outcome.status)
    if status is RefreshStatus.APPLIED:
        return f"Refreshed: version {outcome.version}, {outcome.lines} lines"
    if status is RefreshStatus.UP_TO_DATE:
        return f"Up to date: nothing new to fold in (version {outcome.version})"
    if status is RefreshStatus.NEEDS_REVIEW:
        return f"Refresh waits for your review: {outcome.reason}"
    if status in _REFUSED:
        return f"Refresh refused: {outcome.reason}"
    if status is RefreshStatus.SUPERSEDED:
        return f"Refresh superseded: {outcome.reason}"
    return f"Refresh failed: {outcome.reason}"


def default_export_name(workspace: Workspace, fmt: str) -> str:
    """A file name for exporting ``workspace``'s memory as ``fmt``, e.g. ``proj-memory.md``."""
    return f"{workspace.name}-memory{EXPORT_FORMATS.get(fmt, '.txt')}"


def shrink_question(previous: str, new: str) -> str | None:
    """The question to ask before a hand save of ``new`` over ``previous`` when it would
    collapse the document by the floor rule ("The memory document" in docs/architecture.md), or
    when it empties it.

    A human may shrink the memory on purpose, so this never refuses; it only says how much goes.
    Rewording a very short document (under 100 characters) is a normal edit and asks nothing;
    emptying any document asks.

    Args:
        previous: the stored document the edits are based on.
        new: the text about to be saved.

    Returns:
        E.g. ``"This replaces 36 lines with 1 line (it keeps under half of the document).
        Save anyway?"``, or ``None`` when the save needs no question (a normal edit, or
        ``previous`` is empty or under 100 characters and ``new`` is not empty).
    """
    if not previous.strip():
        return None
    before = plural(count_lines(previous), "line")
    if not new.strip():
        return f"This replaces {before} with nothing (it empties the document). Save anyway?"
    if (
        len(previous) < FLOOR_MIN_CHARS
        or check_rewrite(previous, new).status is not RefreshStatus.REFUSED_FLOOR
    ):
        return None
    kept_lines = non_blank_lines(new) / max(1, non_blank_lines(previous))
    if kept_lines < FLOOR_RATIO or len(new) < FLOOR_RATIO * len(previous):
        how = (
            "it keeps under half of the document"
            if FLOOR_RATIO == 0.5
            else f"it keeps under {FLOOR_RATIO:.0%} of the document"
        )
    else:
        how = f"it leaves {len(new)} characters of {len(previous):,}"
    return f"This replaces {before} with {plural(count_lines(new), 'line')} ({how}). Save anyway?"
