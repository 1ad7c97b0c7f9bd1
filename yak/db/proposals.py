"""The proposal repository: rewrites waiting for the person's review, and what became of them.

A proposal belongs to the document its workspace uses (a linked worktree's proposals are its
main checkout's, "Scopes" in docs/workspaces.md). Accepting one is a document write (the
document repository's ``write(accepts=…)`` closes it in the write's transaction, with
:func:`close_proposal`); rejecting one buries the lines it added and advances the watermarks
of the conversations it folded, in one transaction. Queries: prebuilt Core statements on the
session's connection, and the shared SQL texts of ``yak.db.reads`` for the reads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.orm import Session

from yak.db.engine import Database
from yak.db.models import MemoryProposalRow, table_of
from yak.db.reads import PROPOSAL, by_prefix, proposal_of
from yak.db.reads import proposals as read_proposals
from yak.db.rows import (
    SessionQuery,
    advance_watermarks,
    change_tombstones,
    now,
    owner,
    require_workspace,
)
from yak.db.schema import evidence_text, held_lines_text
from yak.domain import Proposal, ProposalOrigin, ProposalStatus, WriteEffects
from yak.errors import ConflictError
from yak.ids import PROPOSAL_IDS, id_prefix, new_id, only_match
from yak.ports import Burials


class ProposalRepository:
    """Proposals in the database (implements ``yak.ports.ProposalStore``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_proposal(self, proposal: Proposal) -> Proposal:
        """Store a pending proposal. A refresh's proposal supersedes the workspace's older
        pending *refresh* proposals (``superseded_by`` its id: it folds their conversations
        too); an agent's or an import's supersedes nothing ("The inbox" in docs/memory.md).

        Raises:
            WorkspaceNotFound: unknown workspace.
        """
        moment = now()
        proposal_id = proposal.id or new_id()
        with self.db.session() as s:
            require_workspace(s, proposal.workspace_id)
            stored_under = owner(s, proposal.workspace_id)
            connection = s.connection()
            if proposal.origin is ProposalOrigin.REFRESH:
                connection.execute(
                    _SUPERSEDE,
                    {"workspace": stored_under, "moment": moment, "by": proposal_id},
                )
            values = {
                "id": proposal_id,
                "workspace_id": stored_under,
                "base_version": proposal.base_version,
                "content": proposal.content,
                "reasons": list(proposal.reasons),
                "added": proposal.added,
                "removed": proposal.removed,
                "status": str(ProposalStatus.PENDING),
                "model": proposal.model,
                "session_ids": list(proposal.session_ids),
                "watermarks": dict(proposal.watermarks),
                "flags": list(proposal.flags),
                "created_at": moment,
                "decided_at": None,
                "origin": str(proposal.origin),
                "client": proposal.client,
                "owner": proposal.owner,
                "result_version": None,
                "superseded_by": None,
                "conflicts_with": proposal.conflicts_with,
                "evidence": evidence_text(proposal.evidence),
                "held_lines": held_lines_text(proposal.held_lines),
            }
            connection.execute(_INSERT, values)
        return replace(
            proposal,
            id=proposal_id,
            workspace_id=stored_under,
            reasons=tuple(proposal.reasons),
            status=ProposalStatus.PENDING,
            created_at=moment,
            session_ids=tuple(proposal.session_ids),
            watermarks=dict(proposal.watermarks),
            flags=tuple(proposal.flags),
            decided_at=None,
            result_version=None,
            superseded_by=None,
            evidence=tuple(proposal.evidence),
            held_lines=tuple(proposal.held_lines),
        )

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only the pending ones by default)."""
        with self.db.session() as s:
            return read_proposals(SessionQuery(s), workspace_id, pending_only=pending_only)

    def supersede_proposals(self, workspace_id: str) -> int:
        """Mark the workspace's pending *refresh* proposals ``superseded`` (an applied refresh
        folded their conversations); agents' proposals stay (they are rebased). Returns how
        many."""
        with self.db.session() as s:
            result = s.connection().execute(
                _SUPERSEDE, {"workspace": owner(s, workspace_id), "moment": now(), "by": None}
            )
            return int(result.rowcount or 0)

    def rebase_proposals(self, rebased: Sequence[Proposal]) -> int:
        """Store pending proposals moved onto a newer document version (``base_version``,
        ``content``, ``added``, ``removed``, ``conflicts_with`` as given); a proposal decided
        meanwhile is left as it is. Returns how many were updated."""
        if not rebased:
            return 0
        with self.db.session() as s:
            connection = s.connection()
            updated = 0
            for p in rebased:
                result = connection.execute(
                    _REBASE,
                    {
                        "proposal": p.id,
                        "base_version": p.base_version,
                        "content": p.content,
                        "added": p.added,
                        "removed": p.removed,
                        "conflicts_with": p.conflicts_with,
                    },
                )
                updated += int(result.rowcount or 0)
            return updated

    def pending_counts(self) -> dict[str, int]:
        """How many proposals wait, by workspace id (workspaces with none are left out)."""
        with self.db.session() as s:
            rows = s.connection().execute(_PENDING_COUNTS)
            return {workspace_id: int(count) for workspace_id, count in rows}

    def get_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """A proposal by id or unique prefix (at least ``MIN_ID_PREFIX`` characters).

        Raises:
            UsageError: none matches, several do, or the prefix is too short.
        """
        with self.db.session() as s:
            return _proposal(s, owner(s, workspace_id), proposal_id)

    def reject_proposal(
        self, workspace_id: str, proposal_id: str, *, bury: Burials, watermarks: Mapping[str, str]
    ) -> Proposal:
        """Mark a pending proposal rejected, bury ``bury`` (its added lines) and advance the
        watermarks of the conversations it folded, in one transaction.

        Raises:
            UsageError: no such proposal. ConflictError: it is no longer pending.
        """
        with self.db.session() as s:
            stored_under = owner(s, workspace_id)
            rejected = close_proposal(s, stored_under, proposal_id, ProposalStatus.REJECTED)
            change_tombstones(
                s, stored_under, WriteEffects(bury=bury), source="rejected", moment=now()
            )
            advance_watermarks(s, watermarks)
            return rejected

    def withdraw_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """Mark a pending proposal withdrawn by whoever made it: nothing is buried (the person
        never turned its lines down) and no watermark moves.

        Raises:
            UsageError: no such proposal. ConflictError: it is no longer pending.
        """
        with self.db.session() as s:
            return close_proposal(s, owner(s, workspace_id), proposal_id, ProposalStatus.WITHDRAWN)


def _proposal(s: Session, workspace_id: str, proposal_id: str) -> Proposal:
    rows = by_prefix(SessionQuery(s), PROPOSAL, workspace_id, id_prefix(proposal_id, PROPOSAL_IDS))
    return proposal_of(only_match(rows, proposal_id, PROPOSAL_IDS))


def record_result(s: Session, proposal_id: str, version: int) -> None:
    """Record the version an accepted proposal became, in the session's transaction (after
    :func:`close_proposal` and the write)."""
    s.connection().execute(_RESULT, {"proposal": proposal_id, "version": version})


def close_proposal(
    s: Session,
    workspace_id: str,
    proposal_id: str,
    status: ProposalStatus,
    *,
    result_version: int | None = None,
) -> Proposal:
    """Mark the pending proposal ``proposal_id`` (an id or a unique prefix) of the workspace
    that owns the document ``status`` (accepted, edited and accepted, or rejected), with the
    version it became (``result_version``, when known), in the session's transaction.

    Raises:
        UsageError: no such proposal. ConflictError: it is no longer pending (the review
            inbox says what became of it).
    """
    found = _proposal(s, workspace_id, proposal_id)
    moment = now()
    if found.status is ProposalStatus.PENDING:
        closed = s.connection().execute(
            _CLOSE,
            {
                "proposal": found.id,
                "closed_as": str(status),
                "moment": moment,
                "result_version": result_version,
            },
        )
        if closed.rowcount == 1:
            return replace(found, status=status, decided_at=moment, result_version=result_version)
    raise ConflictError(
        f"Proposal {found.id} is {found.status}, no longer waiting for review; "
        "nothing was changed (see yak memory review).",
        expected_version=found.base_version,
        current_version=found.base_version,
    )


_PROPOSALS = table_of(MemoryProposalRow)
_PENDING = str(ProposalStatus.PENDING)
_INSERT = insert(_PROPOSALS)
_SUPERSEDE = (
    update(_PROPOSALS)
    .where(
        _PROPOSALS.c.workspace_id == bindparam("workspace"),
        _PROPOSALS.c.status == _PENDING,
        _PROPOSALS.c.origin == str(ProposalOrigin.REFRESH),
    )
    .values(
        status=str(ProposalStatus.SUPERSEDED),
        decided_at=bindparam("moment"),
        superseded_by=bindparam("by"),
        conflicts_with=None,
    )
)
# One pending proposal (``:proposal``), changed only while it still waits.
_UPDATE_PENDING = update(_PROPOSALS).where(
    _PROPOSALS.c.id == bindparam("proposal"), _PROPOSALS.c.status == _PENDING
)
_CLOSE = _UPDATE_PENDING.values(
    status=bindparam("closed_as"),
    decided_at=bindparam("moment"),
    result_version=bindparam("result_version"),
    conflicts_with=None,
)
_RESULT = (
    update(_PROPOSALS)
    .where(_PROPOSALS.c.id == bindparam("proposal"))
    .values(result_version=bindparam("version"))
)
_REBASE = _UPDATE_PENDING.values(
    base_version=bindparam("base_version"),
    content=bindparam("content"),
    added=bindparam("added"),
    removed=bindparam("removed"),
    conflicts_with=bindparam("conflicts_with"),
)
_PENDING_COUNTS = (
    select(_PROPOSALS.c.workspace_id, func.count())
    .where(_PROPOSALS.c.status == _PENDING)
    .group_by(_PROPOSALS.c.workspace_id)
)
