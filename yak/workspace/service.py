"""WorkspaceService: the async facade the desktop UI uses for workspaces and their memory.

The UI never imports the storage layer; it calls this service, which runs every synchronous
``MemoryStore`` call on a worker thread (``asyncio.to_thread``) so the window never freezes on
I/O, and publishes :class:`yak.events.MemoryUpdated` on the event-loop thread after each write.

It also watches for writes made by another process (the CLI shares the database): a task polls
SQLite's ``PRAGMA data_version`` about once a second and, when it moved, re-reads every
document's version (one light query) and publishes ``MemoryUpdated(source="external")`` for each
workspace whose version changed, a new one included.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from yak.aio import spawn
from yak.db import Database
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    RefreshAttempt,
    RefreshOutcome,
    Revision,
    Workspace,
)
from yak.errors import UsageError, YakError
from yak.events import EventBus, MemoryUpdated
from yak.memory.store import MemoryStore
from yak.workspace.auto_refresh import AutoRefresh
from yak.workspace.state import LastRefresh, RefreshState

log = logging.getLogger(__name__)

# The versions of this many recently read workspaces are remembered, so the watcher's first
# step can already report a change to the memory the panel or the editor shows.
WATCHED_LIMIT = 16


class WorkspaceService:
    """Workspaces and their memory documents, for the UI, without blocking the event loop.

    Args:
        store: the memory store (synchronous; called on worker threads).
        db: the database the store uses (for the external-change watcher).
        bus: where ``MemoryUpdated`` is published.
        queue: the ``MemoryRefreshQueue`` (``refresh_now``, ``state``), or ``None`` when the
            refresh is not available.
        refresher: a ``MemoryRefresher`` used for forced refreshes when there is no queue.
        poll_interval_s: seconds between two checks for writes by another process.
        auto_refresh: the :class:`~yak.workspace.auto_refresh.AutoRefresh` gate around the
            queue, when automatic refreshes wait for an API key; its queue is used when
            ``queue`` is not given, forced refreshes go through it, and the refresh state
            includes its pause.
    """

    def __init__(self, *, store: MemoryStore, db: Database, bus: EventBus,
                 queue: Any | None = None, refresher: Any | None = None,
                 poll_interval_s: float = 1.0, auto_refresh: AutoRefresh | None = None) -> None:
        self._store = store
        self._db = db
        self._bus = bus
        self._auto_refresh = auto_refresh
        self._queue = queue if queue is not None or auto_refresh is None else auto_refresh.queue
        self._refresher = refresher
        self._poll_interval_s = poll_interval_s
        self._watched: OrderedDict[str, int] = OrderedDict()
        self._versions: dict[str, int] | None = None  # every document's version, last step
        self._last_data_version: int | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._unsubscribe = bus.subscribe(MemoryUpdated, self._on_bus_memory_updated)

    # --- workspaces --------------------------------------------------------------------------
    async def open(self, path: str | os.PathLike[str]) -> Workspace:
        """Register (or find) the workspace for an existing folder and mark it opened.

        Raises:
            WorkspaceNotFound: the folder does not exist or is not a directory.
            StoreError: the database failed.
        """
        text = os.fspath(path)
        if not text.strip():
            raise UsageError("Choose a folder to open.")
        return await asyncio.to_thread(self._store.open_workspace, text)

    async def get(self, workspace_id: str) -> Workspace:
        """The stored workspace. Raises ``WorkspaceNotFound`` for an unknown id."""
        return await asyncio.to_thread(self._store.get_workspace, workspace_id)

    async def recent(self, limit: int = 10) -> list[Workspace]:
        """Recently opened workspaces, most recent first (at most ``limit``)."""
        return await asyncio.to_thread(self._store.recent_workspaces, limit)

    async def list_documents(self) -> list[MemorySummary]:
        """Every workspace with a memory, most recently updated first, orphans marked."""
        return await asyncio.to_thread(self._store.list_documents)

    async def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move an orphaned workspace's memory and history to another existing folder.

        Returns the workspace under its new id. Raises ``WorkspaceNotFound`` (no such folder) or
        ``UsageError`` (that folder already has a memory of its own).
        """
        workspace = await asyncio.to_thread(self._store.reattach, workspace_id, new_path)
        self._watched.pop(workspace_id, None)
        return workspace

    async def set_memory_enabled(self, workspace_id: str, *, enabled: bool) -> Workspace:
        """Turn memory (injection into chats and refreshes) on or off for a workspace."""
        return await asyncio.to_thread(self._store.set_memory_enabled, workspace_id, enabled)

    # --- the document -------------------------------------------------------------------------
    async def read(self, workspace_id: str) -> MemoryDocument:
        """The current document (version 0 and empty when never written); the workspace is then
        watched for writes by other processes."""
        document = await asyncio.to_thread(self._store.read, workspace_id)
        self._remember(workspace_id, document.version)
        return document

    async def save(self, workspace_id: str, text: str, *, expected_version: int) -> MemoryDocument:
        """A hand edit based on ``expected_version``; publishes ``MemoryUpdated("hand")``.

        Saving the text already stored writes nothing and returns the stored document.

        Raises:
            CeilingExceeded: over 200 lines or 25,000 characters; nothing written.
            ConflictError: the document changed since ``expected_version``; nothing written.
            UsageError: the text contains NUL characters.
        """
        document = await asyncio.to_thread(self._store.write, workspace_id, text,
                                           expected_version=expected_version)
        self._published(document, "hand", previous=expected_version)
        return document

    async def history(self, workspace_id: str) -> list[Revision]:
        """Revisions, newest first."""
        return await asyncio.to_thread(self._store.history, workspace_id)

    async def attempts(self, workspace_id: str, limit: int = 50) -> list[RefreshAttempt]:
        """Refresh attempts, newest first (at most ``limit``)."""
        return await asyncio.to_thread(self._store.attempts, workspace_id, limit)

    async def restore(self, workspace_id: str, revision_id: str, *,
                      expected_version: int | None = None) -> MemoryDocument:
        """Make a revision current again (a new ``restore`` revision).

        Raises ``RevisionNotFound`` or ``ConflictError`` (nothing written).
        """
        before = expected_version
        document = await asyncio.to_thread(self._store.restore, workspace_id, revision_id,
                                           expected_version=expected_version)
        self._published(document, "restore", previous=before)
        return document

    async def clear(self, workspace_id: str, *, expected_version: int | None = None
                    ) -> MemoryDocument:
        """Empty the document (a ``clear`` revision, restorable from history)."""
        document = await asyncio.to_thread(self._store.clear, workspace_id,
                                           expected_version=expected_version)
        self._published(document, "clear", previous=expected_version)
        return document

    async def import_file(self, workspace_id: str, path: str | os.PathLike[str], *,
                          expected_version: int | None = None) -> MemoryDocument:
        """Import a text file (UTF-8/16/32, with or without BOM, CRLF) as an ``import`` revision.
        Yak's own exports import as the document they hold (the JSON's document, a Markdown
        export without its title line).

        Raises:
            UsageError: the file cannot be read or is not text; nothing written.
            CeilingExceeded: the text is over the ceiling; nothing written.
            ConflictError: the document changed since ``expected_version``.
        """
        data = await asyncio.to_thread(_read_file, Path(path))
        document = await asyncio.to_thread(self._store.import_bytes, workspace_id, data,
                                           expected_version=expected_version,
                                           source_name=Path(path).name)
        self._published(document, "import", previous=expected_version)
        return document

    async def export_file(self, workspace_id: str, path: str | os.PathLike[str],
                          fmt: str = "text", *, force: bool = False) -> int:
        """Write the document to ``path`` as ``text`` (exact UTF-8 bytes, LF, no BOM),
        ``markdown`` or ``json``.

        Args:
            force: overwrite an existing file (the save dialog has already asked).

        Returns:
            The number of bytes written.

        Raises:
            UsageError: the file exists and ``force`` is false, the format is unknown, or the
                file cannot be written.
        """
        data = await asyncio.to_thread(self._store.export_bytes, workspace_id, fmt)
        await asyncio.to_thread(_write_file, Path(path), data, force=force)
        return len(data)

    # --- refresh ------------------------------------------------------------------------------
    @property
    def refresh_available(self) -> bool:
        """Whether forced refreshes can run (a queue or a refresher was given)."""
        return self._queue is not None or self._refresher is not None

    async def refresh_now(self, workspace_id: str, *, rebuild: bool = False) -> RefreshOutcome:
        """Run the workspace's refresh now, bypassing the debounce; returns its outcome.

        Raises:
            YakError: refreshing is not available in this build.
        """
        if self._auto_refresh is not None:  # forced: runs even without a key, and says so
            return await self._auto_refresh.refresh_now(workspace_id, rebuild=rebuild)
        if self._queue is not None:
            return await self._queue.refresh_now(workspace_id, rebuild=rebuild)
        if self._refresher is not None:
            return await self._refresher.refresh(workspace_id, rebuild=rebuild)
        raise YakError("Memory refresh is not available in this build.")

    async def refresh_state(self, workspace_id: str) -> RefreshState:
        """Where the workspace's refresh stands: the queue's state (or ``"paused"`` while its
        automatic refresh waits for an API key), the last attempt, when the document was last
        written, and whether a key was available at the last check."""
        state, due_in, key_available = "idle", None, None
        source = self._auto_refresh if self._auto_refresh is not None else self._queue
        if source is not None:
            info = source.state(workspace_id)
            state = getattr(info, "state", None) or "idle"
            due_in = getattr(info, "due_in", None)
        if self._auto_refresh is not None:
            key_available = self._auto_refresh.key_available
        attempt, document = await asyncio.to_thread(self._last_attempt_and_document,
                                                    workspace_id)
        return RefreshState(workspace_id=workspace_id, state=state, due_in=due_in,
                            last_attempt=attempt, document_updated_at=document.updated_at,
                            key_available=key_available)

    async def last_refreshes(self) -> dict[str, LastRefresh]:
        """The newest refresh attempt of every workspace that has one (for the memory list's
        Status column; replies are not read)."""
        latest = await asyncio.to_thread(self._store.latest_attempts)
        return {workspace_id: LastRefresh(status=a.status, reason=a.reason,
                                          created_at=a.created_at, flags=a.flags)
                for workspace_id, a in latest.items()}

    def paused_workspaces(self) -> frozenset[str]:
        """Workspaces whose automatic refresh waits for an API key."""
        if self._auto_refresh is None:
            return frozenset()
        return self._auto_refresh.paused_workspaces()

    def _last_attempt_and_document(self, workspace_id: str
                                   ) -> tuple[RefreshAttempt | None, MemoryDocument]:
        return self._store.last_attempt(workspace_id), self._store.read(workspace_id)

    # --- writes by other processes -----------------------------------------------------------
    def start_watching(self) -> None:
        """Start the task that notices writes by other processes (idempotent)."""
        if self._watcher is None or self._watcher.done():
            self._watcher = spawn(self._watch(), name="memory-external-watcher")

    def stop_watching(self) -> None:
        """Cancel the watcher task (no waiting)."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

    def close(self) -> None:
        """Stop watching and unsubscribe from the bus."""
        self.stop_watching()
        self._unsubscribe()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._poll_interval_s)
            try:
                await self.check_external_changes()
            except YakError as exc:  # a busy or vanished database: try again next tick
                log.warning("checking for external memory changes failed: %s", exc)

    async def check_external_changes(self) -> list[str]:
        """One watcher step: when SQLite's ``data_version`` moved, re-read every document's
        version and publish ``MemoryUpdated(source="external")`` for each workspace whose
        version changed — including a workspace another process gave its first memory (the
        Settings list then shows it). Returns the ids of the changed workspaces.

        ``data_version`` is per connection and connections come from a pool, so a move is only a
        hint; the version comparison decides. The first step learns the versions (it reports
        only the workspaces the UI has read); in-process writers publish their own events and
        update the known versions first, so they are not reported twice.
        """
        data_version = await asyncio.to_thread(self._db.data_version)
        if data_version == self._last_data_version:
            return []
        self._last_data_version = data_version
        versions = await asyncio.to_thread(self._store.document_versions)
        first_step = self._versions is None
        known_versions = self._versions or {}
        self._versions = dict(versions)
        changed = []
        for workspace_id, version in versions.items():
            known = self._watched.get(workspace_id, known_versions.get(workspace_id))
            if version == known or (known is None and (first_step or version == 0)):
                continue
            if workspace_id in self._watched:
                self._watched[workspace_id] = version
            changed.append(workspace_id)
            self._bus.publish(MemoryUpdated(workspace_id, version, "external"))
        return changed

    def _remember(self, workspace_id: str, version: int) -> None:
        self._watched[workspace_id] = version
        self._watched.move_to_end(workspace_id)
        while len(self._watched) > WATCHED_LIMIT:
            self._watched.popitem(last=False)

    def _on_bus_memory_updated(self, event: MemoryUpdated) -> None:
        if event.workspace_id in self._watched:
            self._watched[event.workspace_id] = event.version
        if self._versions is not None:
            self._versions[event.workspace_id] = event.version

    def _published(self, document: MemoryDocument, source: str, *, previous: int | None) -> None:
        """Publish ``MemoryUpdated`` for a write that produced a new version."""
        if previous is not None and document.version == previous:
            return  # nothing changed (same text as stored)
        known = self._watched.get(document.workspace_id)
        if previous is None and known == document.version:
            return
        self._remember(document.workspace_id, document.version)
        self._bus.publish(MemoryUpdated(document.workspace_id, document.version, source))


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder, not a file; choose a text file.") from None
    except FileNotFoundError:
        raise UsageError(f"No such file: {path}.") from None
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def _write_file(path: Path, data: bytes, *, force: bool) -> None:
    if path.exists() and not force:
        raise UsageError(f"{path} already exists; nothing was written (choose another name or "
                         "confirm the overwrite).")
    try:
        path.write_bytes(data)
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder; choose a file name.") from None
    except OSError as exc:
        raise UsageError(f"Cannot write {path}: {exc.strerror or exc}.") from None

