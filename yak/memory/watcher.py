"""Noticing writes to memory documents made by another process (the command line shares the
database), so an open view shows them.

About once a second the watcher asks the repository whether the database moved
(``data_version``) and, when it did, compares every document's version with the last one known;
each that changed is handed to the memory service, which publishes
``MemoryChanged(source="external")``. Writes through this process are told to the watcher first
(:meth:`MemoryWatcher.written`), so they are not reported twice.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from yak.aio import Offload, spawn, to_thread
from yak.errors import YakError

if TYPE_CHECKING:
    import asyncio

    from yak.ports import DocumentRepository

log = logging.getLogger(__name__)

# The versions of this many recently read workspaces are remembered, so the watcher's first
# step can already report a change to the memory a view shows.
WATCHED_LIMIT = 16


class MemoryWatcher:
    """The versions this process knows, and the task that notices other processes' writes.

    Args:
        documents: the documents (``data_version`` and ``versions``).
        changed: called with ``(workspace_id, version)`` for each document another process
            changed (on the event-loop thread).
        poll_interval_s: seconds between two checks.
        offload: runs each repository call (``yak.aio``).
    """

    def __init__(
        self,
        documents: DocumentRepository,
        *,
        changed: Callable[[str, int], None],
        poll_interval_s: float = 1.0,
        offload: Offload = to_thread,
    ) -> None:
        self._documents = documents
        self._changed = changed
        self._poll_interval_s = poll_interval_s
        self._offload = offload
        self._watched: OrderedDict[str, int] = OrderedDict()  # read by a view, newest last
        self._versions: dict[str, int] | None = None  # every document's version, last step
        self._last_data_version: int | None = None
        self._task: asyncio.Task[None] | None = None

    def remember(self, workspace_id: str, version: int) -> None:
        """A view read ``version`` of the workspace's document: watch it (the newest
        ``WATCHED_LIMIT`` workspaces are)."""
        self._watched[workspace_id] = version
        self._watched.move_to_end(workspace_id)
        while len(self._watched) > WATCHED_LIMIT:
            self._watched.popitem(last=False)

    def written(self, workspace_id: str, version: int) -> None:
        """This process wrote ``version``: known, so never reported as another's write."""
        self.remember(workspace_id, version)
        if self._versions is not None:
            self._versions[workspace_id] = version

    def known(self, workspace_id: str) -> int | None:
        """The last version read or written here of a watched workspace, else ``None``."""
        return self._watched.get(workspace_id)

    def forget(self, workspace_id: str) -> None:
        """Stop watching a workspace (it was re-attached under another id)."""
        self._watched.pop(workspace_id, None)

    def start_watching(self) -> None:
        """Start the task that notices writes by other processes (idempotent)."""
        if self._task is None or self._task.done():
            self._task = spawn(self._watch(), name="memory-external-watcher")

    def stop_watching(self) -> None:
        """Cancel the watcher task (no waiting)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _watch(self) -> None:
        # Imported here: a command that only reads builds this watcher but runs without an
        # event loop (``yak.aio.run_in_place``), so it never loads asyncio.
        import asyncio

        while True:
            await asyncio.sleep(self._poll_interval_s)
            try:
                await self.check_external_changes()
            except YakError as exc:  # a busy or vanished database: try again next tick
                log.warning("checking for external memory changes failed: %s", exc)

    async def check_external_changes(self) -> list[str]:
        """One watcher step; returns the ids of the workspaces whose document changed.

        ``data_version`` is per connection and connections come from a pool, so a move is only
        a hint; the version comparison decides. The first step learns the versions (it reports
        only the workspaces a view has read).
        """
        data_version = await self._offload(self._documents.data_version)
        if data_version == self._last_data_version:
            return []
        self._last_data_version = data_version
        versions = await self._offload(self._documents.versions)
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
            self._changed(workspace_id, version)
        return changed
