"""Memory refreshes: how the model answers one, its outcome and recorded attempt, where a
workspace stands in the queue, and the upkeep figures over windows of days.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from yak.domain.conversations import TokenUsage
from yak.domain.proposals import ProposalStatus


class RewriteForm(StrEnum):
    """How the memory model is asked to answer a refresh ("The rewrite forms" in
    docs/refresh.md), in order of preference: a forced ``tool`` call whose input lists the
    facts the conversations established (the default where the endpoint supports it),
    ``edits`` against the numbered document (a whole document is still accepted), or the
    ``whole`` document."""

    TOOL = "tool"
    EDITS = "edits"
    WHOLE = "whole"

    @property
    def flag(self) -> str:
        """The flag an attempt records when a reply was read in this form: ``form:tool``."""
        return f"{FORM_FLAG_PREFIX}{self.value}"


FORM_FLAG_PREFIX = "form:"


def forms_in(flags: Sequence[str]) -> tuple[RewriteForm, ...]:
    """The rewrite forms an attempt's replies were read in, from its ``form:*`` flags, in the
    order first recorded (``(TOOL, EDITS)``: the tool form, then the edits form it fell back
    to); ``()`` for an attempt that made no model call. An unknown form is skipped."""
    known = {form.flag: form for form in RewriteForm}
    return tuple(known[flag] for flag in flags if flag in known)


class QueueState(StrEnum):
    """Where a workspace stands in the refresh queue: nothing to do, waiting out the debounce
    (or a free slot), running, or paused (automatic refreshes wait for an API key)."""

    IDLE = "idle"
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"


# The flag of a refresh that failed in the database itself (unreadable, unwritable, a stored
# document that is not text), not at the provider: the command line exits 1 for it, not 4.
STORE_ERROR = "store_error"


class RefreshStatus(StrEnum):
    """The outcome of one refresh attempt (the ``status`` of ``yak memory refresh --json``)."""

    APPLIED = "applied"
    UP_TO_DATE = "up_to_date"
    REFUSED_FLOOR = "refused_floor"
    REFUSED_CEILING = "refused_ceiling"
    REFUSED_EMPTY = "refused_empty"
    REFUSED_PLACEHOLDER = "refused_placeholder"
    REFUSED_NOT_DOCUMENT = "refused_not_document"  # an echo of the request, a transcript, code
    NEEDS_REVIEW = "needs_review"  # a proposal waits for the person (exit 3)
    SUPERSEDED = "superseded"
    FAILED = "failed"
    # An automatic run held back for want of an API key: nothing was read, sent or recorded,
    # and the conversations wait for a key (only the queue's waiters see it).
    PAUSED = "paused"

    @property
    def exit_code(self) -> int:
        """The CLI exit status for this outcome: 0 done, 3 refused, 4 provider failure or no
        API key, 5 conflict."""
        if self in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE):
            return 0
        if self in (RefreshStatus.FAILED, RefreshStatus.PAUSED):
            return 4
        if self is RefreshStatus.SUPERSEDED:
            return 5
        return 3


@dataclass(frozen=True)
class RefreshOutcome:
    """What one refresh attempt did; also the row recorded for it.

    ``reply`` is the model's (redacted) reply, kept even when refused so the user can open it.
    """

    status: RefreshStatus
    reason: str
    workspace_id: str
    version: int  # the document's version after the attempt
    lines: int  # the document's line count after the attempt
    attempt_id: str | None = None
    reply: str | None = None
    model: str | None = None
    usage: TokenUsage = field(default_factory=TokenUsage)
    duration_s: float = 0.0
    session_ids: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    added: int = 0  # lines the reply adds against the document it was based on
    removed: int = 0  # lines it removes
    proposal_id: str | None = None  # the proposal waiting for review (``needs_review``)
    missing_key: bool = False  # failed because no API key was available


@dataclass(frozen=True)
class RefreshAttempt:
    """A recorded refresh attempt, for History.

    An attempt that waited for review (``needs_review``, with ``proposal_id``) ends with its
    proposal's ``outcome`` ("The inbox" in docs/memory.md): accepted or edited and accepted
    (``result_version`` is then the version it became), rejected, superseded
    (``superseded_by``: the newer refresh proposal, or ``None`` when a refresh applied), or
    withdrawn; ``outcome`` is ``None`` while it waits and for attempts that never waited.
    """

    id: str
    workspace_id: str
    status: RefreshStatus
    reason: str
    base_version: int
    result_version: int | None
    model: str | None
    reply: str | None
    usage: TokenUsage
    duration_s: float
    session_ids: tuple[str, ...]
    flags: tuple[str, ...]
    created_at: datetime
    added: int = 0
    removed: int = 0
    proposal_id: str | None = None
    outcome: ProposalStatus | None = None
    superseded_by: str | None = None

    @property
    def forms(self) -> tuple[RewriteForm, ...]:
        """The rewrite forms its replies were read in, in order (:func:`forms_in`)."""
        return forms_in(self.flags)


@dataclass(frozen=True)
class RefreshState:
    """Where a workspace's memory refresh stands right now: the whole snapshot a view shows,
    built and published only by the refresh scheduler.

    Attributes:
        workspace_id: the workspace.
        state: where the workspace stands in the refresh queue (paused: automatic refreshes
            wait for an API key).
        due_in: seconds until a pending refresh runs (``None`` unless pending).
        last_attempt: the latest recorded refresh attempt, or ``None``.
        document_updated_at: when the document was last written (any source), or ``None``.
        key_available: whether an API key was available at the last check (``None``: not
            known).
        proposals: how many proposals wait for review.
        unfolded: whether conversations wait to be folded into the memory (a refused or
            trimmed write leaves them waiting, so the memory is not up to date).
        memory_enabled: whether the workspace's memory is on (off: no injection, no refresh).
        missing_key: whether the last refresh this process ran failed because no API key
            was available (advice to add one rather than an alarm).
        running_for: seconds since the refresh in flight started (``None`` unless running).
    """

    workspace_id: str
    state: QueueState = QueueState.IDLE
    due_in: float | None = None
    last_attempt: RefreshAttempt | None = None
    document_updated_at: datetime | None = None
    key_available: bool | None = None
    proposals: int = 0
    unfolded: bool = False
    memory_enabled: bool = True
    missing_key: bool = False
    running_for: float | None = None


UPKEEP_WINDOWS_DAYS: tuple[int, int] = (7, 30)
"""The windows of the memory's upkeep figures (``yak memory stats``, Settings › Memory)."""


@dataclass(frozen=True)
class UpkeepFigures:
    """What a workspace's memory refreshes cost over one window of days.

    Attributes:
        refreshes: refresh attempts recorded (forced and automatic, whatever their outcome).
        calls: model calls they made: an attempt that asked the model counts 1, one with a
            retry (whole document, condense) 2; one that found nothing to fold counts 0.
        usage: their tokens (uncached input, cache writes, cache reads, output).
        outcomes: attempts per outcome (``applied``, ``up_to_date``, ``failed``…), the most
            frequent first.
        forms: attempts per rewrite form a reply was read in (its ``form:*`` flag), in
            ``RewriteForm``'s order, forms no attempt used left out; an attempt whose tool call
            fell back to edits counts in both, one with no model call in none.
    """

    refreshes: int = 0
    calls: int = 0
    usage: TokenUsage = field(default_factory=TokenUsage)
    outcomes: tuple[tuple[RefreshStatus, int], ...] = ()
    forms: tuple[tuple[RewriteForm, int], ...] = ()

    def __add__(self, other: UpkeepFigures) -> UpkeepFigures:
        """The two windows' figures summed (outcomes merged)."""
        if not isinstance(other, UpkeepFigures):
            return NotImplemented
        merged: dict[RefreshStatus, int] = dict(self.outcomes)
        for status, count in other.outcomes:
            merged[status] = merged.get(status, 0) + count
        return UpkeepFigures(
            refreshes=self.refreshes + other.refreshes,
            calls=self.calls + other.calls,
            usage=self.usage + other.usage,
            outcomes=tuple(sorted(merged.items(), key=lambda item: (-item[1], item[0].value))),
            forms=tuple(
                (form, count)
                for form in RewriteForm
                if (count := dict(self.forms).get(form, 0) + dict(other.forms).get(form, 0))
            ),
        )


@dataclass(frozen=True)
class UpkeepStats:
    """A workspace's memory upkeep: its refresh figures per window of days
    (:data:`UPKEEP_WINDOWS_DAYS`), ``{days: UpkeepFigures}``, the shortest window first."""

    workspace_id: str
    windows: tuple[tuple[int, UpkeepFigures], ...] = ()

    def window(self, days: int) -> UpkeepFigures:
        """The figures of the ``days`` window (empty figures when there is none)."""
        return dict(self.windows).get(days, UpkeepFigures())
