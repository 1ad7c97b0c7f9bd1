"""The debounced per-workspace refresh queue ("The refresh" in docs/refresh.md). Qt-free
asyncio.

Each workspace has its own timer, and its timing follows the person ("Idle and cost" in
docs/refresh.md): ``enqueue`` (an assistant turn completed) and ``touch`` (any message of the
workspace stored, such as the next prompt) restart it, so the refresh waits until the
conversation has been quiet for the debounce (default 120 s, 2-600 s); ``enqueue`` with
``settle_s`` (the conversation was closed, or the app started with unfolded messages) runs it
after that shorter wait instead. It never fires later than ``max_wait_s`` (900 s) after the
workspace's first pending enqueue, so a long conversation is folded in every quarter of an hour
at the latest. When the timer fires
the workspace's refresh runs; at most one run per workspace is in flight and at most
``max_concurrent`` (2) overall; the others wait their turn in order. Work that arrives during a
run re-arms the workspace after it.

A run that ends ``failed`` is not retried on its own (no hot loop against a provider that is
down); the next trigger for that workspace waits at least ``min(2**n * debounce, 300 s)`` after
the failure, ``n`` being the consecutive failures. A forced refresh (``refresh_now``, ``flush``)
ignores the debounce and the backoff.

Nothing here is durable on purpose: quitting calls :meth:`MemoryRefreshQueue.cancel`, the
watermarks did not move, and the app enqueues every workspace with unfolded messages on start.

Time comes from an injectable ``clock`` and timers from an injectable ``scheduler`` so tests fire
the timers by calling them, never by sleeping.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from yak.aio import spawn
from yak.config import DEFAULT_IDLE_S, MAX_IDLE_S, MAX_WAIT_S, MIN_IDLE_S
from yak.domain import QueueState, RefreshOutcome, RefreshStatus

log = logging.getLogger(__name__)

MAX_BACKOFF_S = 300.0

RunRefresh = Callable[[str, bool], Awaitable[RefreshOutcome]]


class TimerHandle(Protocol):
    """What a scheduler returns: something that can be cancelled."""

    def cancel(self) -> None: ...


Scheduler = Callable[[float, Callable[[], None]], TimerHandle]


def loop_scheduler(delay_s: float, callback: Callable[[], None]) -> TimerHandle:
    """The default scheduler: ``loop.call_later`` on the running event loop."""
    return asyncio.get_running_loop().call_later(max(delay_s, 0.0), callback)


@dataclass
class _Job:
    """A run waiting for a free slot: the workspace it is for, and who awaits its outcome."""

    workspace_id: str
    rebuild: bool = False
    waiters: list[asyncio.Future[RefreshOutcome]] = field(default_factory=list)


@dataclass(frozen=True)
class QueueStatus:
    """Where one workspace stands in the queue: ``due_in`` seconds until its timer fires while
    pending (``0`` while it waits for a free slot), else ``None``; ``running_for`` seconds since
    its run started while running, else ``None``."""

    workspace_id: str
    state: QueueState = QueueState.IDLE
    due_in: float | None = None
    running_for: float | None = None


@dataclass
class _Workspace:
    """The queue's state for one workspace."""

    first_pending: float | None = None  # clock time of the first enqueue not yet run
    last_enqueue: float | None = None
    settle: float | None = None  # the conversation is over: wait this instead of the debounce
    due: float | None = None  # clock time the timer fires
    timer: TimerHandle | None = None
    running: asyncio.Task[Any] | None = None
    started: float | None = None  # clock time the run in flight started
    rearm: bool = False  # work arrived during the run
    failures: int = 0  # consecutive failed runs
    not_before: float | None = None  # backoff after a failure
    published: tuple[str, float | None] | None = None


class MemoryRefreshQueue:
    """Debounces refresh requests per workspace and runs them with bounded concurrency.

    Args:
        run: ``run(workspace_id, rebuild)`` performs one refresh and returns its outcome
            (``MemoryRefresher.refresh``); it is called on the event loop.
        debounce_s: seconds of quiet before a workspace's refresh runs (clamped to 2-600;
            the setting ``refresh_idle_s``).
        max_wait_s: seconds after a workspace's first pending enqueue after which it runs
            even if enqueues keep coming.
        max_concurrent: refreshes in flight at once across workspaces.
        clock: monotonic seconds (injectable for tests).
        on_state_changed: called with the workspace id whenever its :meth:`state` changes
            (the refresh scheduler publishes a snapshot then).
        scheduler: ``scheduler(delay_s, callback) -> handle`` with ``handle.cancel()``;
            defaults to ``loop.call_later``.
    """

    def __init__(
        self,
        run: RunRefresh,
        *,
        debounce_s: float = DEFAULT_IDLE_S,
        max_wait_s: float = MAX_WAIT_S,
        max_concurrent: int = 2,
        clock: Callable[[], float] = time.monotonic,
        on_state_changed: Callable[[str], None] | None = None,
        scheduler: Scheduler | None = None,
    ) -> None:
        self._run = run
        self._debounce = _clamp_debounce(debounce_s)
        self._max_wait = float(max_wait_s)
        self._max_concurrent = max(1, int(max_concurrent))
        self._clock = clock
        self._on_state_changed = on_state_changed
        self._schedule = scheduler or loop_scheduler
        self._workspaces: dict[str, _Workspace] = {}
        self._ready: deque[_Job] = deque()
        self._idle = asyncio.Event()
        self._idle.set()

    # --- configuration ----------------------------------------------------------------------
    @property
    def debounce_s(self) -> float:
        """The current debounce in seconds."""
        return self._debounce

    def set_debounce(self, seconds: float) -> float:
        """Change the debounce (clamped to 2-600 s); pending timers are re-timed.

        Returns:
            The debounce now in effect, in seconds.
        """
        self._debounce = _clamp_debounce(seconds)
        for workspace_id, ws in self._workspaces.items():
            if ws.timer is not None and ws.last_enqueue is not None:
                self._arm(workspace_id, ws, since=ws.last_enqueue)
        return self._debounce

    # --- triggers ---------------------------------------------------------------------------
    def enqueue(self, workspace_id: str, *, settle_s: float | None = None) -> None:
        """Ask for a refresh of ``workspace_id`` once its conversation has been quiet for the
        debounce, or after ``settle_s`` seconds when given (the conversation is over: closed,
        or left unfolded by an earlier run of the app).

        Restarts the workspace's timer; the run happens at most ``max_wait_s`` after the first
        pending enqueue (and not before a failure's backoff). During a run of that workspace,
        the workspace is re-armed when the run ends.
        """
        ws = self._workspaces.setdefault(workspace_id, _Workspace())
        now = self._clock()
        if ws.first_pending is None:
            ws.first_pending = now
        ws.last_enqueue = now
        if settle_s is not None:
            ws.settle = max(float(settle_s), 0.0)
        if ws.running is not None:
            ws.rearm = True
            return
        if self._job_for(workspace_id) is not None:
            return  # already waiting for a free slot; that run will read the new messages
        self._arm(workspace_id, ws, since=now)

    def touch(self, workspace_id: str) -> None:
        """The workspace's conversation is active (a message was stored): a pending timer
        waits the debounce again from now, within the maximum wait. Nothing is queued for a
        workspace that waits for nothing."""
        ws = self._workspaces.get(workspace_id)
        if ws is None or ws.timer is None or ws.settle is not None:
            return
        ws.last_enqueue = self._clock()
        self._arm(workspace_id, ws, since=ws.last_enqueue)

    async def refresh_now(self, workspace_id: str, *, rebuild: bool = False) -> RefreshOutcome:
        """Run the workspace's refresh now, bypassing the debounce and any backoff.

        Waits for a run of that workspace already in flight, then runs (it reads every unfolded
        message, so a pending timer is dropped). Respects the overall concurrency limit.

        Returns:
            The outcome of this run.

        Raises:
            Whatever ``run`` raises.
        """
        future = self._request_run(workspace_id, rebuild=rebuild)
        return await future

    async def flush(self) -> list[RefreshOutcome]:
        """Run every pending workspace now (timers and re-arms) and await everything in flight.

        Returns:
            The outcomes of the runs it started, in start order (failures included; a run that
            raised is logged and left out).
        """
        futures = []
        for workspace_id, ws in list(self._workspaces.items()):
            if ws.timer is not None or ws.rearm:
                futures.append(self._request_run(workspace_id))
        futures += [w for job in self._ready for w in job.waiters if w not in futures]
        running = [ws.running for ws in self._workspaces.values() if ws.running is not None]
        results = await asyncio.gather(*futures, *running, return_exceptions=True)
        outcomes = [r for r in results[: len(futures)] if isinstance(r, RefreshOutcome)]
        await self.wait_idle()
        return outcomes

    def cancel(self) -> None:
        """Drop every timer and every run waiting for a slot (quitting).

        Runs in flight are left alone (see :meth:`aclose`); dropped work resumes on the next
        start because no watermark moved.
        """
        for workspace_id, ws in self._workspaces.items():
            if ws.timer is not None:
                ws.timer.cancel()
            ws.timer = ws.due = ws.first_pending = ws.last_enqueue = ws.settle = None
            ws.rearm = False
            self._publish(workspace_id)
        while self._ready:
            job = self._ready.popleft()
            for waiter in job.waiters:
                if not waiter.done():
                    waiter.cancel()
            self._publish(job.workspace_id)
        self._update_idle()

    def stop(self, workspace_id: str) -> bool:
        """Cancel the workspace's run in flight (the person pressed Stop). The refresh writes
        nothing and moves no watermark, so its conversations wait for the next refresh; a
        caller awaiting that run sees it cancelled. No backoff follows.

        Returns:
            Whether a run was in flight.
        """
        ws = self._workspaces.get(workspace_id)
        if ws is None or ws.running is None:
            return False
        log.info("memory refresh of %s stopped by the person", workspace_id)
        ws.running.cancel()
        return True

    async def aclose(self) -> None:
        """Cancel timers, queued runs and the runs in flight, and wait until they are gone."""
        self.cancel()
        running = [ws.running for ws in self._workspaces.values() if ws.running is not None]
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Return once nothing runs and nothing waits for a slot (timers may still be armed)."""
        await self._idle.wait()

    # --- state ------------------------------------------------------------------------------
    def state(self, workspace_id: str) -> QueueStatus:
        """Where the workspace stands: ``running``, ``pending`` (``due_in`` seconds until the
        timer fires; ``0`` when waiting for a free slot) or ``idle``."""
        ws = self._workspaces.get(workspace_id)
        if ws is None:
            return QueueStatus(workspace_id, QueueState.IDLE)
        if ws.running is not None:
            since = ws.started if ws.started is not None else self._clock()
            return QueueStatus(
                workspace_id, QueueState.RUNNING, running_for=max(self._clock() - since, 0.0)
            )
        if self._job_for(workspace_id) is not None:
            return QueueStatus(workspace_id, QueueState.PENDING, 0.0)
        if ws.timer is not None and ws.due is not None:
            return QueueStatus(workspace_id, QueueState.PENDING, max(ws.due - self._clock(), 0.0))
        return QueueStatus(workspace_id, QueueState.IDLE)

    def failures(self, workspace_id: str) -> int:
        """Consecutive failed runs of the workspace (0 after a run that did not fail)."""
        ws = self._workspaces.get(workspace_id)
        return ws.failures if ws else 0

    # --- internals --------------------------------------------------------------------------
    def _arm(self, workspace_id: str, ws: _Workspace, *, since: float) -> None:
        """(Re)start the workspace's timer: the debounce (or the settle time of a conversation
        that is over, when shorter) from ``since``, capped by the maximum wait from the first
        pending enqueue, never before the failure backoff."""
        now = self._clock()
        first = ws.first_pending if ws.first_pending is not None else since
        wait = self._debounce if ws.settle is None else min(ws.settle, self._debounce)
        due = min(since + wait, first + self._max_wait)
        if ws.not_before is not None:
            due = max(due, ws.not_before)
        if ws.timer is not None:
            ws.timer.cancel()
        ws.due = due
        ws.timer = self._schedule(max(due - now, 0.0), lambda: self._on_timer(workspace_id))
        self._publish(workspace_id)

    def _on_timer(self, workspace_id: str) -> None:
        ws = self._workspaces.get(workspace_id)
        if ws is None or ws.timer is None:
            return  # cancelled after it was due
        ws.timer = ws.due = None
        self._add_job(workspace_id, rebuild=False, waiter=None)
        self._pump()
        self._publish(workspace_id)  # "pending" only when it waits for a free slot

    def _request_run(
        self, workspace_id: str, *, rebuild: bool = False
    ) -> asyncio.Future[RefreshOutcome]:
        ws = self._workspaces.setdefault(workspace_id, _Workspace())
        if ws.timer is not None:
            ws.timer.cancel()
            ws.timer = ws.due = None
        future: asyncio.Future[RefreshOutcome] = asyncio.get_running_loop().create_future()
        self._add_job(workspace_id, rebuild=rebuild, waiter=future)
        self._pump()
        self._publish(workspace_id)
        return future

    def _add_job(
        self, workspace_id: str, *, rebuild: bool, waiter: asyncio.Future[RefreshOutcome] | None
    ) -> None:
        job = self._job_for(workspace_id)
        if job is None:
            job = _Job(workspace_id)
            self._ready.append(job)
        job.rebuild = job.rebuild or rebuild
        if waiter is not None:
            job.waiters.append(waiter)
        self._idle.clear()

    def _job_for(self, workspace_id: str) -> _Job | None:
        return next((job for job in self._ready if job.workspace_id == workspace_id), None)

    def _pump(self) -> None:
        """Start queued runs, oldest first, while slots are free; a workspace already running
        keeps its job queued until its run ends."""
        in_flight = sum(1 for ws in self._workspaces.values() if ws.running is not None)
        for job in list(self._ready):
            if in_flight >= self._max_concurrent:
                break
            ws = self._workspaces.setdefault(job.workspace_id, _Workspace())
            if ws.running is not None:
                continue
            self._ready.remove(job)
            ws.first_pending = ws.last_enqueue = ws.settle = None
            ws.rearm = False
            ws.started = self._clock()
            task = spawn(self._run_job(job, ws), name=f"refresh {job.workspace_id}")
            # A run stopped before its first step never reaches _run_job's finally.
            task.add_done_callback(functools.partial(self._on_run_done, job, ws))
            ws.running = task
            in_flight += 1
            self._publish(job.workspace_id)
        self._update_idle()

    async def _run_job(self, job: _Job, ws: _Workspace) -> RefreshOutcome | None:
        outcome: RefreshOutcome | None = None
        error: BaseException | None = None
        try:
            outcome = await self._run(job.workspace_id, job.rebuild)
        except asyncio.CancelledError as exc:
            error = exc
            raise
        except Exception as exc:  # the queue must survive a broken run; the waiter sees it
            log.exception("memory refresh of %s failed", job.workspace_id)
            error = exc
        finally:
            self._finish(job, ws, outcome, error)
        return outcome

    def _on_run_done(self, job: _Job, ws: _Workspace, task: asyncio.Task[Any]) -> None:
        if ws.running is task:  # cancelled before it started: nothing ran, nothing to record
            self._finish(job, ws, None, asyncio.CancelledError())

    def _finish(
        self, job: _Job, ws: _Workspace, outcome: RefreshOutcome | None, error: BaseException | None
    ) -> None:
        ws.running = ws.started = None
        if (outcome is not None and outcome.status is RefreshStatus.FAILED) or (
            error is not None and not isinstance(error, asyncio.CancelledError)
        ):
            ws.failures += 1
            backoff = min(2**ws.failures * self._debounce, MAX_BACKOFF_S)
            ws.not_before = self._clock() + backoff
        elif outcome is not None:
            ws.failures = 0
            ws.not_before = None
        for waiter in job.waiters:
            if waiter.done():
                continue
            if outcome is not None:
                waiter.set_result(outcome)
            elif isinstance(error, asyncio.CancelledError) or error is None:
                waiter.cancel()
            else:
                waiter.set_exception(error)
        if ws.rearm:
            ws.rearm = False
            if self._job_for(job.workspace_id) is None:
                self._arm(job.workspace_id, ws, since=ws.last_enqueue or self._clock())
        self._publish(job.workspace_id)
        self._pump()

    def _update_idle(self) -> None:
        busy = self._ready or any(ws.running is not None for ws in self._workspaces.values())
        if busy:
            self._idle.clear()
        else:
            self._idle.set()

    def _publish(self, workspace_id: str) -> None:
        if self._on_state_changed is None:
            return
        ws = self._workspaces.get(workspace_id)
        state = self.state(workspace_id)
        key = (state.state, None if ws is None else ws.due)
        if ws is not None:
            if ws.published == key:
                return
            ws.published = key
        self._on_state_changed(workspace_id)


def _clamp_debounce(seconds: float) -> float:
    return min(max(float(seconds), MIN_IDLE_S), MAX_IDLE_S)
