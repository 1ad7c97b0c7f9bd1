"""Reading memory documents, their history, the origin of their lines and the refresh attempts,
for every front end (``MemoryService`` adds the writes; see ``docs/memory.md``, "The
memory document").

Repository calls run through the ``offload`` (on worker threads, so a window never waits on the
disk; in place for a command that only reads). A read tells the watcher which version a view
shows, so a write by another process is noticed (``yak.memory.watcher``).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from yak.aio import Offload
from yak.domain import (
    LineOrigin,
    MemoryDocument,
    MemorySummary,
    RefreshAttempt,
    ReviewMode,
    Revision,
    RevisionSource,
    Tombstone,
    UpkeepStats,
    Workspace,
)
from yak.errors import UnreadableDocument, UsageError, YakError
from yak.memory import document as rules
from yak.memory.files import write_output_file
from yak.memory.freshness.age import LineAge, line_ages
from yak.memory.freshness.references import DEFAULT_DEADLINE_S, check_references
from yak.memory.freshness.stale import StaleLine, stale_lines
from yak.memory.history import provenance
from yak.memory.watcher import MemoryWatcher
from yak.references import ReferenceCheck

if TYPE_CHECKING:
    from yak.ports import (
        AttemptRepository,
        DocumentRepository,
        SearchCandidates,
        SearchIndex,
        WorkspaceRepository,
    )

T = TypeVar("T")

_ORIGINS_KEPT = 16  # workspaces whose line origins are remembered between refreshes


class MemoryReader:
    """The reads of the memory service.

    Args:
        workspaces: the stored workspaces.
        documents: the documents, revisions and tombstones.
        attempts: the refresh attempts.
        search_index: finds the documents that may contain a text (the database's full-text
            index, else every document).
        watcher: told the version of every document read.
        offload: runs each repository or file call (``yak.aio``).
    """

    def __init__(
        self,
        *,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        attempts: AttemptRepository,
        search_index: SearchIndex,
        watcher: MemoryWatcher,
        offload: Offload,
    ) -> None:
        self._workspaces = workspaces
        self._documents = documents
        self._attempts = attempts
        self._search_index = search_index
        self.watcher = watcher
        self._offload = offload
        # workspace id -> (version, revision id, lines, origins) of the newest blame answer
        self._origins: OrderedDict[str, tuple[int, str, list[str], list[LineOrigin]]] = (
            OrderedDict()
        )
        self._origins_lock = threading.Lock()  # blame runs on worker threads

    async def read(self, workspace_id: str) -> MemoryDocument:
        """The current document (version 0 and empty when never written); the workspace is
        then watched for writes by other processes.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        document = await self._offload(self._documents.read, workspace_id)
        self.watcher.remember(workspace_id, document.version)
        return document

    async def read_with(
        self, workspace_id: str, then: Callable[[MemoryDocument], T]
    ) -> tuple[MemoryDocument, T]:
        """:meth:`read`, then ``then(document)`` on the same worker thread (one hop instead of
        two) and in the same transaction (``DocumentRepository.together``; ``then`` only
        reads): a refresh reads the document first, then its conversations, so that a refresh
        elsewhere that folds them in between moves the version it writes against.

        Raises:
            WorkspaceNotFound: unknown id; what ``then`` raises.
        """

        def read() -> tuple[MemoryDocument, T]:
            document = self._documents.read(workspace_id)
            return document, then(document)

        document, also = await self._offload(self._documents.together, read)
        self.watcher.remember(workspace_id, document.version)
        return document, also

    async def current_version(self, workspace_id: str) -> int:
        """The stored version, also when the document cannot be read as text (a restore or a
        new text is then written on it)."""
        try:
            return (await self.read(workspace_id)).version
        except UnreadableDocument as exc:
            return exc.version

    async def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, also when they are not UTF-8 (the way out of
        ``UnreadableDocument``: show them, then restore a revision or save a new text)."""
        return await self._offload(self._documents.read_raw, workspace_id)

    async def version_text(self, workspace_id: str, version: int) -> str:
        """The text of ``version`` of the document (``""`` for version 0, or a version whose
        revision is gone)."""
        if version <= 0:
            return ""
        current = await self.read(workspace_id)
        if current.version == version:
            return current.content
        try:
            return (await self.get_revision(workspace_id, str(version))).content
        except YakError:
            return ""

    async def blame(self, workspace_id: str) -> list[LineOrigin]:
        """The origin of every line of the current document (``[]`` for an empty one): the
        version, source, time and conversations of the write that introduced it, from the
        revision chain (see :func:`yak.memory.history.provenance.blame`)."""
        return await self._offload(self._blame, workspace_id)

    def _blame(self, workspace_id: str) -> list[LineOrigin]:
        """:meth:`blame` on a worker thread, walking only the revisions written since the last
        answer for the workspace (history is append-only), so a refresh's cost does not grow
        with the length of the history. The whole chain is walked the first time, when the
        remembered revision is not there any more, and when a restore was written since."""
        with self._origins_lock:
            cached = self._origins.get(workspace_id)
        if cached is not None:
            version, revision_id, lines, origins = cached
            newer = self._documents.revisions_since(workspace_id, version)
            ids = [r.id for r in newer]
            if revision_id in ids:
                since = newer[ids.index(revision_id) + 1 :]
                if not any(r.source is RevisionSource.RESTORE for r in since):
                    if since:
                        origins = provenance.blame(since, start=(lines, origins))
                        self._remember_origins(workspace_id, since[-1], origins)
                    return list(origins)
        revisions = list(reversed(self._documents.history(workspace_id)))
        origins = provenance.blame(revisions)
        if revisions:
            self._remember_origins(workspace_id, revisions[-1], origins)
        return list(origins)

    def _remember_origins(
        self, workspace_id: str, revision: Revision, origins: list[LineOrigin]
    ) -> None:
        entry = (revision.version, revision.id, [o.text for o in origins], list(origins))
        with self._origins_lock:
            self._origins[workspace_id] = entry
            self._origins.move_to_end(workspace_id)
            while len(self._origins) > _ORIGINS_KEPT:
                self._origins.popitem(last=False)

    def origins_and_tombstones(self, workspace_id: str) -> tuple[list[LineOrigin], list[Tombstone]]:
        """:meth:`blame` and :meth:`tombstones` read together, on the calling thread (a refresh
        and a proposal need both): blocking, so call it on a worker thread, e.g. in
        :meth:`read_with`'s ``then``, which puts the refresh's reads in one hop.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        return self._blame(workspace_id), self._documents.tombstones(workspace_id)

    async def check_references(
        self, workspace_id: str, *, deadline_seconds: float = DEFAULT_DEADLINE_S
    ) -> tuple[MemoryDocument, ReferenceCheck]:
        """The current document and its lines whose references are gone from the workspace
        folder ("Checked at use" in docs/memory.md), checked on a worker thread within
        ``deadline_seconds`` (past it, ``gave_up``).

        Raises:
            WorkspaceNotFound: unknown id.
        """

        def check() -> tuple[MemoryDocument, ReferenceCheck]:
            workspace = self._workspaces.get(workspace_id)
            document = self._documents.read(workspace_id)
            if not document.content.strip():
                return document, ReferenceCheck()
            found = check_references(
                document.content,
                Path(workspace.path),
                today=datetime.now().astimezone().date(),
                deadline_seconds=deadline_seconds,
            )
            return document, found

        return await self._offload(check)

    async def line_ages(self, workspace_id: str) -> list[LineAge]:
        """Each line's first said, last confirmed and entered times (``[]`` for an empty
        document; ``yak.memory.freshness.age``). Raises ``WorkspaceNotFound``."""

        return await self._offload(self.ages_on_thread, workspace_id)

    def ages_on_thread(self, workspace_id: str) -> list[LineAge]:
        """:meth:`line_ages` on the calling thread (blocking), with the remembered blame: what
        a conversation's memory block is marked from (``yak.agent.session_prompt``)."""
        return read_line_ages(self._documents, workspace_id, self._blame(workspace_id))

    async def stale(self, workspace_id: str, *, today: date, after_days: int) -> list[StaleLine]:
        """The stale lines of the current document (``yak.memory.freshness.stale``): a
        refresh's lines not said or confirmed for ``after_days`` days before ``today``, and the
        lines naming what the workspace folder no longer has (:meth:`check_references`)."""
        ages = await self.line_ages(workspace_id)
        _, check = await self.check_references(workspace_id)
        return stale_lines(ages, today=today, after_days=after_days, gone=check.gone)

    def stale_on_thread(
        self, workspace_id: str, origins: list[LineOrigin], *, after_days: int
    ) -> tuple[str, ...]:
        """The texts of :meth:`stale`'s lines as of today, on the calling thread (a refresh
        names them to the model: ``yak.memory.prompts.rewrite``); ``origins``: blame of the current
        document (``[]``: none, nothing is stale)."""
        if not origins:
            return ()
        ages = read_line_ages(self._documents, workspace_id, origins)
        today = datetime.now().astimezone().date()
        return tuple(s.text for s in stale_lines(ages, today=today, after_days=after_days))

    async def revision_as_of(self, workspace_id: str, moment: datetime) -> Revision | None:
        """The revision that was the document at ``moment`` (the newest stored at or before
        it; record time), or ``None`` when the memory was not written yet then."""
        revisions = await self.history(workspace_id)  # newest first
        return next((r for r in revisions if r.created_at <= moment), None)

    async def tombstones(self, workspace_id: str) -> list[Tombstone]:
        """The lines a person removed on purpose, oldest first."""
        return await self._offload(self._documents.tombstones, workspace_id)

    async def memory_enabled(self, workspace_id: str) -> bool:
        """Whether the workspace's memory is on. Raises ``WorkspaceNotFound``."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        return workspace.memory_enabled

    async def review_mode(self, workspace_id: str) -> ReviewMode:
        """The workspace's review mode. Raises ``WorkspaceNotFound``."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        return workspace.review_mode

    async def list_documents(self) -> list[MemorySummary]:
        """Every workspace with a memory, most recently updated first, orphans marked."""
        return await self._offload(self._documents.summaries)

    async def history(self, workspace_id: str) -> list[Revision]:
        """Revisions, newest first."""
        return await self._offload(self._documents.history, workspace_id)

    async def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """A revision by id, unique id prefix or version number. Raises ``RevisionNotFound``."""
        return await self._offload(self._documents.get_revision, workspace_id, revision)

    async def attempts(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts, newest first (at most ``limit``; ``None``: all)."""
        return await self._offload(self._attempts.list, workspace_id, limit)

    async def upkeep(self, workspace_id: str | None = None) -> dict[str, UpkeepStats]:
        """What the memory's refreshes cost over the last 7 and 30 days, per workspace with an
        attempt in them, by workspace id (only ``workspace_id``'s when given): refreshes, model
        calls, tokens and outcomes ("Cost" in docs/memory.md). Raises ``StoreError``."""
        return await self._offload(self._attempts.upkeep, workspace_id)

    async def get_attempt(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One refresh attempt by id or unique prefix. Raises ``UsageError``."""
        return await self._offload(self._attempts.get, workspace_id, attempt_id)

    async def last_attempt(self, workspace_id: str) -> RefreshAttempt | None:
        """The newest refresh attempt of the workspace, or ``None``."""
        found = await self.attempts(workspace_id, limit=1)
        return found[0] if found else None

    async def latest_attempts(self) -> dict[str, RefreshAttempt]:
        """The newest refresh attempt of every workspace that has one (replies not read)."""
        return await self._offload(self._attempts.latest)

    async def search_candidates(self, query: str) -> SearchCandidates:
        """The current documents that may contain ``query`` (``yak.memory.search`` matches
        their lines): the database's index chooses them, or every document is read (a plain
        scan, which the answer says)."""
        return await self._offload(self._search_index.candidates, query)

    async def export_bytes(
        self, workspace: Workspace, fmt: str = "text", *, stored: bool = True
    ) -> bytes:
        """The document as ``text`` (exact UTF-8, LF, no BOM), ``markdown`` (under a title) or
        ``json`` (with its metadata and history).

        Args:
            stored: ``False`` for a folder Yak never stored (an empty document, no history).

        Raises:
            UsageError: an unknown format.
        """
        if fmt not in rules.EXPORT_FORMATS:
            raise UsageError(
                f"Unknown export format {fmt!r}; use one of: {', '.join(rules.EXPORT_FORMATS)}."
            )
        if stored:
            document = await self._offload(self._documents.read, workspace.id)
            history = await self.history(workspace.id) if fmt == "json" else []
        else:
            document = MemoryDocument(
                workspace_id=workspace.id, content="", version=0, updated_at=None
            )
            history = []
        return rules.export_document(
            workspace, document, history, fmt, exported_at=datetime.now(UTC)
        )

    async def export_file(
        self,
        workspace: Workspace,
        path: str | os.PathLike[str],
        fmt: str = "text",
        *,
        force: bool = False,
        stored: bool = True,
    ) -> int:
        """Write :meth:`export_bytes` to ``path``; returns the number of bytes written.

        Args:
            force: overwrite an existing file.

        Raises:
            UsageError: the file exists and ``force`` is false, its folder is missing, or it
                cannot be written; the format is unknown.
        """
        data = await self.export_bytes(workspace, fmt, stored=stored)
        await self._offload(write_output_file, Path(path), data, force=force)
        return len(data)


def read_line_ages(
    documents: DocumentRepository,
    workspace_id: str,
    origins: list[LineOrigin] | None = None,
) -> list[LineAge]:
    """Each line's age (``yak.memory.freshness.age.line_ages``) from the stores: the revisions
    and their evidence, the times of the messages quoted, the confirmations. Blocking: call it
    on a worker thread.

    Args:
        documents: the document repository.
        workspace_id: the workspace.
        origins: blame of the current document, when already known (else walked here).

    Raises:
        WorkspaceNotFound: unknown id.
    """
    if origins is None:
        origins = provenance.blame(list(reversed(documents.history(workspace_id))))
    kept = documents.evidence_history(workspace_id)
    quoted = {entry.message_id for _, entries in kept for entry in entries}
    return line_ages(
        origins,
        kept,
        passage_times=documents.passage_times(quoted),
        confirmations=documents.confirmations(workspace_id),
    )
