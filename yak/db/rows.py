"""Conversions between ORM rows and the domain's frozen dataclasses, and the row lookups the
repositories share. ORM objects never leave ``yak.db``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, bindparam, select
from sqlalchemy.orm import Session

from yak import paths
from yak.db.models import (
    MemoryDocumentRow,
    MemoryProposalRow,
    MemoryRevisionRow,
    MemoryTombstoneRow,
    RefreshAttemptRow,
    WorkspaceRow,
)
from yak.db.schema import review_mode
from yak.domain import (
    MemoryDocument,
    Proposal,
    ProposalStatus,
    RefreshAttempt,
    RefreshStatus,
    Revision,
    RevisionSource,
    TokenUsage,
    Tombstone,
    Workspace,
)
from yak.errors import ConflictError, WorkspaceNotFound


def now() -> datetime:
    """The current time in UTC (what every stored timestamp is)."""
    return datetime.now(UTC)


def workspace_key(path: str) -> str:
    """``normalize_workspace_path(path)``; a path that cannot be one is ``WorkspaceNotFound``."""
    try:
        return paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise WorkspaceNotFound(str(exc)) from None


def identity_columns(identity: tuple[int, int] | None) -> tuple[str | None, str | None]:
    """``(st_dev, st_ino)`` as the two text columns they are stored in."""
    if identity is None:
        return None, None
    return str(identity[0]), str(identity[1])


def existing_folder(path: str) -> tuple[str, tuple[int, int]]:
    """The workspace key of an existing folder and its ``(st_dev, st_ino)``.

    Raises:
        WorkspaceNotFound: ``path`` does not exist or is not a directory.
    """
    key = workspace_key(path)
    identity = paths.folder_identity(key)
    if identity is None:
        raise WorkspaceNotFound(
            f"No such folder: {path} (it does not exist or is not a directory)."
        )
    return key, identity


def workspace_row(s: Session, workspace_id: str) -> WorkspaceRow:
    """The stored workspace row. Raises ``WorkspaceNotFound`` for an unknown id."""
    row = s.get(WorkspaceRow, workspace_id)
    if row is None:
        raise no_workspace(workspace_id)
    return row


def require_workspace(s: Session, workspace_id: str) -> None:
    """Raise ``WorkspaceNotFound`` unless the workspace is stored (a Core query: no ORM row is
    loaded when only its existence matters)."""
    if s.connection().execute(_WORKSPACE_EXISTS, {"workspace": workspace_id}).first() is None:
        raise no_workspace(workspace_id)


_WORKSPACE_EXISTS = select(WorkspaceRow.id).where(WorkspaceRow.id == bindparam("workspace"))


def no_workspace(workspace_id: str) -> WorkspaceNotFound:
    """The error for an unknown workspace id, with its sentence."""
    return WorkspaceNotFound(f"No workspace has the id {workspace_id}.")


def to_workspace(row: WorkspaceRow | Row[Any]) -> Workspace:
    """The domain workspace from an ORM row or a Core row of the workspace table's columns."""
    return Workspace(
        id=row.id,
        path=row.path,
        created_at=row.created_at,
        last_opened_at=row.last_opened_at,
        memory_enabled=bool(row.memory_enabled),
        review_mode=review_mode(row.review_mode),
        synced_file=row.synced_file,
    )


def to_document(workspace_id: str, row: MemoryDocumentRow | None) -> MemoryDocument:
    if row is None:
        return MemoryDocument(workspace_id=workspace_id, content="", version=0, updated_at=None)
    return MemoryDocument(
        workspace_id=workspace_id,
        content=row.content,
        version=row.version,
        updated_at=row.updated_at,
        flags=tuple(row.flags or ()),
    )


def to_revision(row: MemoryRevisionRow | Row[Any]) -> Revision:
    return Revision(
        id=row.id,
        workspace_id=row.workspace_id,
        version=row.version,
        source=RevisionSource(row.source),
        content=row.content,
        lines=row.lines,
        chars=row.chars,
        flags=tuple(row.flags or ()),
        created_at=row.created_at,
        model=row.model,
        session_ids=tuple(row.session_ids or ()),
        restored_from=row.restored_from,
        added=row.added or 0,
        removed=row.removed or 0,
    )


def to_attempt(row: RefreshAttemptRow) -> RefreshAttempt:
    return RefreshAttempt(
        id=row.id,
        workspace_id=row.workspace_id,
        status=RefreshStatus(row.status),
        reason=row.reason or "",
        base_version=row.base_version,
        result_version=row.result_version,
        model=row.model,
        reply=getattr(row, "reply", None),
        usage=TokenUsage(input_tokens=row.input_tokens or 0, output_tokens=row.output_tokens or 0),
        duration_s=row.duration_s or 0.0,
        session_ids=tuple(row.session_ids or ()),
        flags=tuple(row.flags or ()),
        created_at=row.created_at,
        added=getattr(row, "added", 0) or 0,
        removed=getattr(row, "removed", 0) or 0,
        proposal_id=getattr(row, "proposal_id", None),
    )


def to_proposal(row: MemoryProposalRow) -> Proposal:
    return Proposal(
        id=row.id,
        workspace_id=row.workspace_id,
        base_version=row.base_version,
        content=row.content,
        reasons=tuple(row.reasons or ()),
        added=row.added or 0,
        removed=row.removed or 0,
        status=ProposalStatus(row.status),
        created_at=row.created_at,
        model=row.model,
        session_ids=tuple(row.session_ids or ()),
        watermarks=dict(row.watermarks or {}),
        flags=tuple(row.flags or ()),
        decided_at=row.decided_at,
    )


def to_tombstone(row: MemoryTombstoneRow | Row[Any]) -> Tombstone:
    return Tombstone(key=row.key, text=row.text, source=row.source, created_at=row.created_at)


def conflict(expected: int, current: int) -> ConflictError:
    """The error for a write based on ``expected`` when the document is at ``current``."""
    if expected > current:
        return ConflictError(
            f"Version {expected} does not exist; the memory is at version {current}. "
            "Nothing was saved.",
            expected_version=expected,
            current_version=current,
        )
    return ConflictError(
        f"The memory changed (version {current}) since version {expected}; nothing was saved. "
        "Reload it and apply your change again.",
        expected_version=expected,
        current_version=current,
    )
