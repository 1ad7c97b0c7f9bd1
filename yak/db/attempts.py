"""The attempt repository: every refresh attempt, applied or not, with its reply and usage.

Queries: a prebuilt Core insert on the session's connection, and the shared SQL texts of
``yak.db.reads`` for the reads (the command line's reader runs the same ones).
"""

from __future__ import annotations

from sqlalchemy import insert

from yak.db import attempt_reads
from yak.db.engine import Database
from yak.db.models import RefreshAttemptRow, table_of
from yak.db.rows import SessionQuery, now, require_workspace
from yak.domain import RefreshAttempt, RefreshOutcome, RefreshStatus, UpkeepStats
from yak.ids import new_id


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
        attempt = RefreshAttempt(
            id=outcome.attempt_id or new_id(),
            workspace_id=outcome.workspace_id,
            status=RefreshStatus(outcome.status),
            reason=outcome.reason or "",
            base_version=base_version,
            result_version=outcome.version if outcome.status is RefreshStatus.APPLIED else None,
            model=outcome.model,
            reply=outcome.reply,
            usage=outcome.usage,
            duration_s=float(outcome.duration_s),
            session_ids=tuple(outcome.session_ids),
            flags=tuple(outcome.flags),
            created_at=now(),
            added=int(outcome.added),
            removed=int(outcome.removed),
            proposal_id=outcome.proposal_id,
        )
        with self.db.session() as s:
            require_workspace(s, outcome.workspace_id)
            # A prebuilt Core insert: building an ORM row and flushing it cost more than the
            # insert itself, once per refresh.
            s.connection().execute(
                _INSERT,
                {
                    "id": attempt.id,
                    "workspace_id": attempt.workspace_id,
                    "status": str(attempt.status),
                    "reason": attempt.reason,
                    "base_version": base_version,
                    "result_version": attempt.result_version,
                    "model": attempt.model,
                    "reply": attempt.reply,
                    "input_tokens": attempt.usage.input_tokens,
                    "output_tokens": attempt.usage.output_tokens,
                    "cache_write_tokens": attempt.usage.cache_creation_input_tokens,
                    "cache_read_tokens": attempt.usage.cache_read_input_tokens,
                    "duration_s": attempt.duration_s,
                    "session_ids": list(attempt.session_ids),
                    "flags": list(attempt.flags),
                    "rebuild": bool(rebuild),
                    "created_at": attempt.created_at,
                    "added": attempt.added,
                    "removed": attempt.removed,
                    "proposal_id": attempt.proposal_id,
                },
            )
        return attempt

    def list(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
        with self.db.session() as s:
            return attempt_reads.attempts(SessionQuery(s), workspace_id, limit)

    def get(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One attempt of the workspace, by full id or a unique prefix (at least
        ``MIN_ID_PREFIX`` characters) of one.

        Raises:
            UsageError: no attempt of this workspace matches, several do, or the prefix is
                too short.
        """
        with self.db.session() as s:
            return attempt_reads.attempt(SessionQuery(s), workspace_id, attempt_id)

    def latest(self) -> dict[str, RefreshAttempt]:
        """The newest attempt of every workspace that has one, without its reply (``reply`` is
        ``None``), by workspace id: the memory list's Status column."""
        with self.db.session() as s:
            return attempt_reads.latest_attempts(SessionQuery(s))

    def upkeep(self, workspace_id: str | None = None) -> dict[str, UpkeepStats]:
        """The memory's upkeep over the last 7 and 30 days per workspace with an attempt in
        them (``attempt_reads.upkeep``), by workspace id; only ``workspace_id``'s when given."""
        with self.db.session() as s:
            return attempt_reads.upkeep(SessionQuery(s), now(), workspace_id=workspace_id)


_INSERT = insert(table_of(RefreshAttemptRow))
