"""TaskGroup.replace: the latest task of a name wins; ``settled`` waits without being cancelled."""

from __future__ import annotations

import asyncio

import pytest

from yak.ui.tasks import TaskGroup, settled


async def _load(gate: asyncio.Event, shown: list[str], value: str) -> None:
    await gate.wait()
    shown.append(value)


def test_replace_cancels_the_running_task_of_the_same_name_only():
    async def body() -> None:
        group = TaskGroup()
        gate = asyncio.Event()
        shown: list[str] = []
        first = group.replace("load", _load(gate, shown, "first"))
        other = group.replace("other", _load(gate, shown, "other"))
        second = group.replace("load", _load(gate, shown, "second"))
        assert group.latest("load") is second
        gate.set()
        await group.drain()
        assert first.cancelled()
        assert not other.cancelled() and not second.cancelled()
        assert sorted(shown) == ["other", "second"]
        assert group.latest("load") is None  # forgotten once done

    asyncio.run(body())


def test_settled_says_whether_the_task_ran_to_its_end():
    async def body() -> None:
        group = TaskGroup()
        gate = asyncio.Event()
        shown: list[str] = []
        replaced = group.replace("load", _load(gate, shown, "old"))
        waiter = asyncio.ensure_future(settled(replaced))
        newest = group.replace("load", _load(gate, shown, "new"))
        assert await waiter is False  # the waiter goes on; it is not cancelled with the task
        gate.set()
        assert await settled(newest) is True
        assert shown == ["new"]

    asyncio.run(body())


def test_settled_raises_what_the_task_raised(caplog):
    async def fail() -> None:
        raise ValueError("broken")

    async def body() -> None:
        task = TaskGroup().replace("load", fail())
        with pytest.raises(ValueError, match="broken"):
            await settled(task)

    asyncio.run(body())
    assert any("background task load failed" in r.getMessage() for r in caplog.records)


def test_a_closed_group_cancels_what_is_spawned_after_before_it_runs():
    """Quitting closes the groups: an event arriving while the core closes must not start a
    reload that would outlive the loop."""

    async def body() -> None:
        group = TaskGroup()
        gate = asyncio.Event()
        shown: list[str] = []
        running = group.spawn(_load(gate, shown, "before"), name="reload")
        group.close()
        late = group.spawn(_load(gate, shown, "after"), name="reload")
        gate.set()
        await group.drain()
        assert running.cancelled() and late.cancelled()
        assert shown == []

    asyncio.run(body())


def test_run_lets_what_the_body_left_behind_finish_before_the_loop_stops(qloop, qapp):
    """A controller's task the test body did not wait for (a Settings list reload) finishes
    inside ``run``: nothing is left for pytest-qt's ``processEvents()`` after the test to step
    outside the loop ("no running event loop", seen on a busy machine)."""
    from memory_support import run

    group = TaskGroup()
    read: list[str] = []

    async def reload() -> None:
        for _ in range(3):  # a few trips through a worker thread, like a database read
            read.append(await asyncio.to_thread(str, len(read)))

    async def body() -> asyncio.Task[None]:
        return group.spawn(reload(), name="memory-page-reload")

    task = run(qloop, body())
    assert task.done() and not task.cancelled() and task.exception() is None
    assert read == ["0", "1", "2"]
    qapp.processEvents()  # what pytest-qt does after the test: nothing runs now


def test_run_names_the_tasks_that_never_finish(qloop):
    """A task that would outlive the test is a failure naming it, not a teardown error later."""
    from memory_support import run

    group = TaskGroup()

    async def body() -> None:
        group.spawn(asyncio.Event().wait(), name="waits-forever")

    with pytest.raises(
        AssertionError,
        match=r"tasks still running after the test body: "
        r"\['waits-forever'\]",
    ):
        run(qloop, body(), limit_s=0.5)
