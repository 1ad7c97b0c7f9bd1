"""The debounced per-workspace refresh queue (``docs/refresh.md``, "The refresh"), on its
own: a scripted ``run`` stands in for the refresher (the queue with the real refresher, through
the core, is in ``test_refresh.py``).

Time is a fake clock and timers are recorded, never slept on: a test moves the clock and fires
the due timers itself (``ManualTimers.advance``), then awaits ``wait_idle``.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.support import ManualTimers
from yak.config import load_settings
from yak.domain import QueueState, RefreshOutcome, RefreshStatus
from yak.refresh.queue import MemoryRefreshQueue, QueueStatus


class Runner:
    """A fake ``run``: records calls; each call can be held open with a gate."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.status = RefreshStatus.APPLIED
        self.running: set[str] = set()
        self.max_running = 0

    def hold(self, workspace_id: str) -> asyncio.Event:
        self.gates[workspace_id] = asyncio.Event()
        return self.gates[workspace_id]

    async def __call__(self, workspace_id: str, rebuild: bool) -> RefreshOutcome:
        self.calls.append((workspace_id, rebuild))
        self.running.add(workspace_id)
        self.max_running = max(self.max_running, len(self.running))
        try:
            gate = self.gates.get(workspace_id)
            if gate is not None:
                await gate.wait()
        finally:
            self.running.discard(workspace_id)
        return RefreshOutcome(
            status=self.status, reason="", workspace_id=workspace_id, version=1, lines=1
        )


def make_queue(runner, timers: ManualTimers, **kwargs) -> MemoryRefreshQueue:
    return MemoryRefreshQueue(runner, clock=timers.clock, scheduler=timers.schedule, **kwargs)


async def settle(queue: MemoryRefreshQueue) -> None:
    await queue.wait_idle()


async def test_n_enqueues_within_the_debounce_make_one_run():
    """Five turn-completions 3 s apart with a 10 s debounce → exactly one run, 10 s after the
    last one; nothing runs before."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    for _ in range(5):
        queue.enqueue("ws_a")
        timers.advance(3)
    assert runner.calls == []
    timers.advance(6.9)
    await settle(queue)
    assert runner.calls == []
    timers.advance(0.2)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]


async def test_two_workspaces_make_two_runs_each_for_its_own_workspace():
    """Enqueues of two workspaces make one run each, each for its own workspace."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    for _ in range(3):
        queue.enqueue("ws_a")
        queue.enqueue("ws_b")
    timers.advance(10)
    await settle(queue)
    assert sorted(runner.calls) == [("ws_a", False), ("ws_b", False)]


async def test_a_workspace_never_waits_more_than_max_wait_from_its_first_enqueue():
    """Enqueues every 5 s keep restarting a 10 s debounce, yet the run happens at 60 s."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10, max_wait_s=60)
    for _ in range(11):  # t = 0, 5, …, 50
        queue.enqueue("ws_a")
        timers.advance(5)
    timers.advance(4.9)  # t = 59.9
    await settle(queue)
    assert runner.calls == []
    timers.advance(0.1)  # t = 60
    await settle(queue)
    assert runner.calls == [("ws_a", False)]


async def test_one_run_per_workspace_and_work_during_a_run_rearms_it():
    """An enqueue while the workspace runs does not start a second run; it re-arms the
    workspace when the run ends (one more run after the debounce)."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    gate = runner.hold("ws_a")
    queue.enqueue("ws_a")
    timers.advance(10)
    await asyncio.sleep(0)  # let the run start (a yield, not a wait for time)
    assert queue.state("ws_a").state == "running"
    queue.enqueue("ws_a")
    timers.advance(30)
    assert runner.calls == [("ws_a", False)]
    gate.set()
    await settle(queue)
    state = queue.state("ws_a")
    assert state.state == "pending" and state.due_in == pytest.approx(0.0)  # max wait passed
    timers.advance(0)
    await settle(queue)
    assert runner.calls == [("ws_a", False), ("ws_a", False)]


async def test_at_most_two_runs_overall_the_third_waits_its_turn():
    """Three due workspaces: two run at once, the third is pending (due now) until a slot frees."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10, max_concurrent=2)
    gates = {ws: runner.hold(ws) for ws in ("ws_a", "ws_b", "ws_c")}
    for ws in gates:
        queue.enqueue(ws)
    timers.advance(10)
    await asyncio.sleep(0)
    assert sorted(runner.running) == ["ws_a", "ws_b"]
    assert queue.state("ws_c") == QueueStatus("ws_c", QueueState.PENDING, 0.0)
    gates["ws_a"].set()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert "ws_c" in runner.running
    gates["ws_b"].set()
    gates["ws_c"].set()
    await settle(queue)
    assert runner.max_running == 2
    assert sorted(ws for ws, _ in runner.calls) == ["ws_a", "ws_b", "ws_c"]


async def test_flush_runs_everything_pending_now_and_awaits_it():
    """``flush`` runs every pending workspace at once, returns their outcomes, leaves no timer."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    queue.enqueue("ws_a")
    queue.enqueue("ws_b")
    outcomes = await queue.flush()
    assert sorted(o.workspace_id for o in outcomes) == ["ws_a", "ws_b"]
    assert sorted(runner.calls) == [("ws_a", False), ("ws_b", False)]
    assert timers.armed() == []
    assert queue.state("ws_a").state == "idle"


async def test_cancel_drops_timers_and_nothing_runs():
    """Quitting: pending work is dropped (it resumes next start; watermarks did not move)."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    queue.enqueue("ws_a")
    queue.cancel()
    timers.advance(120)
    await settle(queue)
    assert runner.calls == []
    assert queue.state("ws_a").state == "idle"
    queue.enqueue("ws_a")  # the queue still works after a cancel
    timers.advance(10)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]


async def test_refresh_now_bypasses_the_debounce_and_returns_the_outcome():
    """A forced refresh runs at once (rebuild passed on) and replaces the pending timer."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    queue.enqueue("ws_a")
    outcome = await queue.refresh_now("ws_a", rebuild=True)
    assert outcome.workspace_id == "ws_a" and outcome.status is RefreshStatus.APPLIED
    assert runner.calls == [("ws_a", True)]
    timers.advance(60)  # the pending timer was dropped: the forced run covered it
    await settle(queue)
    assert runner.calls == [("ws_a", True)]


async def test_refresh_now_waits_for_the_run_in_flight_then_runs():
    """A forced refresh during a run of that workspace waits for it, then runs again."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    gate = runner.hold("ws_a")
    queue.enqueue("ws_a")
    timers.advance(10)
    await asyncio.sleep(0)
    forced = asyncio.ensure_future(queue.refresh_now("ws_a"))
    await asyncio.sleep(0)
    assert runner.calls == [("ws_a", False)] and not forced.done()
    gate.set()
    outcome = await forced
    assert outcome.workspace_id == "ws_a"
    assert runner.calls == [("ws_a", False), ("ws_a", False)]


async def test_failures_back_off_on_the_next_trigger_and_never_loop():
    """A failed run is not retried on its own; the next trigger runs no sooner than
    2^n x debounce after the n-th consecutive failure (20 s, then 40 s); a success resets it."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    runner.status = RefreshStatus.FAILED
    queue.enqueue("ws_a")
    timers.advance(10)
    await settle(queue)
    assert len(runner.calls) == 1 and queue.failures("ws_a") == 1
    assert timers.armed() == []  # no trigger, no retry: no hot loop

    queue.enqueue("ws_a")  # right after the first failure: not before 2^1 x 10 = 20 s
    timers.advance(19.9)
    await settle(queue)
    assert len(runner.calls) == 1
    timers.advance(0.1)
    await settle(queue)
    assert len(runner.calls) == 2 and queue.failures("ws_a") == 2

    queue.enqueue("ws_a")  # right after the second failure: not before 2^2 x 10 = 40 s
    timers.advance(39.9)
    await settle(queue)
    assert len(runner.calls) == 2
    timers.advance(0.1)
    await settle(queue)
    assert len(runner.calls) == 3 and queue.failures("ws_a") == 3

    runner.status = RefreshStatus.APPLIED  # the provider is back
    queue.enqueue("ws_a")
    timers.advance(80)  # 2^3 x 10
    await settle(queue)
    assert len(runner.calls) == 4 and queue.failures("ws_a") == 0
    queue.enqueue("ws_a")  # after a success: the plain debounce again
    timers.advance(10)
    await settle(queue)
    assert len(runner.calls) == 5


async def test_backoff_is_capped_at_300_seconds():
    """After many failures the next automatic run waits at most 300 s."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=60)
    runner.status = RefreshStatus.FAILED
    for _ in range(4):
        await queue.refresh_now("ws_a")  # forced runs ignore the backoff but count failures
    assert queue.failures("ws_a") == 4
    queue.enqueue("ws_a")
    timers.advance(299.9)
    await settle(queue)
    assert len(runner.calls) == 4
    timers.advance(0.1)
    await settle(queue)
    assert len(runner.calls) == 5


async def test_state_changes_are_reported_idle_pending_running_idle():
    """The queue reports each change of a workspace's state (pending, re-timed on each enqueue,
    running, idle) as it happens, with the state it has then."""
    runner, timers = Runner(), ManualTimers()
    seen: list[QueueStatus] = []
    queue = make_queue(
        runner, timers, debounce_s=10, on_state_changed=lambda ws: seen.append(queue.state(ws))
    )
    queue.enqueue("ws_a")
    assert seen[-1] == QueueStatus("ws_a", QueueState.PENDING, 10.0)
    timers.advance(4)
    queue.enqueue("ws_a")
    assert seen[-1] == QueueStatus("ws_a", QueueState.PENDING, 10.0)  # restarted
    assert queue.state("ws_a").due_in == pytest.approx(10.0)
    timers.advance(10)
    await settle(queue)
    assert [e.state for e in seen] == ["pending", "pending", "running", "idle"]
    assert all(e.workspace_id == "ws_a" for e in seen)


async def test_set_debounce_is_clamped_and_retimes_pending_timers():
    """The debounce is clamped to 2-600 s and a change re-times the pending timer."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers, debounce_s=10)
    assert queue.set_debounce(1) == 2.0
    assert queue.set_debounce(5000) == 600.0
    queue.set_debounce(30)
    queue.enqueue("ws_a")
    timers.advance(5)
    queue.set_debounce(5)  # the pending timer now fires 5 s after the last enqueue
    assert queue.state("ws_a").due_in == pytest.approx(0.0)
    timers.advance(0)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]


async def test_a_run_that_raises_is_logged_and_the_queue_keeps_working(caplog):
    """A run that raises is logged, its waiter gets the error, and the workspace is idle again."""
    timers = ManualTimers()
    calls = []

    async def broken(workspace_id: str, rebuild: bool) -> RefreshOutcome:
        calls.append(workspace_id)
        raise RuntimeError("boom")

    queue = make_queue(broken, timers, debounce_s=10)
    queue.enqueue("ws_a")
    timers.advance(10)
    await settle(queue)
    assert calls == ["ws_a"] and "boom" in caplog.text
    with pytest.raises(RuntimeError):
        await queue.refresh_now("ws_a")
    assert queue.state("ws_a").state == "idle"


# --- idle timing ("Idle and cost" in docs/refresh.md) -------------------------------------------


async def test_by_default_a_refresh_waits_for_two_quiet_minutes_after_the_last_message():
    """A person answering every 30-110 s keeps the refresh waiting (each stored message
    restarts the quiet time); once they stop, it runs 120 s after the last message."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers)
    queue.enqueue("ws_a")  # turn 1 completed
    for gap in (30, 110, 70):
        timers.advance(gap)
        queue.touch("ws_a")  # the next prompt is stored
        timers.advance(5)
        queue.enqueue("ws_a")  # its turn completed
    await settle(queue)
    assert runner.calls == []
    timers.advance(119.9)
    await settle(queue)
    assert runner.calls == []
    timers.advance(0.1)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]
    queue.touch("ws_a")  # a message with nothing pending queues nothing
    timers.advance(600)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]


async def test_a_conversation_that_never_pauses_is_folded_15_minutes_after_its_first_turn():
    """Messages every 60 s never leave two quiet minutes, yet the run happens 900 s after the
    first unfolded turn, and the next one 900 s after the first turn after that run."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers)
    for _ in range(32):  # t = 0, 60, …, 1860
        queue.enqueue("ws_a")
        timers.advance(30)
        queue.touch("ws_a")
        timers.advance(30)
        await settle(queue)
    assert timers.now - 1000.0 == 1920
    assert runner.calls == [("ws_a", False)] * 2  # at t = 900 and t = 960 + 900


async def test_a_closed_conversation_or_a_start_with_unfolded_messages_waits_only_the_settle():
    """``enqueue(settle_s=10)`` runs 10 s later whatever the quiet time; a message stored
    meanwhile does not push it back; the next ordinary enqueue waits the quiet time again."""
    runner, timers = Runner(), ManualTimers()
    queue = make_queue(runner, timers)
    queue.enqueue("ws_a")
    timers.advance(30)
    queue.enqueue("ws_a", settle_s=10)
    timers.advance(5)
    queue.touch("ws_a")
    timers.advance(5)
    await settle(queue)
    assert runner.calls == [("ws_a", False)]
    queue.enqueue("ws_a")
    assert queue.state("ws_a").due_in == pytest.approx(120.0)


def test_the_quiet_time_setting_ignores_an_older_debounce_and_is_bounded(tmp_path):
    """``settings.json`` written by an older Yak holds ``debounce_s: 10`` (every Settings save
    wrote it): it is not read, so the quiet time is the new default; the environment's value
    is clamped to 2-600 s and a malformed one ignored."""
    (tmp_path / "settings.json").write_text('{"debounce_s": 10.0, "chat_model": "mine"}')
    settings = load_settings(tmp_path, env={})
    assert (settings.refresh_idle_s, settings.chat_model) == (120.0, "mine")
    assert load_settings(tmp_path, env={"YAK_REFRESH_IDLE_SECONDS": "5000"}).refresh_idle_s == 600
    assert load_settings(tmp_path, env={"YAK_REFRESH_IDLE_SECONDS": "1"}).refresh_idle_s == 2
    assert load_settings(tmp_path, env={"YAK_REFRESH_IDLE_SECONDS": "soon"}).refresh_idle_s == 120


@pytest.mark.parametrize("started", [True, False], ids=["mid-run", "before-its-first-step"])
async def test_stop_cancels_the_run_in_flight_without_backoff(started):
    """Stop (the panel's button) cancels the workspace's run, mid-run or before it took its
    first step: the queue goes idle, a caller awaiting that run sees it cancelled, no failure
    is counted (the next trigger runs after the usual debounce), and stopping a workspace with
    nothing running answers False."""
    timers = ManualTimers()
    runner = Runner()
    gate = runner.hold("ws_a")
    queue = make_queue(runner, timers, debounce_s=10)
    waiter = asyncio.ensure_future(queue.refresh_now("ws_a"))
    await asyncio.sleep(0)
    assert queue.state("ws_a").state is QueueState.RUNNING
    if started:
        while not runner.running:
            await asyncio.sleep(0)
    assert queue.stop("ws_a") is True
    await settle(queue)
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert queue.state("ws_a") == QueueStatus("ws_a", QueueState.IDLE)
    assert (queue.failures("ws_a"), queue.stop("ws_a"), queue.stop("ws_b")) == (0, False, False)
    assert runner.calls == ([("ws_a", False)] if started else [])
    gate.set()

    queue.enqueue("ws_a")
    assert queue.state("ws_a") == QueueStatus("ws_a", QueueState.PENDING, 10.0)
