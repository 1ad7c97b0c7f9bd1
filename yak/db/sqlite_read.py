"""The fast read path: the repositories' reads in plain ``sqlite3``, without SQLAlchemy.

A command that only reads (``yak memory show``, ``list``, ``history``, ``export``) pays for its
imports on every run, and SQLAlchemy's ORM alone costs many times a bare interpreter's start. So
when the database is the local SQLite file and its schema is this Yak's newest (one query, see
:func:`open_reader`), the composition root gives those commands these adapters: one read-only
``sqlite3`` connection and a few hand-written queries returning the same domain objects as the
SQLAlchemy repositories. Any other method (a write, a rarer read) is handed to the SQLAlchemy
repository, built on first use, so the ports behave exactly the same either way. See
``docs/architecture.md``, "The command line".
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from yak import paths
from yak.db.schema import (
    BUSY_TIMEOUT_MS,
    DB_FILE,
    SUMMARIES_SQL,
    decode_document,
    head_revision,
    review_mode,
    summaries_of,
    utc_time,
)
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    Proposal,
    ProposalStatus,
    RefreshAttempt,
    RefreshStatus,
    TokenUsage,
    Workspace,
    count_lines,
)
from yak.errors import StoreError, WorkspaceNotFound
from yak.ids import ATTEMPT_IDS, id_prefix, only_match

log = logging.getLogger(__name__)


class Reader:
    """One read-only ``sqlite3`` connection to ``yak.db`` (``query_only``, busy timeout).

    Args:
        connection: an open connection (see :func:`open_reader`).
        path: the database file, for error sentences.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query.

        Raises:
            StoreError: the database cannot be read (busy past the timeout, damaged).
        """
        try:
            return self.connection.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"The Yak database ({self.path}) cannot be read: {exc}") from exc

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def open_reader(data_dir: Path) -> Reader | None:
    """A read-only connection to ``data_dir``'s ``yak.db`` when it exists and its schema is
    certainly this Yak's newest; ``None`` otherwise (no file, a schema to migrate or judge, a
    file that cannot be opened this way), and the caller then opens the database as usual.
    """
    path = Path(data_dir) / DB_FILE
    head = head_revision()
    if head is None or not path.is_file():
        return None
    uri = "file:" + quote(path.resolve().as_posix(), safe="/:") + "?mode=ro"
    try:
        connection = sqlite3.connect(
            uri, uri=True, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
    except sqlite3.Error as exc:
        log.info("no fast read path for %s: %s", path, exc)
        return None
    try:
        connection.execute("PRAGMA query_only=ON")
        stored = {row[0] for row in connection.execute("SELECT version_num FROM alembic_version")}
    except sqlite3.Error as exc:
        log.info("no fast read path for %s: %s", path, exc)
        connection.close()
        return None
    if stored != {head}:
        connection.close()
        return None
    return Reader(connection, path)


class _FallingBack:
    """Hands every method this class does not define to the SQLAlchemy repository, built on
    first use by ``fallback``."""

    def __init__(self, reader: Reader, fallback: Callable[[], object]) -> None:
        self._reader = reader
        self._fallback = fallback
        self._full: object | None = None

    def _full_repository(self) -> Any:
        if self._full is None:
            self._full = self._fallback()
        return self._full

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._full_repository(), name)


def _workspace(row: tuple[Any, ...]) -> Workspace:
    ws_id, path, created_at, last_opened_at, enabled, mode, synced_file = row
    created = utc_time(created_at)
    assert created is not None  # the column is never empty
    return Workspace(
        id=ws_id,
        path=path,
        created_at=created,
        last_opened_at=utc_time(last_opened_at),
        memory_enabled=bool(enabled),
        review_mode=review_mode(mode),
        synced_file=synced_file,
    )


_WORKSPACE = (
    "SELECT id, path, created_at, last_opened_at, memory_enabled, review_mode, synced_file "
    "FROM workspaces"
)


class WorkspaceReader(_FallingBack):
    """``find`` and ``get`` of ``yak.ports.WorkspaceRepository`` in plain SQL; the rest through
    the SQLAlchemy repository."""

    def find(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (its key, else a stored folder with the same
        identity), or ``None``; never creates one.

        Raises:
            WorkspaceNotFound: ``path`` cannot be a workspace key.
        """
        try:
            key = paths.normalize_workspace_path(path)
        except ValueError as exc:
            raise WorkspaceNotFound(str(exc)) from None
        workspace_id = paths.workspace_id_for(key)
        found = self._reader.rows(_WORKSPACE + " WHERE id = ?", (workspace_id,))
        if found:
            return _workspace(found[0])
        identity = paths.folder_identity(key)
        if identity is None:
            return None
        candidates = self._reader.rows(
            _WORKSPACE + " WHERE st_dev = ? AND st_ino = ? AND id != ?",
            (str(identity[0]), str(identity[1]), workspace_id),
        )
        for row in candidates:
            if paths.folder_identity(row[1]) == identity:
                return _workspace(row)
        return None

    def get(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        found = self._reader.rows(_WORKSPACE + " WHERE id = ?", (workspace_id,))
        if not found:
            raise WorkspaceNotFound(f"No workspace has the id {workspace_id}.")
        return _workspace(found[0])

    # The scope reads every ``memory show`` makes ("Scopes" in docs/architecture.md).
    def linked_to(self, workspace_id: str) -> Workspace | None:
        """The workspace whose document ``workspace_id`` uses, or ``None``."""
        found = self._reader.rows(
            _WORKSPACE
            + " WHERE id = (SELECT target_id FROM workspace_links WHERE workspace_id = ?)",
            (workspace_id,),
        )
        return _workspace(found[0]) if found else None

    def memories_at(self, keys: Sequence[str]) -> dict[str, MemorySummary]:
        """The stored workspaces at exactly these keys whose document is not empty, by key."""
        if not keys:
            return {}
        marks = ", ".join("?" * len(keys))
        rows = self._reader.rows(
            f"{_WITH_DOCUMENT} WHERE w.path IN ({marks}) AND d.content != ''", tuple(keys)
        )
        return {summary.workspace.path: summary for summary in map(_summary, rows)}

    def orphans_named(self, name: str) -> list[MemorySummary]:
        """The workspaces whose folder is gone, whose folder's name is ``name`` and whose
        document is not empty, most recently updated first."""
        ending = os.sep + name
        rows = self._reader.rows(
            f"{_WITH_DOCUMENT} WHERE substr(w.path, -?) = ? AND d.content != '' "
            "ORDER BY d.updated_at DESC",
            (len(ending), ending),
        )
        return [summary for summary in map(_summary, rows) if summary.orphaned]

    def declined_renames(self, folder: str) -> set[str]:
        """The ids of the orphaned workspaces declined as the predecessor of ``folder``."""
        rows = self._reader.rows(
            "SELECT workspace_id FROM declined_renames WHERE folder = ?", (folder,)
        )
        return {row[0] for row in rows}


_WITH_DOCUMENT = (
    "SELECT w.id, w.path, w.created_at, w.last_opened_at, w.memory_enabled, w.review_mode, "
    "w.synced_file, d.version, d.content, d.updated_at, d.flags "
    "FROM workspaces w JOIN memory_documents d ON d.workspace_id = w.id"
)


def _summary(row: tuple[Any, ...]) -> MemorySummary:
    version, content, updated_at, flags = row[7:]
    return MemorySummary(
        workspace=_workspace(row[:7]),
        version=int(version),
        lines=count_lines(content),
        chars=len(content),
        updated_at=utc_time(updated_at),
        flags=_strings(flags),
        orphaned=not os.path.isdir(row[1]),
    )


def _strings(stored: str | None) -> tuple[str, ...]:
    """A stored JSON list of strings as a tuple (``()`` for ``NULL``)."""
    return () if stored in (None, "[]") else tuple(json.loads(stored))


class DocumentReader(_FallingBack):
    """``read``, ``read_raw`` and ``proposals`` of ``yak.ports.DocumentRepository`` in plain
    SQL; the rest through the SQLAlchemy repository."""

    def _linked(self, workspace_id: str) -> bool:
        """Whether the workspace shares another's document (a linked worktree, "Scopes" in
        docs/architecture.md): the SQLAlchemy repository, which follows the link, answers."""
        return bool(
            self._reader.rows(
                "SELECT 1 FROM workspace_links WHERE workspace_id = ?", (workspace_id,)
            )
        )

    def _row(self, workspace_id: str) -> tuple[Any, ...] | None:
        found = self._reader.rows(
            "SELECT CAST(content AS BLOB), version, flags, updated_at FROM memory_documents "
            "WHERE workspace_id = ?",
            (workspace_id,),
        )
        if found:
            return found[0]
        WorkspaceReader(self._reader, self._fallback).get(workspace_id)  # unknown: raises
        return None

    def read(self, workspace_id: str) -> MemoryDocument:
        """The current document; version 0 and empty content when never written.

        Raises:
            WorkspaceNotFound: unknown id. UnreadableDocument: the bytes are not UTF-8.
        """
        if self._linked(workspace_id):
            return self._full_repository().read(workspace_id)
        row = self._row(workspace_id)
        if row is None:
            return MemoryDocument(workspace_id=workspace_id, content="", version=0, updated_at=None)
        raw, version, flags, updated_at = row
        return MemoryDocument(
            workspace_id=workspace_id,
            content=decode_document(workspace_id, int(version), raw),
            version=int(version),
            updated_at=utc_time(updated_at),
            flags=_strings(flags),
        )

    def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly (``b""`` when never written).

        Raises:
            WorkspaceNotFound: unknown id.
        """
        if self._linked(workspace_id):
            return self._full_repository().read_raw(workspace_id)
        row = self._row(workspace_id)
        return b"" if row is None else bytes(row[0] or b"")

    def summaries(self) -> list[MemorySummary]:
        """Every workspace with a memory, most recently updated first (the same query and
        decoding as the SQLAlchemy repository's)."""
        return summaries_of(self._reader.rows(SUMMARIES_SQL))

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only the pending ones by default)."""
        if self._linked(workspace_id):
            full = self._full_repository()
            return full.proposals(workspace_id, pending_only=pending_only)
        sql = (
            "SELECT id, workspace_id, base_version, content, reasons, added, removed, status, "
            "created_at, model, session_ids, watermarks, flags, decided_at "
            "FROM memory_proposals WHERE workspace_id = ?"
        )
        parameters: tuple[Any, ...] = (workspace_id,)
        if pending_only:
            sql += " AND status = ?"
            parameters += (str(ProposalStatus.PENDING),)
        proposals = []
        for row in self._reader.rows(sql + " ORDER BY id", parameters):
            (p_id, ws_id, base, content, reasons, added, removed, status, created_at) = row[:9]
            model, session_ids, watermarks, flags, decided_at = row[9:]
            created = utc_time(created_at)
            assert created is not None
            proposals.append(
                Proposal(
                    id=p_id,
                    workspace_id=ws_id,
                    base_version=base,
                    content=content,
                    reasons=_strings(reasons),
                    added=added or 0,
                    removed=removed or 0,
                    status=ProposalStatus(status),
                    created_at=created,
                    model=model,
                    session_ids=_strings(session_ids),
                    watermarks=dict(json.loads(watermarks)) if watermarks else {},
                    flags=_strings(flags),
                    decided_at=utc_time(decided_at),
                )
            )
        return proposals


_ATTEMPT = (
    "SELECT id, workspace_id, status, reason, base_version, result_version, model, reply, "
    "input_tokens, output_tokens, duration_s, session_ids, flags, created_at, added, removed, "
    "proposal_id FROM refresh_attempts"
)


def _attempt(row: tuple[Any, ...]) -> RefreshAttempt:
    (a_id, ws_id, status, reason, base, result, model, reply, tokens_in, tokens_out) = row[:10]
    duration, session_ids, flags, created_at, added, removed, proposal_id = row[10:]
    created = utc_time(created_at)
    assert created is not None
    return RefreshAttempt(
        id=a_id,
        workspace_id=ws_id,
        status=RefreshStatus(status),
        reason=reason or "",
        base_version=base,
        result_version=result,
        model=model,
        reply=reply,
        usage=TokenUsage(input_tokens=tokens_in or 0, output_tokens=tokens_out or 0),
        duration_s=duration or 0.0,
        session_ids=_strings(session_ids),
        flags=_strings(flags),
        created_at=created,
        added=added or 0,
        removed=removed or 0,
        proposal_id=proposal_id,
    )


class AttemptReader(_FallingBack):
    """``list`` and ``get`` of ``yak.ports.AttemptRepository`` in plain SQL; the rest through
    the SQLAlchemy repository."""

    def list(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
        sql = _ATTEMPT + " WHERE workspace_id = ? ORDER BY created_at DESC, id DESC"
        parameters: tuple[Any, ...] = (workspace_id,)
        if limit is not None:
            sql += " LIMIT ?"
            parameters += (limit,)
        return [_attempt(row) for row in self._reader.rows(sql, parameters)]

    def get(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One attempt of the workspace, by full id or a unique prefix (at least
        ``MIN_ID_PREFIX`` characters) of one.

        Raises:
            UsageError: no attempt of this workspace matches, several do, or the prefix is
                too short.
        """
        wanted = id_prefix(attempt_id, ATTEMPT_IDS)
        rows = self._reader.rows(
            _ATTEMPT + " WHERE workspace_id = ? AND substr(id, 1, ?) = ? LIMIT 2",
            (workspace_id, len(wanted), wanted),
        )
        return _attempt(only_match(rows, attempt_id, ATTEMPT_IDS))
