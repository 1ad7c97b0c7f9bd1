"""Noticing writes made by another process (the command line and ``yak mcp`` share the
database), so an open view shows them: a document's text, the proposals waiting for review, and
a workspace's settings (memory on or off, review mode, kept file). See "Live everywhere" in
docs/ui.md.

About once a second the watcher asks the repository whether the database moved
(``data_version``) and, when it did, reads every workspace's stamp (``stamps``: document
version, settings, waiting proposals) and compares it with the last one known. A new document
version is handed to the memory service, which publishes ``MemoryChanged(source="external")``;
other waiting proposals become ``ProposalsChanged``; other settings ``WorkspaceChanged``.
Document writes through this process are told to the watcher first (:meth:`MemoryWatcher.written`),
so they are not reported twice; a proposal or a setting this process changed may be reported
once more, which only makes a view read what it already shows.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from yak.aio import Offload, spawn, to_thread
from yak.errors import YakError

if TYPE_CHECKING:
    import asyncio

    from yak.domain import WorkspaceStamp
    from yak.ports import DocumentRepository

log = logging.getLogger(__name__)

# The versions of this many recently read workspaces are remembered, so the watcher's first
# step can already report a change to the memory a view shows.
WATCHED_LIMIT = 16


class MemoryWatcher:
    """The versions this process knows, and the task that notices other processes' writes.

    Args:
        documents: the documents (``data_version`` and ``stamps``).
        changed: called with ``(workspace_id, version)`` for each document another process
            changed (on the event-loop thread).
        proposals_changed: called with ``(workspace_id, waiting)`` when the proposals waiting
            for review in a workspace changed (``waiting``: how many wait now).
        settings_changed: called with ``workspace_id`` when its memory switch, review mode or
            kept file changed.
        poll_interval_s: seconds between two checks.
        offload: runs each repository call (``yak.aio``).
    """

    def __init__(
        self,
        documents: DocumentRepository,
        *,
        changed: Callable[[str, int], None],
        proposals_changed: Callable[[str, int], None] | None = None,
        settings_changed: Callable[[str], None] | None = None,
        poll_interval_s: float = 1.0,
        offload: Offload = to_thread,
    ) -> None:
        self._documents = documents
        self._changed = changed
        self._proposals_changed = proposals_changed
        self._settings_changed = settings_changed
        self._poll_interval_s = poll_interval_s
        self._offload = offload
        self._watched: OrderedDict[str, int] = OrderedDict()  # read by a view, newest last
        self._stamps: dict[str, WorkspaceStamp] | None = None  # every workspace's, last step
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
        if self._stamps is not None and workspace_id in self._stamps:
            self._stamps[workspace_id] = replace(self._stamps[workspace_id], version=version)

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

    async def aclose(self) -> None:
        """Cancel the watcher task and wait until it has ended (a test's loop stops next)."""
        import asyncio

        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _watch(self) -> None:
        # Imported here: a command that only reads builds this watcher but runs without an
        # event loop (``yak.aio.run_in_place``), so it never loads asyncio.
        import asyncio

        while True:
            try:  # the first step at once: it learns the stamps a view's reads are compared to
                await self.check_external_changes()
            except YakError as exc:  # a busy or vanished database: try again next tick
                log.warning("checking for external memory changes failed: %s", exc)
            await asyncio.sleep(self._poll_interval_s)

    async def check_external_changes(self) -> list[str]:
        """One watcher step; returns the ids of the workspaces whose document changed (their
        proposals' and settings' changes are reported through the callbacks only).

        ``data_version`` is only a hint that the database moved; the stamps decide. The first
        step learns the stamps: it reports the documents of the workspaces a view has read
        whose version differs from the one read, and, for each of those workspaces, their
        proposals and settings (a view read those before the watcher knew them).
        """
        data_version = await self._offload(self._documents.data_version)
        if data_version == self._last_data_version:
            return []
        self._last_data_version = data_version
        stamps = await self._offload(self._documents.stamps)
        first_step = self._stamps is None
        before = self._stamps or {}
        self._stamps = dict(stamps)
        changed = []
        for workspace_id, stamp in stamps.items():
            old = before.get(workspace_id)
            known = self._watched.get(workspace_id, old.version if old is not None else None)
            moved = not (
                stamp.version == known or (known is None and (first_step or stamp.version == 0))
            )
            if moved:
                if workspace_id in self._watched:
                    self._watched[workspace_id] = stamp.version
                changed.append(workspace_id)
                self._changed(workspace_id, stamp.version)
            recheck = first_step and workspace_id in self._watched
            if self._proposals_changed is not None and (
                recheck or (old is not None and old.proposals != stamp.proposals)
            ):
                self._proposals_changed(workspace_id, len(stamp.proposals))
            if self._settings_changed is not None and (
                recheck or (old is not None and old.settings != stamp.settings)
            ):
                self._settings_changed(workspace_id)
        return changed
