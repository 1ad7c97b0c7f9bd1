"""The proposal repository: rewrites waiting for the person's review, and what became of them.

A proposal belongs to the document its workspace uses (a linked worktree's proposals are its
main checkout's, "Scopes" in docs/workspaces.md). Accepting one is a document write (the
document repository's ``write(accepts=…)`` closes it in the write's transaction, with
:func:`close_proposal`); rejecting one buries the lines it added and advances the watermarks
of the conversations it folded, in one transaction. Queries: prebuilt Core statements on the
session's connection, and the shared SQL texts of ``yak.db.reads`` for the reads.
"""

from __future__ import annotations

from collections.abc import Mapping
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
from yak.domain import Proposal, ProposalStatus, WriteEffects
from yak.errors import ConflictError
from yak.ids import PROPOSAL_IDS, id_prefix, new_id, only_match
from yak.ports import Burials


class ProposalRepository:
    """Proposals in the database (implements ``yak.ports.ProposalStore``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add_proposal(self, proposal: Proposal) -> Proposal:
        """Store a pending proposal; the workspace's older pending proposals become
        ``superseded`` (the new one folds their conversations too).

        Raises:
            WorkspaceNotFound: unknown workspace.
        """
        moment = now()
        proposal_id = proposal.id or new_id()
        with self.db.session() as s:
            require_workspace(s, proposal.workspace_id)
            stored_under = owner(s, proposal.workspace_id)
            connection = s.connection()
            connection.execute(_SUPERSEDE, {"workspace": stored_under, "moment": moment})
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
            }
            connection.execute(_INSERT, values)
        return Proposal(
            id=proposal_id,
            workspace_id=stored_under,
            base_version=proposal.base_version,
            content=proposal.content,
            reasons=tuple(proposal.reasons),
            added=proposal.added,
            removed=proposal.removed,
            status=ProposalStatus.PENDING,
            created_at=moment,
            model=proposal.model,
            session_ids=tuple(proposal.session_ids),
            watermarks=dict(proposal.watermarks),
            flags=tuple(proposal.flags),
            decided_at=None,
        )

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only the pending ones by default)."""
        with self.db.session() as s:
            return read_proposals(SessionQuery(s), workspace_id, pending_only=pending_only)

    def supersede_proposals(self, workspace_id: str) -> int:
        """Mark the workspace's pending proposals ``superseded`` (an applied refresh folded
        their conversations and changed the version they were made on). Returns how many."""
        with self.db.session() as s:
            result = s.connection().execute(
                _SUPERSEDE, {"workspace": owner(s, workspace_id), "moment": now()}
            )
            return int(result.rowcount or 0)

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


def _proposal(s: Session, workspace_id: str, proposal_id: str) -> Proposal:
    rows = by_prefix(SessionQuery(s), PROPOSAL, workspace_id, id_prefix(proposal_id, PROPOSAL_IDS))
    return proposal_of(only_match(rows, proposal_id, PROPOSAL_IDS))


def close_proposal(
    s: Session, workspace_id: str, proposal_id: str, status: ProposalStatus
) -> Proposal:
    """Mark the pending proposal ``proposal_id`` (an id or a unique prefix) of the workspace
    that owns the document ``status`` (accepted or rejected), in the session's transaction.

    Raises:
        UsageError: no such proposal. ConflictError: it is no longer pending.
    """
    found = _proposal(s, workspace_id, proposal_id)
    moment = now()
    if found.status is ProposalStatus.PENDING:
        closed = s.connection().execute(
            _CLOSE, {"proposal": found.id, "closed_as": str(status), "moment": moment}
        )
        if closed.rowcount == 1:
            return replace(found, status=status, decided_at=moment)
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
    )
    .values(status=str(ProposalStatus.SUPERSEDED), decided_at=bindparam("moment"))
)
_CLOSE = (
    update(_PROPOSALS)
    .where(_PROPOSALS.c.id == bindparam("proposal"), _PROPOSALS.c.status == _PENDING)
    .values(status=bindparam("closed_as"), decided_at=bindparam("moment"))
)
_PENDING_COUNTS = (
    select(_PROPOSALS.c.workspace_id, func.count())
    .where(_PROPOSALS.c.status == _PENDING)
    .group_by(_PROPOSALS.c.workspace_id)
)
