"""AutoRefresh: automatic memory refreshes, held back while no API key is available.

The desktop app refreshes a workspace's memory on its own when a turn completes and, on start,
for every workspace with unfolded messages (DESIGN.md section 4). Without an API key each of
those runs would only fail, record a failed attempt and put a red line in the memory panel,
although memory itself works without a key. So automatic triggers go through this gate:

- while no key is available, a triggered workspace is only remembered as *paused*: no model
  call, no attempt recorded, no watermark moved (nothing is lost), and
  ``RefreshStateChanged(workspace_id, "paused")`` is published for the memory panel;
- when a key appears (:meth:`AutoRefresh.check_key`, e.g. after Settings › Provider stored one),
  the paused workspaces are enqueued;
- a forced refresh (the Refresh button, :meth:`AutoRefresh.refresh_now`) is never held back:
  without a key it runs, fails with the missing-key sentence and is recorded as ``failed``.

The gate owns the debounced :class:`~yak.memory.queue.MemoryRefreshQueue` (``queue``); the key
check runs on a worker thread, because reading the OS keyring can block.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from yak.domain import RefreshOutcome, RefreshStatus
from yak.events import EventBus, RefreshStateChanged
from yak.memory.queue import MemoryRefreshQueue, RunRefresh
from yak.workspace.state import PAUSED, missing_key

log = logging.getLogger(__name__)


class AutoRefresh:
    """Automatic refreshes through a debounced queue, paused while no API key is available.

    Args:
        refresh: ``refresh(workspace_id, rebuild)`` runs one refresh and returns its outcome
            (``MemoryRefresher.refresh``).
        has_api_key: whether a key is available now (``ChatService.has_api_key``); called on
            a worker thread.
        bus: where ``RefreshStateChanged`` is published (the queue's states and ``"paused"``).
        **queue_options: passed to :class:`MemoryRefreshQueue` (``debounce_s``, ``clock``,
            ``scheduler``…).
    """

    def __init__(self, refresh: RunRefresh, *, has_api_key: Callable[[], bool],
                 bus: EventBus | None = None, **queue_options: Any) -> None:
        self._refresh = refresh
        self._has_api_key = has_api_key
        self._bus = bus
        self._key: bool | None = None
        self._paused: set[str] = set()
        self._forced: Counter[str] = Counter()
        self.queue = MemoryRefreshQueue(self._run, bus=bus, **queue_options)

    # --- state ------------------------------------------------------------------------------
    @property
    def key_available(self) -> bool | None:
        """Whether a key was available at the last check (``None``: not checked yet)."""
        return self._key

    def paused(self, workspace_id: str) -> bool:
        """Whether the workspace's automatic refresh waits for an API key."""
        return workspace_id in self._paused

    def paused_workspaces(self) -> frozenset[str]:
        """Every workspace whose automatic refresh waits for an API key."""
        return frozenset(self._paused)

    def state(self, workspace_id: str) -> RefreshStateChanged:
        """The queue's state of the workspace (running, pending), else ``"paused"`` when it
        waits for a key, else ``"idle"``."""
        info = self.queue.state(workspace_id)
        if info.state == "idle" and workspace_id in self._paused:
            return RefreshStateChanged(workspace_id, PAUSED)
        return info

    # --- triggers ---------------------------------------------------------------------------
    def enqueue(self, workspace_id: str) -> None:
        """An automatic trigger (a turn completed, unfolded messages at start).

        When the last check found no key, the workspace is paused instead of queued; otherwise
        it is queued (debounced) and the key is checked again when its run is due.
        """
        if self._key is False:
            self._pause(workspace_id)
            return
        self.queue.enqueue(workspace_id)

    async def check_key(self) -> bool:
        """Check whether a key is available now (on a worker thread); when one is, the paused
        workspaces are enqueued.

        Returns:
            Whether a key is available.
        """
        available = bool(await asyncio.to_thread(self._has_api_key))
        self._key = available
        if available and self._paused:
            waiting, self._paused = sorted(self._paused), set()
            log.info("an API key is available: refreshing %d paused workspace(s)", len(waiting))
            for workspace_id in waiting:
                self.queue.enqueue(workspace_id)
        return available

    @contextmanager
    def forced(self, workspace_id: str) -> Iterator[None]:
        """Mark runs of ``workspace_id`` started inside this block as forced: they call the
        model even without a key (and fail with the missing-key sentence)."""
        self._forced[workspace_id] += 1
        try:
            yield
        finally:
            self._forced[workspace_id] -= 1
            if self._forced[workspace_id] <= 0:
                del self._forced[workspace_id]

    async def refresh_now(self, workspace_id: str, *, rebuild: bool = False) -> RefreshOutcome:
        """A forced refresh through the queue (bypassing the debounce and the key check).

        A run that failed for want of a key also tells the gate that none is available; any
        other outcome means the workspace no longer waits (its messages were read).
        """
        with self.forced(workspace_id):
            outcome = await self.queue.refresh_now(workspace_id, rebuild=rebuild)
        if missing_key(outcome):
            self._key = False
        elif workspace_id in self._paused:
            self._paused.discard(workspace_id)
            if self._bus is not None:
                self._bus.publish(self.state(workspace_id))
        return outcome

    # --- internals --------------------------------------------------------------------------
    async def _run(self, workspace_id: str, rebuild: bool) -> RefreshOutcome:
        """The queue's run: forced runs always refresh; automatic ones only with a key."""
        if self._forced[workspace_id] <= 0 and not await self.check_key():
            # The queue publishes "idle" as this run ends; "paused" must come after it.
            self._pause(workspace_id, publish_soon=True)
            # Never recorded nor published: only the queue sees it (no failure, no backoff).
            return RefreshOutcome(status=RefreshStatus.UP_TO_DATE, workspace_id=workspace_id,
                                  reason="paused until an API key is available; nothing was "
                                  "sent", version=0, lines=0)
        return await self._refresh(workspace_id, rebuild)

    def _pause(self, workspace_id: str, *, publish_soon: bool = False) -> None:
        if workspace_id not in self._paused:
            log.info("memory refresh of %s paused: no API key", workspace_id)
        self._paused.add(workspace_id)
        if self._bus is None:
            return
        if publish_soon:
            asyncio.get_running_loop().call_soon(self._publish_paused, workspace_id)
        else:
            self._publish_paused(workspace_id)

    def _publish_paused(self, workspace_id: str) -> None:
        if self._bus is not None and self.state(workspace_id).state == PAUSED:
            self._bus.publish(RefreshStateChanged(workspace_id, PAUSED))
