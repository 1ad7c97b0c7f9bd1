"""Keeping an instruction file (``AGENTS.md``, ``CLAUDE.md``…) in sync with a workspace's memory:
its managed block is written when the person asks for it and after every applied revision
(``yak.memory.sharing.sync`` writes the block; the memory service calls :meth:`KeptFile.sync` after
each write that moved the version)."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from yak.aio import Offload, to_thread
from yak.domain import MemoryDocument
from yak.errors import YakError
from yak.events import SyncedFileFailed
from yak.memory.sharing.sync import SyncResult, sync_file

if TYPE_CHECKING:
    from yak.bus import EventBus
    from yak.ports import DocumentRepository, WorkspaceRepository

log = logging.getLogger(__name__)


class KeptFile:
    """The file each workspace keeps in sync, and the writes that keep it so.

    Args:
        workspaces: the stored workspaces (their ``synced_file``).
        documents: the documents (the one written when keeping starts).
        bus: where ``SyncedFileFailed`` is published.
        offload: runs each repository or file call (``yak.aio``).
    """

    def __init__(
        self,
        *,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        bus: EventBus,
        offload: Offload = to_thread,
    ) -> None:
        self._workspaces = workspaces
        self._documents = documents
        self._bus = bus
        self._offload = offload

    async def keep_in_sync(
        self, workspace_id: str, path: str, *, force: bool = False
    ) -> SyncResult:
        """Keep the file at ``path`` (relative to the current folder) in sync from now on: its
        managed block is written now and after every applied revision. Nothing is stored when
        the first write fails.

        Args:
            workspace_id: the workspace.
            path: the file.
            force: replace a block edited by hand or holding conflict markers.

        Returns:
            What the write now did.

        Raises:
            UsageError: the file cannot be read or written, is not UTF-8, or its markers are
                not one block. RefusedError: the block holds text Yak did not write there or
                conflict markers (``yak.memory.sharing.sync.check_block_untouched``) and ``force``
                is not set. WorkspaceNotFound: unknown id.
        """
        target = os.path.abspath(path)
        document = await self._offload(self._documents.read, workspace_id)
        previous = (await self._offload(self._workspaces.get, workspace_id)).synced_file
        # Stored first: a database that cannot be written refuses before the file is touched.
        await self._offload(self._workspaces.set_synced_file, workspace_id, target)
        try:
            result = await self._offload(
                lambda: sync_file(
                    target,
                    document.content,
                    written=lambda: self.written(workspace_id),
                    force=force,
                )
            )
        except YakError:
            await self._offload(self._workspaces.set_synced_file, workspace_id, previous)
            raise
        log.info("workspace %s keeps %s in sync", workspace_id, target)
        return result

    async def stop_keeping_in_sync(self, workspace_id: str) -> str | None:
        """Stop keeping a file in sync (the file stays as it is); returns its path, or
        ``None`` when none was kept. Raises ``WorkspaceNotFound`` for an unknown id."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        if workspace.synced_file is not None:
            await self._offload(self._workspaces.set_synced_file, workspace_id, None)
        return workspace.synced_file

    def written(self, workspace_id: str) -> list[str]:
        """The texts Yak may have written into a kept block: every revision of the workspace's
        document (blocking; run on a worker thread)."""
        return [revision.content for revision in self._documents.history(workspace_id)]

    def path(self, workspace_id: str) -> str | None:
        """The file the workspace keeps in sync, or ``None`` (also when the workspace cannot be
        read: the revision is stored already, and this is logged). Blocking: the writer calls
        it in its write's worker-thread hop."""
        try:
            return self._workspaces.get(workspace_id).synced_file
        except YakError as exc:
            log.warning("cannot read workspace %s to sync its file: %s", workspace_id, exc)
            return None

    async def sync(self, document: MemoryDocument, path: str) -> None:
        """After an applied revision, write ``document`` into its workspace's kept file at
        ``path``. A failure is logged and published (``SyncedFileFailed``), never raised: the
        revision is stored already. A block edited by hand or holding conflict markers is left
        as it is, and that is the failure published."""
        workspace_id = document.workspace_id
        try:
            await self._offload(
                lambda: sync_file(
                    path, document.content, written=lambda: self.written(workspace_id)
                )
            )
        except YakError as exc:
            # said to the user through SyncedFileFailed (a stderr line, the status bar)
            log.info("keeping %s in sync failed: %s", path, exc)
            self._bus.publish(
                SyncedFileFailed(document.workspace_id, document.version, path, str(exc))
            )
