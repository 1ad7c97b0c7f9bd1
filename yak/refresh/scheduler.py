"""The refresh scheduler: the one home of the refresh queue, the API-key gate and the refresh
state of every workspace (see ``docs/refresh.md``, "The refresh").

The desktop app refreshes a workspace's memory on its own when a turn completes and, on start,
for every workspace with unfolded messages. Without an API key each of
those runs would only fail, record a failed attempt and put a red line in the memory panel,
although memory itself works without a key. So automatic triggers go through this gate:

- while no key is available, a triggered workspace is only remembered as *paused*: no model
  call, no attempt recorded, no watermark moved (nothing is lost), and
  ``RefreshStateChanged(workspace_id, QueueState.PAUSED)`` is published for the memory panel;
- when a key appears (:meth:`RefreshScheduler.check_key`, e.g. after Settings › Provider stored
  one), the paused workspaces are enqueued;
- a forced refresh (the Refresh button, ``yak memory refresh``, :meth:`refresh_now`) is never
  held back: without a key it runs, fails with the missing-key sentence and is recorded as
  ``failed``.

The scheduler owns the debounced :class:`~yak.refresh.queue.MemoryRefreshQueue` (``queue``);
the key check runs on a worker thread (the settings service), because the OS keyring can block.
:meth:`snapshot` is where a view learns where a workspace's refresh stands.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from yak.aio import spawn
from yak.bus import EventBus
from yak.config import SETTLE_S
from yak.domain import QueueState, RefreshAttempt, RefreshOutcome, RefreshState, RefreshStatus
from yak.errors import YakError
from yak.events import (
    MemoryChanged,
    MessageAdded,
    ProposalsChanged,
    RefreshStateChanged,
    TurnCompleted,
    WorkspaceChanged,
)
from yak.memory.inbox.review import ReviewInbox
from yak.memory.service import MemoryService
from yak.ports import ConversationRepository
from yak.refresh.queue import MemoryRefreshQueue, QueueStatus
from yak.refresh.refresher import MemoryRefresher
from yak.settings import SettingsService

log = logging.getLogger(__name__)


class RefreshScheduler:
    """Automatic refreshes through a debounced queue, paused while no API key is available,
    and forced refreshes through the same queue.

    Args:
        refresher: runs one guarded rewrite.
        memory: the memory service (last attempts, documents for :meth:`snapshot`).
        review: the review inbox (waiting proposals for :meth:`snapshot`).
        conversations: the conversations (workspaces with unfolded messages at start).
        settings: the settings service (the key check, read on a worker thread).
        bus: where ``RefreshStateChanged`` (a whole :class:`RefreshState`) is published on
            every change of a workspace's queue state, last attempt, document time or key;
            ``TurnCompleted`` on it enqueues; ``MemoryChanged``, ``ProposalsChanged`` and
            ``WorkspaceChanged`` (another process's writes too) update the snapshot.
        **queue_options: passed to :class:`MemoryRefreshQueue` (``debounce_s``, ``clock``,
            ``scheduler``…).
    """

    def __init__(
        self,
        *,
        refresher: MemoryRefresher,
        memory: MemoryService,
        review: ReviewInbox,
        conversations: ConversationRepository,
        settings: SettingsService,
        bus: EventBus | None = None,
        **queue_options: Any,
    ) -> None:
        self._refresher = refresher
        self._memory = memory
        self._review = review
        self._conversations = conversations
        self._settings = settings
        self._bus = bus
        self._paused: set[str] = set()
        self._forced: Counter[str] = Counter()
        # What a snapshot needs besides the queue: the last attempt and the document's time,
        # per workspace read once (a view's workspace), kept current from then on.
        self._known: dict[str, RefreshState] = {}
        self._reloads: set[asyncio.Task[None]] = set()
        self.queue = MemoryRefreshQueue(self._run, on_state_changed=self._publish, **queue_options)
        unsubscribers = [settings.on_key_checked(self._on_key_checked)]
        if bus is not None:
            unsubscribers += [
                bus.subscribe(TurnCompleted, self._on_turn_completed),
                bus.subscribe(MessageAdded, self._on_message_added),
                bus.subscribe(MemoryChanged, self._on_memory_changed),
                bus.subscribe(ProposalsChanged, self._on_proposals_changed),
                bus.subscribe(WorkspaceChanged, self._on_workspace_changed),
            ]
        self._unsubscribers = unsubscribers

    # --- state ------------------------------------------------------------------------------
    @property
    def key_available(self) -> bool | None:
        """Whether a key was available at the last check (``None``: not checked yet)."""
        return self._settings.key_available

    async def snapshot(self, workspace_id: str) -> RefreshState:
        """Where the workspace's refresh stands now: the queue's state (or paused), the last
        attempt, when the document was last written, and whether a key was available at the
        last check. Read from the database once per workspace; from then on every change is
        also published as ``RefreshStateChanged`` with the whole snapshot.

        Raises:
            WorkspaceNotFound: unknown workspace. StoreError.
        """
        if workspace_id not in self._known:
            await self._load(workspace_id)
        return self._current(workspace_id)

    async def _load(self, workspace_id: str) -> None:
        attempt = await self._memory.last_attempt(workspace_id)
        document = await self._memory.read(workspace_id)
        waiting = await self._review.proposals(workspace_id)
        enabled = await self._memory.memory_enabled(workspace_id)
        unfolded = await asyncio.to_thread(self._conversations.workspaces_with_unfolded)
        known = self._known.get(workspace_id)
        self._known[workspace_id] = RefreshState(
            workspace_id=workspace_id,
            last_attempt=attempt,
            missing_key=(known is not None and known.missing_key) or self._needs_key(attempt),
            document_updated_at=document.updated_at,
            proposals=len(waiting),
            unfolded=workspace_id in unfolded,
            memory_enabled=enabled,
        )

    def _needs_key(self, attempt: RefreshAttempt | None) -> bool:
        """Whether a stored failure is best answered by adding a key: the last attempt failed
        and the last check found no key (a retry would fail the same way)."""
        return (
            attempt is not None
            and attempt.status is RefreshStatus.FAILED
            and self.key_available is False
        )

    async def settle(self) -> None:
        """Wait until the snapshot reloads in flight (after a write by another process) have
        published, so the last ``RefreshStateChanged`` of each workspace is current."""
        while self._reloads:
            await asyncio.gather(*self._reloads, return_exceptions=True)

    async def reload(self, workspace_id: str) -> None:
        """Read the workspace's stored parts of the snapshot again and publish it (after a
        change the scheduler does not see, such as memory switched on or off)."""
        await self._reload_and_publish(workspace_id)

    def _current(self, workspace_id: str) -> RefreshState:
        """The known snapshot with the queue's state and the key as they are now. For a
        workspace no view has read yet, the stored parts (last attempt, document time) are
        ``None``: nothing shows it but the memory list, which only reads the state."""
        status = self.state(workspace_id)
        return replace(
            self._known.get(workspace_id) or RefreshState(workspace_id),
            state=status.state,
            due_in=status.due_in,
            running_for=status.running_for,
            key_available=self.key_available,
        )

    def _publish(self, workspace_id: str) -> None:
        """Publish the workspace's whole snapshot."""
        if self._bus is not None:
            self._bus.publish(RefreshStateChanged(self._current(workspace_id)))

    def _on_memory_changed(self, event: MemoryChanged) -> None:
        known = self._known.get(event.workspace_id)
        if known is None:
            return
        if event.updated_at is None:  # written by another process: read its time
            self._spawn_reload(event.workspace_id)
            return
        self._known[event.workspace_id] = replace(known, document_updated_at=event.updated_at)
        self._publish(event.workspace_id)

    def _on_turn_completed(self, event: TurnCompleted) -> None:
        known = self._known.get(event.workspace_id)
        if known is not None and not known.unfolded:
            self._known[event.workspace_id] = replace(known, unfolded=True)
        self.enqueue(event.workspace_id)

    def _on_message_added(self, event: MessageAdded) -> None:
        """The conversation goes on (the next prompt, a tool round): its refresh waits for
        quiet again."""
        self.queue.touch(event.workspace_id)

    def _on_proposals_changed(self, event: ProposalsChanged) -> None:
        known = self._known.get(event.workspace_id)
        if known is None:
            return
        self._known[event.workspace_id] = replace(known, proposals=event.pending)
        self._publish(event.workspace_id)

    def _on_workspace_changed(self, event: WorkspaceChanged) -> None:
        if event.workspace_id in self._known:  # memory switched on or off elsewhere
            self._spawn_reload(event.workspace_id)

    def _spawn_reload(self, workspace_id: str) -> None:
        task = spawn(self._reload_and_publish(workspace_id), name="refresh-snapshot")
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    def _on_key_checked(self, _available: bool) -> None:
        for workspace_id in list(self._known):
            self._publish(workspace_id)

    async def _reload_and_publish(self, workspace_id: str) -> None:
        try:
            await self._load(workspace_id)
        except YakError as exc:
            log.warning("cannot read the refresh state of %s: %s", workspace_id, exc)
            return
        self._publish(workspace_id)

    async def snapshots(self) -> dict[str, RefreshState]:
        """The refresh state of every workspace with one to show (a refresh attempt,
        conversations not yet folded in, or a pause), for the memory list: the newest attempts
        (replies not read) and the unfolded conversations are read now, the queue's state and
        the key are as they are.

        Raises:
            StoreError: the database cannot be read.
        """
        latest = await self._memory.latest_attempts()
        unfolded = frozenset(await asyncio.to_thread(self._conversations.workspaces_with_unfolded))
        states: dict[str, RefreshState] = {}
        for workspace_id in latest.keys() | unfolded | self._paused:
            current, attempt = self._current(workspace_id), latest.get(workspace_id)
            states[workspace_id] = replace(
                current,
                last_attempt=attempt,
                missing_key=current.missing_key or self._needs_key(attempt),
                unfolded=workspace_id in unfolded,
            )
        return states

    def paused(self, workspace_id: str) -> bool:
        """Whether the workspace's automatic refresh waits for an API key."""
        return workspace_id in self._paused

    def state(self, workspace_id: str) -> QueueStatus:
        """The queue's state of the workspace (running, pending), else paused when it waits
        for a key, else idle."""
        info = self.queue.state(workspace_id)
        if info.state is QueueState.IDLE and workspace_id in self._paused:
            return QueueStatus(workspace_id, QueueState.PAUSED)
        return info

    # --- triggers ---------------------------------------------------------------------------
    def enqueue(self, workspace_id: str, *, settle_s: float | None = None) -> None:
        """An automatic trigger (a turn completed, unfolded messages at start, a conversation
        closed).

        When the last check found no key, the workspace is paused instead of queued; otherwise
        it is queued (after the conversation's quiet time, or ``settle_s`` when given) and the
        key is checked again when its run is due.
        """
        if self.key_available is False:
            self._pause(workspace_id)
            return
        self.queue.enqueue(workspace_id, settle_s=settle_s)

    def stop(self, workspace_id: str) -> bool:
        """Stop the workspace's refresh in flight: nothing is written or recorded, and its
        conversations stay unfolded for the next refresh (``MemoryRefreshQueue.stop``).
        Returns whether one was running."""
        return self.queue.stop(workspace_id)

    def conversation_closed(self, workspace_id: str) -> None:
        """The person left a conversation of the workspace (opened another one, another
        workspace): a refresh waiting for quiet runs after a few seconds (``SETTLE_S``)
        instead. Nothing happens when none waits."""
        if self.queue.state(workspace_id).state is QueueState.PENDING:
            self.queue.enqueue(workspace_id, settle_s=SETTLE_S)

    async def check_key(self) -> bool:
        """Check whether a key is available now (on a worker thread); when one is, the paused
        workspaces are enqueued.

        Returns:
            Whether a key is available.
        """
        available = await self._settings.check_key()
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
        if outcome.missing_key:
            await self._settings.check_key()
        elif workspace_id in self._paused:
            self._paused.discard(workspace_id)
            self._publish(workspace_id)
        return outcome

    # --- internals --------------------------------------------------------------------------
    async def _run(self, workspace_id: str, rebuild: bool) -> RefreshOutcome:
        """The queue's run: forced runs always refresh; automatic ones only with a key."""
        if self._forced[workspace_id] <= 0 and not await self.check_key():
            # Paused before the run ends: the snapshot published as it ends says so.
            self._pause(workspace_id, publish=False)
            # Never recorded nor published: only the queue sees it (no failure, no backoff).
            # The document was not read: version and lines are 0, not its figures.
            return RefreshOutcome(
                status=RefreshStatus.PAUSED,
                workspace_id=workspace_id,
                reason="no API key is available; nothing was sent",
                version=0,
                lines=0,
                missing_key=True,
            )
        outcome = await self._refresher.refresh(workspace_id, rebuild=rebuild)
        known = self._known.get(workspace_id)
        if known is not None:  # the attempt is news for the snapshot
            self._known[workspace_id] = replace(known, missing_key=outcome.missing_key)
            try:
                await self._load(workspace_id)
            except YakError as exc:
                log.warning("cannot read the refresh state of %s: %s", workspace_id, exc)
        return outcome

    def _pause(self, workspace_id: str, *, publish: bool = True) -> None:
        if workspace_id not in self._paused:
            log.info("memory refresh of %s paused: no API key", workspace_id)
        self._paused.add(workspace_id)
        if publish:
            self._publish(workspace_id)

    # --- lifetime ---------------------------------------------------------------------------
    async def enqueue_unfolded(self) -> list[str]:
        """Enqueue every workspace with messages not yet folded into memory (the desktop app
        does this at start, so a quit or a crash loses nothing); without an API key they are
        paused instead, until one is added. They run after a few seconds (``SETTLE_S``), not
        after the quiet time: those conversations ended when the app last quit. Returns their
        ids."""
        try:
            workspace_ids = await asyncio.to_thread(self._conversations.workspaces_with_unfolded)
        except YakError as exc:
            log.warning("cannot list workspaces with unfolded messages: %s", exc)
            return []
        if workspace_ids:
            await self.check_key()
        for workspace_id in workspace_ids:  # quiet since the last run: a short settle
            self.enqueue(workspace_id, settle_s=SETTLE_S)
        if workspace_ids:
            log.info(
                "enqueued %d workspace(s) with unfolded messages%s",
                len(workspace_ids),
                "" if self.key_available else " (paused: no API key)",
            )
        return workspace_ids

    async def aclose(self) -> None:
        """Drop pending refreshes and stop the running ones (their watermarks did not move, so
        the work resumes on the next start), then close the refresher's model client."""
        unsubscribers, self._unsubscribers = self._unsubscribers, []
        for unsubscribe in unsubscribers:
            unsubscribe()
        for task in list(self._reloads):
            task.cancel()
        self.queue.cancel()
        try:
            await self.queue.aclose()
        finally:
            await self._refresher.aclose()
