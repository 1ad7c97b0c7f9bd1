"""The attempt repository: every refresh attempt, applied or not, with its reply and usage."""

from __future__ import annotations

from typing import cast

from sqlalchemy import and_, func, insert, select

from yak.db.engine import Database
from yak.db.models import RefreshAttemptRow
from yak.db.rows import now, require_workspace, to_attempt
from yak.domain import RefreshAttempt, RefreshOutcome, RefreshStatus
from yak.ids import ATTEMPT_IDS, id_prefix, new_id, only_match


class SqlAttemptRepository:
    """Refresh attempts in the database (implements ``yak.ports.AttemptRepository``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool = False
    ) -> RefreshAttempt:
        """Store a refresh attempt. ``result_version`` is the version it produced (``applied``
        only). The attempt keeps ``outcome.attempt_id`` when set, else gets a new id.

        Raises:
            WorkspaceNotFound: unknown workspace.
        """
        values = {
            "id": outcome.attempt_id or new_id(),
            "workspace_id": outcome.workspace_id,
            "status": str(outcome.status),
            "reason": outcome.reason or "",
            "base_version": base_version,
            "result_version": (
                outcome.version if outcome.status is RefreshStatus.APPLIED else None
            ),
            "model": outcome.model,
            "reply": outcome.reply,
            "input_tokens": outcome.usage.input_tokens,
            "output_tokens": outcome.usage.output_tokens,
            "duration_s": float(outcome.duration_s),
            "session_ids": list(outcome.session_ids),
            "flags": list(outcome.flags),
            "rebuild": bool(rebuild),
            "created_at": now(),
            "added": int(outcome.added),
            "removed": int(outcome.removed),
            "proposal_id": outcome.proposal_id,
        }
        with self.db.session() as s:
            require_workspace(s, outcome.workspace_id)
            # A prebuilt Core insert: building an ORM row and flushing it cost more than the
            # insert itself, once per refresh.
            s.connection().execute(_INSERT, values)
        return to_attempt(RefreshAttemptRow(**values))

    def list(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
        stmt = (
            select(RefreshAttemptRow)
            .where(RefreshAttemptRow.workspace_id == workspace_id)
            .order_by(RefreshAttemptRow.created_at.desc(), RefreshAttemptRow.id.desc())
        )
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.db.session() as s:
            return [to_attempt(r) for r in s.scalars(stmt)]

    def get(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One attempt of the workspace, by full id or a unique prefix (at least
        ``MIN_ID_PREFIX`` characters) of one.

        Raises:
            UsageError: no attempt of this workspace matches, several do, or the prefix is
                too short.
        """
        wanted = id_prefix(attempt_id, ATTEMPT_IDS)
        with self.db.session() as s:
            rows = list(
                s.scalars(
                    select(RefreshAttemptRow)
                    .where(
                        RefreshAttemptRow.workspace_id == workspace_id,
                        func.substr(RefreshAttemptRow.id, 1, len(wanted)) == wanted,
                    )
                    .limit(2)
                )
            )
            return to_attempt(only_match(rows, attempt_id, ATTEMPT_IDS))

    def latest(self) -> dict[str, RefreshAttempt]:
        """The newest attempt of every workspace that has one, without its reply (``reply`` is
        ``None``), by workspace id: the memory list's Status column.

        The newest time per workspace comes from the ``(workspace_id, created_at)`` index
        alone; only those rows are then read, because the table holds every reply and scanning
        it is what is slow.
        """
        attempt = RefreshAttemptRow
        newest = (
            select(
                attempt.workspace_id.label("workspace_id"),
                func.max(attempt.created_at).label("created_at"),
            )
            .group_by(attempt.workspace_id)
            .subquery()
        )
        columns = [c for c in attempt.__table__.columns if c.name != "reply"]
        stmt = (
            select(*columns)
            .join(
                newest,
                and_(
                    attempt.workspace_id == newest.c.workspace_id,
                    attempt.created_at == newest.c.created_at,
                ),
            )
            .order_by(attempt.id)  # two attempts in the same instant: the later id wins
        )
        with self.db.session() as s:
            return {
                row.workspace_id: to_attempt(cast(RefreshAttemptRow, row))
                for row in s.execute(stmt)
            }


_INSERT = insert(RefreshAttemptRow.metadata.tables[RefreshAttemptRow.__tablename__])
