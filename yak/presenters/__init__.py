"""The words and colour names every front end shows for the state of a memory (pure functions,
no I/O, no Qt): the memory panel's status line, the memory list's Status cell, the sentence for
a finished refresh (the window's and the command line's), and what a revision's source is
called. Light to import (the domain types only): every ``yak`` command that prints may load it.

The window and the command line read one table, so a state is called the same everywhere.
Colours are named here (:class:`Colour`); the window maps each name to a colour in one place
(``yak.ui.colours``). The stored codes (``refused_floor``, ``hand``…) are for scripts; these
words are for people.

Its parts, each imported here: ``outcomes`` (an outcome's short label), ``origins`` (why a line
is there, who wrote a version), ``upkeep`` (the memory's cost, the rewrite forms),
``freshness`` (lines naming what is gone) and ``notices`` (the front ends' one-off sentences).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from yak.domain import (
    STORE_ERROR,
    Proposal,
    ProposalOrigin,
    ProposalStatus,
    QueueState,
    RefreshAttempt,
    RefreshOutcome,
    RefreshState,
    RefreshStatus,
    ReviewMode,
)
from yak.held import HeldKind, capability_words, held_line_words
from yak.presenters.freshness import GAVE_UP_TEXT, gone_detail, gone_summary
from yak.presenters.notices import (
    NO_KEY_HERE,
    REFRESH_STOPPED,
    connection_words,
    enclosing_words,
    held_json,
    read_only_words,
    renamed_words,
    session_tooltip,
    turn_failure,
)
from yak.presenters.origins import (
    NO_EVIDENCE,
    SHORT_ID_CHARS,
    TYPED_BY_YOU,
    age_words,
    change_words,
    evidence_words,
    local_time,
    source_label,
    source_text,
    stale_reason_words,
)
from yak.presenters.outcomes import outcome_label
from yak.presenters.upkeep import (
    form_counts,
    forms_words,
    found_form_words,
    token_count,
    token_size,
    upkeep_line,
)
from yak.text import plural, shorten

__all__ = [
    "GAVE_UP_TEXT",
    "age_words",
    "stale_reason_words",
    "NO_EVIDENCE",
    "NO_KEY_HERE",
    "PAUSED_TEXT",
    "REFRESH_STOPPED",
    "SHORT_ID_CHARS",
    "TYPED_BY_YOU",
    "UNFOLDED_TEXT",
    "UNFOLDED_TIP",
    "Colour",
    "StatusAction",
    "StatusKind",
    "StatusLine",
    "action_words",
    "change_words",
    "connection_words",
    "describe_outcome",
    "enclosing_words",
    "evidence_words",
    "form_counts",
    "forms_words",
    "found_form_words",
    "gone_detail",
    "gone_summary",
    "held_json",
    "held_line_words",
    "list_colour",
    "list_status",
    "local_time",
    "mode_words",
    "outcome_label",
    "outcome_lead",
    "read_only_words",
    "refresh_status",
    "refresh_summary",
    "renamed_words",
    "session_tooltip",
    "source_label",
    "source_text",
    "status_colour",
    "token_count",
    "token_size",
    "turn_failure",
    "turn_refresh_line",
    "upkeep_line",
]


class StatusKind(StrEnum):
    """What the memory panel's status line says about a workspace's refresh."""

    UP_TO_DATE = "up_to_date"
    PENDING = "pending"
    RUNNING = "running"
    REVIEW = "review"  # a proposal waits
    REFUSED = "refused"
    FAILED = "failed"
    OFF = "off"  # memory switched off
    UNFOLDED = "unfolded"  # conversations wait to be folded in and nothing is queued
    PAUSED = "paused"  # advice: no API key, automatic refreshes wait
    NO_KEY = "no_key"  # advice: a forced refresh failed for want of a key


class StatusAction(StrEnum):
    """The button offered beside the status line."""

    REVIEW = "review"  # open the proposal waiting
    DIFF = "diff"  # the last refresh's changes
    VIEW = "view"  # open the refused reply
    RETRY = "retry"  # run the refresh again
    ADD_KEY = "add_key"  # open Settings › Provider
    STOP = "stop"  # cancel the refresh in flight


class Colour(StrEnum):
    """A colour by what it means; the window maps each to one colour (``yak.ui.colours``)."""

    ALARM = "alarm"  # something failed: a failed refresh, an error line, over the ceiling
    WARNING = "warning"  # something needs a look: refused, superseded, a proposal waiting
    BUSY = "busy"  # work under way: pending, running
    MUTED = "muted"  # a row that no longer applies (an orphaned workspace)


@dataclass(frozen=True)
class StatusLine:
    """The memory panel's status line.

    Attributes:
        kind: what it says (the colour follows from it: :func:`status_colour`).
        text: what the user reads, e.g. ``"pending in 8 s"`` or ``"refused: the reply …"``.
        action: the button offered beside it, or ``None``.
    """

    kind: StatusKind
    text: str
    action: StatusAction | None = None


PAUSED_TEXT = "refresh paused: no API key — add one in Settings › Provider"
# A paused run's outcome (``RefreshStatus.PAUSED``), after "Refresh paused: ".
_PAUSED_WAIT = "no API key; its conversations wait until one is added, and nothing was sent."
UNFOLDED_TEXT = "not folded in yet"
UNFOLDED_TIP = "New conversations wait to be folded into the memory; Refresh folds them in."

_REFUSED = frozenset(
    {
        RefreshStatus.REFUSED_FLOOR,
        RefreshStatus.REFUSED_CEILING,
        RefreshStatus.REFUSED_EMPTY,
        RefreshStatus.REFUSED_PLACEHOLDER,
        RefreshStatus.REFUSED_NOT_DOCUMENT,
    }
)
_SETTLED = (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE)

# "paused" and "no_key" (no API key yet) are advice, in the normal text colour.
_STATUS_COLOURS = {
    StatusKind.REVIEW: Colour.WARNING,
    StatusKind.REFUSED: Colour.WARNING,
    StatusKind.FAILED: Colour.ALARM,
    StatusKind.RUNNING: Colour.BUSY,
    StatusKind.PENDING: Colour.BUSY,
}

# The button beside the status line: its text and its tooltip.
_ACTION_WORDS = {
    StatusAction.REVIEW: ("Review…", "See the change, why it waits, and accept or reject it"),
    StatusAction.DIFF: ("Diff", "See what the last refresh changed"),
    StatusAction.VIEW: ("View", "See the refused reply against the document"),
    StatusAction.RETRY: ("Retry", "Run the refresh again"),
    StatusAction.ADD_KEY: ("Add key…", "Open Settings › Provider to add an Anthropic API key"),
    StatusAction.STOP: (
        "Stop",
        "Stop this refresh: nothing is written, and its conversations wait for the next one",
    ),
}


def status_colour(kind: StatusKind) -> Colour | None:
    """The colour of a status line of ``kind``, or ``None`` for the normal text colour."""
    return _STATUS_COLOURS.get(kind)


def action_words(action: StatusAction) -> tuple[str, str]:
    """The status line's button for ``action``: ``(text, tooltip)``."""
    return _ACTION_WORDS[action]


def refresh_status(
    state: RefreshState, *, due_in: float | None = None, running_for: float | None = None
) -> StatusLine:
    """The status line for ``state``.

    Running and pending win; then a forced refresh that failed for want of an API key (while
    none is known to be available), then the pause of automatic refreshes without a key; otherwise
    the last attempt speaks, unless the document was written after it (a hand edit after a
    refusal is the newest word, so the line says up to date).

    Args:
        state: the workspace's refresh state.
        due_in: seconds left until a pending refresh (defaults to ``state.due_in``); shown
            rounded up to whole seconds.
        running_for: seconds since the refresh in flight started (defaults to
            ``state.running_for``); shown as whole seconds, with Stop beside it.
    """
    if state.state is QueueState.RUNNING:
        elapsed = state.running_for if running_for is None else running_for
        text = "refreshing…" if elapsed is None else f"refreshing… {int(max(elapsed, 0.0))} s"
        return StatusLine(StatusKind.RUNNING, text, StatusAction.STOP)
    if not state.memory_enabled:
        return StatusLine(StatusKind.OFF, "memory off: not used in conversations nor refreshed")
    if state.state is QueueState.PENDING:
        left = state.due_in if due_in is None else due_in
        seconds = max(0, math.ceil(left or 0.0))
        return StatusLine(StatusKind.PENDING, f"pending in {seconds} s")
    attempt = state.last_attempt
    newer_write = (
        attempt is not None
        and state.document_updated_at is not None
        and state.document_updated_at > attempt.created_at
    )
    if (
        attempt is not None
        and not newer_write
        and state.missing_key
        and state.key_available is not True
    ):
        return StatusLine(StatusKind.NO_KEY, f"failed: {attempt.reason}", StatusAction.ADD_KEY)
    if state.state is QueueState.PAUSED:
        return StatusLine(StatusKind.PAUSED, PAUSED_TEXT, StatusAction.ADD_KEY)
    if state.proposals:
        waiting = f"{plural(state.proposals, 'change')} to review"
        if attempt is not None and not newer_write:
            status = RefreshStatus(attempt.status)
            if status in _REFUSED or status in (RefreshStatus.FAILED, RefreshStatus.SUPERSEDED):
                # a refresh after the proposal went wrong: say so, the review still waits
                waiting += f" · last refresh {status.value.partition('_')[0]}: {attempt.reason}"
            elif status is RefreshStatus.APPLIED and attempt.proposal_id is not None:
                # applied in part: its supported lines are in, the doubtful ones wait
                waiting = f"refreshed: +{attempt.added} −{attempt.removed} · {waiting}"
        return StatusLine(StatusKind.REVIEW, waiting, StatusAction.REVIEW)
    if attempt is None or newer_write:
        return _settled(state)
    status = RefreshStatus(attempt.status)
    if status is RefreshStatus.APPLIED and (attempt.added or attempt.removed):
        return StatusLine(
            StatusKind.UP_TO_DATE,
            f"refreshed: +{attempt.added} −{attempt.removed}",
            StatusAction.DIFF,
        )
    if status in _REFUSED:
        return StatusLine(StatusKind.REFUSED, f"refused: {attempt.reason}", StatusAction.VIEW)
    if status in (RefreshStatus.FAILED, RefreshStatus.SUPERSEDED):
        return StatusLine(
            StatusKind.FAILED,
            f"{'failed' if status is RefreshStatus.FAILED else 'superseded'}: {attempt.reason}",
            StatusAction.RETRY,
        )
    return _settled(state)


def _settled(state: RefreshState) -> StatusLine:
    """Nothing runs, waits or went wrong: up to date, unless conversations still wait to be
    folded in (after a hand edit over a refusal, a trimmed save or a restore); the panel's
    Refresh button folds them in."""
    if state.unfolded:
        return StatusLine(StatusKind.UNFOLDED, "new conversations not folded in yet")
    return StatusLine(StatusKind.UP_TO_DATE, "up to date")


# --- the memory list's Status cell ------------------------------------------------------------
# The list's colours by an outcome label's first word; "paused" and "up" (to date) stay in the
# normal text colour.
_LIST_COLOURS = {"failed": Colour.ALARM, "refused": Colour.WARNING, "superseded": Colour.WARNING}


def list_colour(label: str) -> Colour | None:
    """The colour of a Status cell reading ``label`` (``"refused: too short"``), or ``None``."""
    return _LIST_COLOURS.get(label.replace(":", " ").split(" ", 1)[0])


def waiting_for_you(count: int) -> str:
    """How many changes to the memory wait for the person's review, as the Settings list, the
    window's recent workspaces and ``yak memory list`` say it: ``1 change waiting for you``,
    ``3 changes waiting for you`` (``""`` for none)."""
    return f"{plural(count, 'change')} waiting for you" if count > 0 else ""


REVIEW_HOW = "Review them in the memory panel (Review…) or with yak memory review."


def list_status(
    state: RefreshState, *, updated_at: datetime | None, waiting: int = 0
) -> tuple[str, str]:
    """The memory list's Status cell for a workspace, and its tooltip.

    Args:
        state: the workspace's refresh state (paused, last attempt, unfolded conversations:
            these never let the cell say up to date).
        updated_at: when the document was last written, as the list's row has it; a write
            after the attempt (a hand edit after a refusal) is the newest word, so the cell
            says up to date.
        waiting: how many proposals wait for review; any is the cell's first word, whatever
            the last refresh did.

    Returns:
        ``(text, tooltip)``: ``("2 changes waiting for you", …)``, ``("paused", …)``,
        ``("not folded in yet", …)``, ``("up to date", …)``, the outcome's label for the rest
        (``"refused: too short"``, ``"failed"``, ``"superseded"``…) with its reason as the
        tooltip, or ``("", "")`` when nothing was ever attempted.
    """
    if waiting > 0:
        return waiting_for_you(waiting), REVIEW_HOW
    if state.state is QueueState.PAUSED:
        return "paused", PAUSED_TEXT
    last = state.last_attempt
    if last is None:
        return (UNFOLDED_TEXT, UNFOLDED_TIP) if state.unfolded else ("", "")
    written_after = updated_at is not None and updated_at > last.created_at
    status = RefreshStatus(last.status)
    if (written_after or status in _SETTLED) and state.unfolded:
        return UNFOLDED_TEXT, UNFOLDED_TIP
    if written_after:
        return "up to date", "The memory was written after the last refresh."
    if status in _SETTLED:
        return "up to date", last.reason
    return attempt_outcome(last), last.reason


# --- a finished refresh, in a sentence --------------------------------------------------------
# How a finished refresh begins its sentence, in the window's status bar and on the command
# line alike (``yak memory refresh``, the refresh after ``yak ask``): the one table of these
# words. The status codes (``up_to_date``, ``refused_floor``…) are for scripts, in ``--json``.
_OUTCOME_LEADS: dict[RefreshStatus, str] = {
    RefreshStatus.APPLIED: "Refreshed",
    RefreshStatus.UP_TO_DATE: "Up to date",
    RefreshStatus.NEEDS_REVIEW: "Refresh waits for your review",
    **dict.fromkeys(_REFUSED, "Refresh refused"),
    RefreshStatus.SUPERSEDED: "Refresh superseded",
    RefreshStatus.FAILED: "Refresh failed",
    RefreshStatus.PAUSED: "Refresh paused",
}


def outcome_lead(status: str) -> str:
    """How a finished refresh's sentence begins: ``"applied"`` → ``"Refreshed"``,
    ``"refused_floor"`` → ``"Refresh refused"``, ``"needs_review"`` → ``"Refresh waits for
    your review"``."""
    try:
        return _OUTCOME_LEADS[RefreshStatus(status)]
    except ValueError:
        return f"Refresh {status.replace('_', ' ')}"


def describe_outcome(outcome: RefreshOutcome) -> str:
    """One line for a finished forced refresh in the window, e.g. ``"Refreshed: version 4, 57
    lines"`` or ``"Refresh refused: <reason>"`` (the status codes are for scripts)."""
    status = RefreshStatus(outcome.status)
    lead = outcome_lead(status)
    if status is RefreshStatus.APPLIED:
        return f"{lead}: version {outcome.version}, {plural(outcome.lines, 'line')}"
    if status is RefreshStatus.UP_TO_DATE:
        return f"{lead}: nothing new to fold in (version {outcome.version})"
    if status is RefreshStatus.PAUSED:
        return f"{lead}: {_PAUSED_WAIT}"
    return f"{lead}: {outcome.reason}"


def refresh_summary(outcome: RefreshOutcome) -> str:
    """``yak memory refresh``'s one-line report, in the window's words (:func:`outcome_lead`)
    with the size and what to do next, e.g. ``Refreshed: version 4, 57 lines, +3 −1`` or
    ``Refresh refused: the reply kept 12 of 150 lines (8%; …); the document is unchanged
    (version 4, 150 lines).`` Scripts read the status code from ``--json``."""
    status, reason = outcome.status, outcome.reason.rstrip(". ")
    lead = outcome_lead(status)
    size = f"version {outcome.version}, {plural(outcome.lines, 'line')}"
    if status is RefreshStatus.APPLIED:
        changes = f"+{outcome.added} −{outcome.removed}"
        line = f"{lead}: {size}, {changes}" + (f" ({reason})" if reason else "")
        if outcome.proposal_id is not None:  # applied in part; the doubtful lines wait
            line += f". See what waits with 'yak memory review {outcome.proposal_id}'."
        return line
    if status is RefreshStatus.UP_TO_DATE:
        return f"{lead}: {reason}; {size}" if reason else f"{lead}: {size}"
    if status is RefreshStatus.NEEDS_REVIEW:
        return (
            f"{lead}: {reason}; the document is unchanged ({size}). See it with "
            f"'yak memory review {outcome.proposal_id}', then accept or reject it."
        )
    if status is RefreshStatus.PAUSED:  # the document was not read: no size to give
        return f"{lead}: {_PAUSED_WAIT}"
    if STORE_ERROR in outcome.flags:  # the document may not even be readable: no size to give
        return f"{lead}: {reason}; nothing was changed."
    return f"{lead}: {reason}; the document is unchanged ({size})."


# The memory refresh after ``yak ask``, on stderr (stdout stays the answer).
REFRESHING_AFTER_TURN = "Refreshing the memory… (Ctrl-C skips it)"
REFRESH_SKIPPED = (
    "Memory refresh skipped; the answer is kept, and the next refresh folds this conversation in."
)


def turn_refresh_line(outcome: RefreshOutcome) -> str:
    """The line ``yak ask`` prints about the refresh after its turn, in the window's words:
    ``Memory refreshed: version 4, 57 lines``, ``Memory up to date: version 4, 57 lines``, or
    ``yak: memory refresh refused: <reason>; the memory document is unchanged.``"""
    size = f"version {outcome.version}, {plural(outcome.lines, 'line')}"
    if outcome.status is RefreshStatus.APPLIED:  # applied in part: the doubtful lines wait
        waits = f"; some lines wait for review ('yak memory review {outcome.proposal_id}')"
        return f"Memory refreshed: {size}" + (waits if outcome.proposal_id else "")
    if outcome.status is RefreshStatus.UP_TO_DATE:
        return f"Memory up to date: {size}"
    lead = outcome_lead(outcome.status)
    if outcome.status is RefreshStatus.PAUSED:
        return f"yak: memory {lead.lower()}: {_PAUSED_WAIT}"
    reason = outcome.reason.rstrip(". ")
    return f"yak: memory {lead.lower()}: {reason}; the memory document is unchanged."


def mode_words(mode: ReviewMode) -> str:
    """A review mode with what it does: ``auto (supported lines apply; doubtful ones wait for
    review)``."""
    if mode is ReviewMode.AUTO:
        return "auto (supported lines apply; doubtful ones wait for review)"
    return "review (every rewrite waits for review)"


def proposal_origin(proposal: Proposal) -> str:
    """Who made a proposal, as the subject of a sentence: ``A refresh``, ``An agent (Claude
    Code over MCP)``, ``An import`` (``… proposes this change``)."""
    if proposal.origin is ProposalOrigin.AGENT:
        return f"An agent ({proposal.client} over MCP)" if proposal.client else "An agent"
    if proposal.origin is ProposalOrigin.IMPORT:
        return "An import"
    return "A refresh"


def review_title(proposal: Proposal, *, reasons_listed: bool) -> str:
    """The review dialog's title for a proposal: who proposes what, on which version, and
    where its reasons are: ``A refresh proposes +1 −0 lines on version 3; it waits for you
    because:`` (the reasons follow), or, when every reason is about one of its lines and
    shown beside it, ``…; why it waits is said beside each line below:``. The lines a refresh
    held back while applying the rest (``held``) are said so: ``A refresh applied what the
    conversations back and held back +1 −0 lines on version 3; …``."""
    change = f"+{proposal.added} −{proposal.removed} lines on version {proposal.base_version}"
    if proposal.origin is ProposalOrigin.HELD:
        what = f"A refresh applied what the conversations back and held back {change}"
    else:
        what = f"{proposal_origin(proposal)} proposes {change}"
    why = "it waits for you because:" if reasons_listed else "why it waits is beside each line:"
    return f"{what}; {why}"


def dangerous_kept(proposal: Proposal, document: str) -> list[str]:
    """What an accepted proposal's dangerous lines now give the agent, one sentence per line
    the stored ``document`` holds: ``the memory now holds "- sudo make install": it has the
    agent run commands as root`` (``yak memory accept`` says it after accepting)."""
    held = set(document.splitlines())
    return [
        f'the memory now holds "{shorten(h.line.strip(), 60)}": {capability_words(h.detail)}'
        for h in proposal.held_lines
        if h.kind is HeldKind.DANGEROUS and h.line in held
    ]


def secrets_reason(flags: Sequence[str]) -> str | None:
    """The review reason for the secrets redacted from a proposal (its ``redacted:<kind>``
    flags): ``secrets replaced by [REDACTED:…] markers: anthropic_key``, or ``None`` when none
    were (``yak memory review`` and the review dialog)."""
    kinds = [flag.removeprefix("redacted:") for flag in flags if flag.startswith("redacted:")]
    return f"secrets replaced by [REDACTED:…] markers: {', '.join(kinds)}" if kinds else None


def proposal_reasons(proposal: Proposal) -> list[str]:
    """Every reason a proposal waits for review, one sentence each: its stored reasons, then
    the secrets redacted from it, if any."""
    secrets = secrets_reason(proposal.flags)
    return [*proposal.reasons, *([secrets] if secrets else [])]


def decided_elsewhere(proposal: Proposal) -> str:
    """What became of a proposal someone decided while a view showed it (another window,
    ``yak memory accept``): one sentence, e.g. ``This change was rejected elsewhere; its lines
    stay out.``"""
    became = f" (version {proposal.result_version})" if proposal.result_version else ""
    match proposal.status:
        case ProposalStatus.ACCEPTED:
            return f"This change was accepted elsewhere{became}; nothing is left to decide."
        case ProposalStatus.EDITED:
            return f"This change was edited and accepted elsewhere{became}."
        case ProposalStatus.REJECTED:
            return "This change was rejected elsewhere; its lines stay out."
        case ProposalStatus.SUPERSEDED:
            return "A newer proposal replaced this change; review that one instead."
        case ProposalStatus.WITHDRAWN:
            return "Whoever proposed this change withdrew it."
    return "This change still waits for review."


# --- what became of a proposal or of an attempt that waited ("The inbox", docs/memory.md) ---
def proposal_outcome(proposal: Proposal) -> str:
    """Where a proposal stands, short: ``waiting for review``, ``waiting for review; conflicts
    with version 6``, ``accepted → version 7``, ``edited and accepted → version 7``,
    ``rejected``, ``superseded by proposal 01K…`` (the first 12 characters of its id),
    ``superseded by a refresh that applied``, ``withdrawn``."""
    return _outcome_words(
        proposal.status, proposal.result_version, proposal.superseded_by, proposal.conflicts_with
    )


def attempt_outcome(attempt: RefreshAttempt) -> str:
    """A refresh attempt's label in History › Refresh attempts: its outcome's label
    (:func:`outcome_label`), or, for one that waited for review and was decided since, what
    became of its proposal (``accepted → version 7``, ``rejected``…)."""
    if attempt.outcome is None:
        return outcome_label(attempt.status)
    return _outcome_words(attempt.outcome, attempt.result_version, attempt.superseded_by, None)


def _outcome_words(
    status: ProposalStatus,
    result_version: int | None,
    superseded_by: str | None,
    conflicts_with: int | None,
) -> str:
    became = f" → version {result_version}" if result_version is not None else ""
    if status is ProposalStatus.PENDING:
        if conflicts_with is not None:
            return f"waiting for review; conflicts with version {conflicts_with}"
        return "waiting for review"
    if status is ProposalStatus.ACCEPTED:
        return f"accepted{became}"
    if status is ProposalStatus.EDITED:
        return f"edited and accepted{became}"
    if status is ProposalStatus.SUPERSEDED:
        if superseded_by:  # 12 characters: a prefix accept and review take, short for a cell
            return f"superseded by proposal {superseded_by[:12]}"
        return "superseded by a refresh that applied"
    return str(status)  # rejected, withdrawn


def landing_words(line: int, section: str | None) -> str:
    """Where a proposal's added lines land, for the review: ``lands at line 12, under
    "Conventions"`` or ``lands at line 30``."""
    under = f", under {section!r}" if section else ""
    return f"lands at line {line}{under}"
