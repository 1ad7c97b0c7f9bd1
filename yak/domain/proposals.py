"""The review inbox's proposals: where one stands and who made it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from yak.evidence import Evidence
from yak.held import HeldLine


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
