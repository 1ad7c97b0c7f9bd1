"""The fast read path: the repositories' hot reads over plain ``sqlite3``, without SQLAlchemy.

A command that only reads (``yak memory show``, ``list``, ``history``, ``export``) pays for its
imports on every run, and SQLAlchemy's ORM alone costs many times a bare interpreter's start. So
when the database is the local SQLite file and its schema is this Yak's newest (one query, see
:func:`open_reader`), the composition root gives those commands these adapters: one read-only
``sqlite3`` connection running the same SQL texts as the SQLAlchemy repositories
(``yak.db.reads``, so both return the same domain objects). Every other method (a write, a
rarer read) is handed, explicitly, to the SQLAlchemy repository, built on first use, so the
ports behave exactly the same either way. See ``docs/cli.md``, "The command line".
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, Unpack
from urllib.parse import quote

from yak import paths
from yak.db import attempt_reads, reads
from yak.db.schema import BUSY_TIMEOUT_MS, DB_FILE, head_revision
from yak.errors import StoreError
from yak.text import shown

if TYPE_CHECKING:  # types only: a reading command does not import the ports
    from yak.domain import (
        MemoryDocument,
        MemorySummary,
        Proposal,
        RefreshAttempt,
        RefreshOutcome,
        ReviewMode,
        Revision,
        Tombstone,
        UpkeepStats,
        Workspace,
        WorkspaceStamp,
    )
    from yak.evidence import Evidence
    from yak.ports import (
        AttemptRepository,
        Burials,
        DocumentRepository,
        ProposalStore,
        WorkspaceRepository,
        WriteOptions,
    )

T = TypeVar("T")
log = logging.getLogger(__name__)


class Reader:
    """One read-only ``sqlite3`` connection to ``yak.db`` (``query_only``, busy timeout): a
    ``yak.db.reads.Query``.

    Args:
        connection: an open connection (see :func:`open_reader`).
        path: the database file, for error sentences.
    """

    dialect = "sqlite"

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path

    def rows(self, sql: str, parameters: Mapping[str, object]) -> Sequence[reads.Row]:
        """The rows of one query.

        Raises:
            StoreError: the database cannot be read (busy past the timeout, damaged).
        """
        try:
            return self.connection.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            where = shown(self.path)
            raise StoreError(f"The Yak database ({where}) cannot be read: {exc}") from exc

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


class WorkspaceReader:
    """``yak.ports.WorkspaceRepository``: the reads over ``reader``, the rest by the SQLAlchemy
    repository ``full()`` builds on first use."""

    def __init__(self, reader: Reader, full: Callable[[], WorkspaceRepository]) -> None:
        self._reader = reader
        self._full = full

    def find(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (key or folder identity), never creating one.

        Raises:
            WorkspaceNotFound: ``path`` cannot be a workspace key.
        """
        key = reads.workspace_key(path)
        workspace_id = paths.workspace_id_for(key)
        return reads.find_workspace(self._reader, key, workspace_id, by_folder=True)

    def get(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        return reads.existing_workspace(self._reader, workspace_id)

    def linked_to(self, workspace_id: str) -> Workspace | None:
        """The workspace whose document ``workspace_id`` uses, or ``None``."""
        return reads.linked_to(self._reader, workspace_id)

    def memories_at(self, keys: Sequence[str]) -> dict[str, MemorySummary]:
        """The stored workspaces at exactly these keys with a non-empty document, by key."""
        return reads.memories_at(self._reader, keys)

    def orphans_named(self, name: str) -> list[MemorySummary]:
        """Orphans named ``name`` with a non-empty document, most recently updated first."""
        return reads.orphans_named(self._reader, name)

    def orphans_beside(self, folder: str) -> list[tuple[MemorySummary, str]]:
        """Orphans beside the folder keyed ``folder``, each with its document's text."""
        return reads.orphans_beside(self._reader, folder)

    def declined_renames(self, folder: str) -> set[str]:
        """Ids of the orphans declined as the predecessor of the folder keyed ``folder``."""
        return reads.declined_renames(self._reader, folder)

    def open(self, path: str, *, mark_opened: bool = True) -> Workspace:
        return self._full().open(path, mark_opened=mark_opened)

    def recent(self, limit: int) -> list[Workspace]:
        return self._full().recent(limit)

    def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        return self._full().reattach(workspace_id, new_path)

    def set_memory_enabled(self, workspace_id: str, *, enabled: bool) -> Workspace:
        return self._full().set_memory_enabled(workspace_id, enabled=enabled)

    def set_review_mode(self, workspace_id: str, mode: ReviewMode) -> Workspace:
        return self._full().set_review_mode(workspace_id, mode)

    def set_synced_file(self, workspace_id: str, path: str | None) -> Workspace:
        return self._full().set_synced_file(workspace_id, path)

    def decline_rename(self, folder: str, workspace_id: str) -> None:
        self._full().decline_rename(folder, workspace_id)

    def link(self, workspace_id: str, target_id: str) -> None:
        self._full().link(workspace_id, target_id)

    def unlink(self, workspace_id: str) -> Workspace | None:
        return self._full().unlink(workspace_id)


class DocumentReader:
    """``yak.ports.DocumentRepository``: the reads over ``reader``, the writes (and the
    watcher's questions) by the SQLAlchemy repository ``full()`` builds on first use."""

    def __init__(self, reader: Reader, full: Callable[[], DocumentRepository]) -> None:
        self._reader = reader
        self._full = full

    def read(self, workspace_id: str) -> MemoryDocument:
        """Raises ``WorkspaceNotFound`` or ``UnreadableDocument`` (bytes that are not UTF-8)."""
        return reads.read_document(self._reader, workspace_id)

    def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, readable or not."""
        return reads.read_raw(self._reader, workspace_id)

    def summaries(self) -> list[MemorySummary]:
        """Every workspace with a memory, most recently updated first."""
        return reads.summaries(self._reader)

    def history(self, workspace_id: str) -> list[Revision]:
        """Revisions newest first."""
        return reads.history(self._reader, workspace_id)

    def revisions_since(self, workspace_id: str, version: int) -> list[Revision]:
        """The revisions whose version is ``version`` or newer, oldest first."""
        return reads.revisions_since(self._reader, workspace_id, version)

    def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """By id, unique id prefix or version number. Raises ``RevisionNotFound``."""
        return reads.revision(self._reader, workspace_id, revision)

    def write(
        self, workspace_id: str, text: str, **options: Unpack[WriteOptions]
    ) -> MemoryDocument:
        return self._full().write(workspace_id, text, **options)

    def together(self, work: Callable[[], T]) -> T:
        return self._full().together(work)

    def tombstones(self, workspace_id: str) -> list[Tombstone]:
        return self._full().tombstones(workspace_id)

    def advance_watermarks(self, watermarks: Mapping[str, str]) -> None:
        self._full().advance_watermarks(watermarks)

    def evidence_history(self, workspace_id: str) -> list[tuple[datetime, tuple[Evidence, ...]]]:
        """When each revision that kept evidence was stored, with that evidence."""
        return reads.evidence_history(self._reader, workspace_id)

    def confirmations(self, workspace_id: str) -> dict[str, datetime]:
        return self._full().confirmations(workspace_id)

    def confirm_lines(self, workspace_id: str, keys: Collection[str]) -> datetime:
        return self._full().confirm_lines(workspace_id, keys)

    def passage_times(self, message_ids: Collection[str]) -> dict[str, datetime]:
        return self._full().passage_times(message_ids)

    def versions(self) -> dict[str, int]:
        return self._full().versions()

    def stamps(self) -> dict[str, WorkspaceStamp]:
        return self._full().stamps()

    def data_version(self) -> int:
        return self._full().data_version()


class ProposalReader:
    """``yak.ports.ProposalStore``: the reads over ``reader``, the rest by the SQLAlchemy
    repository ``full()`` builds on first use."""

    def __init__(self, reader: Reader, full: Callable[[], ProposalStore]) -> None:
        self._reader = reader
        self._full = full

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only the pending ones by default)."""
        return reads.proposals(self._reader, workspace_id, pending_only=pending_only)

    def add_proposal(self, proposal: Proposal) -> Proposal:
        return self._full().add_proposal(proposal)

    def pending_counts(self) -> dict[str, int]:
        return self._full().pending_counts()

    def supersede_proposals(self, workspace_id: str) -> int:
        return self._full().supersede_proposals(workspace_id)

    def rebase_proposals(self, rebased: Sequence[Proposal]) -> int:
        return self._full().rebase_proposals(rebased)

    def get_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        return self._full().get_proposal(workspace_id, proposal_id)

    def reject_proposal(
        self, workspace_id: str, proposal_id: str, *, bury: Burials, watermarks: Mapping[str, str]
    ) -> Proposal:
        return self._full().reject_proposal(
            workspace_id, proposal_id, bury=bury, watermarks=watermarks
        )

    def withdraw_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        return self._full().withdraw_proposal(workspace_id, proposal_id)


class AttemptReader:
    """``yak.ports.AttemptRepository``: the reads over ``reader``, ``record`` by the
    SQLAlchemy repository ``full()`` builds on first use."""

    def __init__(self, reader: Reader, full: Callable[[], AttemptRepository]) -> None:
        self._reader = reader
        self._full = full

    def list(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
        return attempt_reads.attempts(self._reader, workspace_id, limit)

    def get(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One attempt by full id or unique prefix. Raises ``UsageError``."""
        return attempt_reads.attempt(self._reader, workspace_id, attempt_id)

    def latest(self) -> dict[str, RefreshAttempt]:
        """The newest attempt of each workspace, without replies."""
        return attempt_reads.latest_attempts(self._reader)

    def upkeep(self, workspace_id: str | None = None) -> dict[str, UpkeepStats]:
        """Refreshes, model calls, tokens and outcomes over the last 7 and 30 days."""
        return attempt_reads.upkeep(self._reader, datetime.now(UTC), workspace_id=workspace_id)

    def record(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool = False
    ) -> RefreshAttempt:
        return self._full().record(outcome, base_version=base_version, rebuild=rebuild)
