"""What the SQLAlchemy repositories share: conversions between ORM or Core rows and the
domain's frozen dataclasses, the row lookups, and :class:`SessionQuery` (a session's
connection running the hot reads' SQL texts of ``yak.db.reads``). ORM objects never leave
``yak.db``."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, bindparam, delete, or_, select, text, update
from sqlalchemy.orm import Session

from yak import paths
from yak.db.models import (
    ChatSessionRow,
    MemoryTombstoneRow,
    WorkspaceLinkRow,
    WorkspaceRow,
    table_of,
)
from yak.db.portable import insert_ignoring
from yak.db.reads import no_workspace, workspace_key
from yak.db.schema import review_mode
from yak.domain import Tombstone, Workspace, WriteEffects
from yak.errors import ConflictError, WorkspaceNotFound

__all__ = ["no_workspace", "workspace_key"]  # shared with the plain sqlite3 reader


def now() -> datetime:
    """The current time in UTC (what every stored timestamp is)."""
    return datetime.now(UTC)


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


_text = functools.lru_cache(maxsize=256)(text)  # one TextClause per SQL text, parsed once


class SessionQuery:
    """A session's connection as a ``yak.db.reads.Query``: the SQL text runs through
    ``text()`` (no ORM loading; values as the driver returns them, which the texts make the
    same on both dialects)."""

    def __init__(self, s: Session) -> None:
        self._s = s
        self.dialect = s.get_bind().dialect.name

    def rows(self, sql: str, parameters: Mapping[str, object]) -> Sequence[Row[Any]]:
        """Every row of ``sql``; driver errors leave as ``Database.session`` turns them."""
        return self._s.connection().execute(_text(sql), dict(parameters)).all()


# --- what the document and proposal repositories both write -----------------------------------
def owner(s: Session, workspace_id: str) -> str:
    """The workspace whose document ``workspace_id`` uses: the one it is linked to (a worktree
    sharing its main checkout's, "Scopes" in docs/workspaces.md), else itself. The document
    and proposal repositories read and write the owner's document, revisions, tombstones and
    proposals, and answer under the id they were asked about."""
    linked = s.connection().execute(_LINK_TARGET, {"workspace": workspace_id}).scalar()
    return linked or workspace_id


def advance_watermarks(s: Session, watermarks: Mapping[str, str]) -> None:
    """Move each session's watermark forward to the given message id, never backwards (ULIDs
    of one length sort as text in creation order, so a string compare is enough)."""
    if watermarks:
        s.connection().execute(
            _ADVANCE,
            [{"session": session, "message": message} for session, message in watermarks.items()],
        )


def change_tombstones(
    s: Session, workspace_id: str, change: WriteEffects, *, source: str, moment: datetime
) -> None:
    """Bury and lift tombstones as a write's effects say (lifting wins for a key in both)."""
    lifted = set(change.lift)
    buried = [
        {
            "workspace_id": workspace_id,
            "key": key,
            "text": text,
            "source": source,
            "created_at": moment,
        }
        for key, text in change.bury
        if key not in lifted
    ]
    connection = s.connection()
    if buried:
        connection.execute(insert_ignoring(_TOMBSTONES, connection.dialect.name), buried)
    if lifted:
        connection.execute(_LIFT, {"workspace": workspace_id, "keys": sorted(lifted)})


_TOMBSTONES = table_of(MemoryTombstoneRow)
_LIFT = delete(_TOMBSTONES).where(
    _TOMBSTONES.c.workspace_id == bindparam("workspace"),
    _TOMBSTONES.c.key.in_(bindparam("keys", expanding=True)),
)
_LINK_TARGET = select(WorkspaceLinkRow.target_id).where(
    WorkspaceLinkRow.workspace_id == bindparam("workspace")
)
_SESSIONS = table_of(ChatSessionRow)
_ADVANCE = (
    update(_SESSIONS)
    .where(
        _SESSIONS.c.id == bindparam("session"),
        or_(
            _SESSIONS.c.folded_through.is_(None),
            _SESSIONS.c.folded_through < bindparam("message"),
        ),
    )
    .values(folded_through=bindparam("message"))
)
