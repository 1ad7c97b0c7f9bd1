"""Small frozen dataclasses that cross layer boundaries, and the memory rules' constants.

ORM rows and SDK objects never leave ``yak.db`` / ``yak.llm``; these do. Timestamps are
timezone-aware UTC ``datetime`` objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from yak.evidence import Evidence
from yak.held import HeldLine

DEFAULT_SESSION_TITLE = "New conversation"  # a session before its first prompt titles it
# The ceiling ("The memory document" in docs/memory.md): a document has at most this many
# lines and characters.
MAX_LINES = 200
MAX_CHARS = 25_000
# The floor: a rewrite below FLOOR_MIN_CHARS when the previous document had at least that many,
# or keeping under FLOOR_RATIO of its non-blank lines or characters, is a collapse.
FLOOR_MIN_CHARS = 100
FLOOR_RATIO = 0.5


class RevisionSource(StrEnum):
    """Where an applied write came from (stored in every revision)."""

    REFRESH = "refresh"  # an LLM rewrite
    HAND = "hand"  # typed in the editor or ``yak memory set`` / ``edit``
    IMPORT = "import"
    RESTORE = "restore"
    CLEAR = "clear"  # ``yak memory delete`` or Delete… in Settings; restorable
    PROPOSAL = "proposal"  # a reviewed rewrite the person accepted (flag ``edited``: edited)
    COPY = (
        "copy"  # the enclosing workspace's document, copied by the person (flag ``copied_from:``)
    )


class SessionOrigin(StrEnum):
    """Where a conversation was started (stored with it): in the window, or by a one-shot
    ``yak ask`` on the command line, which the window's conversation list marks."""

    WINDOW = "window"
    ASK = "ask"


class ReviewMode(StrEnum):
    """How a workspace's rewrites land: ``auto`` applies their supported lines and makes the
    doubtful ones wait for review; ``review`` makes every rewrite wait ("Review" in
    docs/memory.md)."""

    AUTO = "auto"
    REVIEW = "review"


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


class ProposalStatus(StrEnum):
    """Where a proposal stands ("The inbox" in docs/memory.md): waiting; accepted as proposed
    or edited and accepted (both became a version); rejected; superseded by a newer refresh
    proposal (its conversations are in the newer one); or withdrawn by the one who made it."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    EDITED = "edited"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    WITHDRAWN = "withdrawn"

    @property
    def outcome_code(self) -> str:
        """The outcome as scripts read it (``--json``; DESIGN's list in docs/cli.md):
        ``edited_accepted`` for an edited and accepted proposal, else the status itself."""
        return "edited_accepted" if self is ProposalStatus.EDITED else str(self)


class ProposalOrigin(StrEnum):
    """Who made a proposal: a memory refresh, an agent (over MCP, with its client's name),
    or an import. A new refresh proposal replaces only an older refresh proposal. ``HELD``
    is the part of a refresh held back while the rest was applied ("What a rewrite may add"
    in docs/memory.md): its conversations are folded, so, like an agent's, it is never
    replaced, only rebased."""

    REFRESH = "refresh"
    AGENT = "agent"
    IMPORT = "import"
    HELD = "held"


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


def count_lines(text: str) -> int:
    """Lines in a document as a user counts them: ``""`` is 0, ``"a"`` and ``"a\\n"`` are 1."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True)
class Workspace:
    """A project folder. ``id`` is derived from ``path`` by :func:`yak.paths.workspace_id_for`
    ("The workspace key" in docs/workspaces.md)."""

    id: str
    path: str  # the normalized path, the key
    created_at: datetime
    last_opened_at: datetime | None = None
    memory_enabled: bool = True
    review_mode: ReviewMode = ReviewMode.AUTO
    # The instruction file (absolute path) whose managed block follows every applied revision
    # ("keep AGENTS.md in sync"), or ``None``.
    synced_file: str | None = None

    @property
    def name(self) -> str:
        """The folder's last path component, for titles and lists."""
        stripped = self.path.rstrip("/\\")
        return stripped.replace("\\", "/").rsplit("/", 1)[-1] or self.path


@dataclass(frozen=True)
class WorkspaceStamp:
    """What a view shows of a workspace, reduced to a few values that change whenever that
    view would (the watcher compares them to notice another process's writes; see "Live
    everywhere" in docs/ui.md).

    Attributes:
        version: the version of the document the workspace uses (0: never written).
        settings: its memory switch, review mode and kept-in-sync file.
        proposals: the id and base version of each proposal waiting for review, oldest
            first (a decision, a new proposal or a rebase changes it).
    """

    version: int = 0
    settings: tuple[bool, str, str | None] = (True, "auto", None)
    proposals: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class MemoryDocument:
    """A workspace's memory document as stored now. ``version`` 0 means never written."""

    workspace_id: str
    content: str
    version: int
    updated_at: datetime | None
    flags: tuple[str, ...] = ()

    @property
    def lines(self) -> int:
        """Line count (see :func:`count_lines`)."""
        return count_lines(self.content)

    @property
    def chars(self) -> int:
        """Character count (Unicode code points)."""
        return len(self.content)

    @property
    def tokens(self) -> int:
        """About how many tokens the document adds to every chat request it is injected into
        (:func:`estimate_tokens`: an estimate, shown with "≈")."""
        return estimate_tokens(self.content)


CHARS_PER_TOKEN = 4
"""The estimate's characters per token: what Anthropic's documentation gives for English text;
code and other languages run higher, so the figure is an order of magnitude, not a bill (no
tokenizer is available offline). See "Cost" in docs/memory.md."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: its characters / :data:`CHARS_PER_TOKEN`, rounded
    up (0 for ""). An estimate; no tokenizer is consulted."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class MemorySummary:
    """One row of the memory list: a workspace with a memory, without its content."""

    workspace: Workspace
    version: int
    lines: int
    chars: int
    updated_at: datetime | None
    flags: tuple[str, ...]
    orphaned: bool  # the folder no longer exists
    proposals: int = 0  # changes waiting for review
    valid_utf8: bool = True  # false: bytes another program wrote (``show --raw`` shows them)


@dataclass(frozen=True)
class Revision:
    """An applied write to a memory document: append-only history."""

    id: str
    workspace_id: str
    version: int
    source: RevisionSource
    content: str
    lines: int
    chars: int
    flags: tuple[str, ...]
    created_at: datetime
    model: str | None = None
    session_ids: tuple[str, ...] = ()
    restored_from: str | None = None  # revision id, for RESTORE
    added: int = 0  # lines added against the version it was based on
    removed: int = 0  # lines removed against it
    evidence: tuple[Evidence, ...] = ()  # for the lines a refresh added or changed


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
class Proposal:
    """A rewrite waiting for the person's review ("Review" in docs/memory.md).

    Attributes:
        id: a ULID (``accept``/``reject`` take it or a unique prefix of 6 or more characters).
        workspace_id: the workspace.
        base_version: the document version it rewrites; accepting it is a write on that version.
        content: the whole proposed document.
        reasons: why it waits, one sentence each.
        added: lines it adds against the base.
        removed: lines it removes.
        status: pending, accepted, rejected or superseded.
        created_at: when it was made (UTC).
        model: the memory model that wrote it.
        session_ids: the conversations it folds.
        watermarks: ``{session_id: last message id}`` it covers; accepting or rejecting it
            advances them.
        flags: the refresh's flags (redactions…).
        decided_at: when it was accepted, rejected or superseded.
        origin: who made it (a refresh, an agent, an import).
        client: the agent's client name for an agent's proposal (``"Claude Code"``), else None:
            shown to the person, never trusted (two agents may give the same name).
        owner: the id of the ``yak mcp`` server process that made an agent's proposal
            (``mcp_…``, new for each start), else None: only that process may withdraw it.
        result_version: the version an accepted (or edited and accepted) proposal became.
        superseded_by: the id of the proposal that superseded it.
        conflicts_with: the document version it no longer applies to cleanly (a pending
            proposal kept for the person to decide), None when it applies to the current one.
        evidence: the passages behind the lines a refresh proposes (``()``: none recorded).
        held_lines: why it waits, as data (``reasons`` words them and more: an agent's own
            reason); ``()`` for a proposal stored before they were kept.
    """

    id: str
    workspace_id: str
    base_version: int
    content: str
    reasons: tuple[str, ...]
    added: int
    removed: int
    status: ProposalStatus
    created_at: datetime
    model: str | None = None
    session_ids: tuple[str, ...] = ()
    watermarks: dict[str, str] = field(default_factory=dict)
    flags: tuple[str, ...] = ()
    decided_at: datetime | None = None
    origin: ProposalOrigin = ProposalOrigin.REFRESH
    client: str | None = None
    result_version: int | None = None
    superseded_by: str | None = None
    conflicts_with: int | None = None
    evidence: tuple[Evidence, ...] = ()
    held_lines: tuple[HeldLine, ...] = ()
    owner: str | None = None


@dataclass(frozen=True)
class Tombstone:
    """A line a person removed on purpose; rewrites must not bring it back silently.

    Attributes:
        key: the line folded (case, spacing, end punctuation), what a returning line is
            matched on.
        text: the line as it was written.
        source: ``hand`` (deleted by hand) or ``rejected`` (added by a rejected proposal).
        created_at: when it was removed (UTC).
    """

    key: str
    text: str
    source: str
    created_at: datetime


@dataclass(frozen=True)
class WriteEffects:
    """What a write does besides replacing the text, computed from the text it replaces (the
    memory rules decide; the repository stores it in the write's transaction).

    Attributes:
        added: lines added against the replaced text (stored with the revision).
        removed: lines removed.
        bury: ``(key, text)`` of lines that become tombstones.
        lift: keys of tombstones to lift (the person typed those lines again).
    """

    added: int = 0
    removed: int = 0
    bury: tuple[tuple[str, str], ...] = ()
    lift: tuple[str, ...] = ()


@dataclass(frozen=True)
class LineOrigin:
    """Where one line of the current document came from ("Provenance" in
    docs/memory.md).

    Attributes:
        line: its 1-based line number in the current document.
        text: the line.
        version: the version whose write introduced it in this exact form.
        source: that write's source (hand, import, refresh, restore, proposal, clear).
        created_at: when that write happened (UTC).
        revision_id: that write's revision.
        sessions: for a refresh or proposal, the conversations behind it.
        model: the model that wrote it, for a refresh or proposal.
        by_person: a person wrote it (hand, import, an edited proposal): a rewrite may not
            remove or alter it without review.
        evidence: the passage that backed it when a refresh wrote it, or ``None`` (typed by a
            person, or written before evidence was recorded).
    """

    line: int
    text: str
    version: int
    source: RevisionSource
    created_at: datetime
    revision_id: str
    sessions: tuple[str, ...] = ()
    model: str | None = None
    by_person: bool = False
    evidence: Evidence | None = None


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
