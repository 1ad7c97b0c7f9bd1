"""TaskGroup.replace: the latest task of a name wins; ``settled`` waits without being cancelled.
TaskGroup.run and attempt: the one way a window action runs a core operation (its error shown
where the action chose, its value to the success callback, its progress while it takes long,
nothing touched once its widget is gone)."""

from __future__ import annotations

import asyncio

import pytest

from yak.errors import StoreError
from yak.ui.tasks import FAILED, PROGRESS_DELAY_S, TaskGroup, logged, settled


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


LOCKED = "the Yak database is locked by another program; try again in a moment"


async def _locked(gate: asyncio.Event | None = None) -> int:
    if gate is not None:
        await gate.wait()
    raise StoreError(LOCKED)


async def _answer(gate: asyncio.Event | None = None) -> int:
    if gate is not None:
        await gate.wait()
    return 42


def test_an_operation_that_raises_shows_its_sentence_in_the_sink_chosen(qloop, qtbot):
    """A ``YakError`` lands, as its sentence, in the place the action names (here an inline
    label, as under the Settings editor); the success callback is not called."""
    from memory_support import run
    from PySide6.QtWidgets import QLabel

    label = QLabel("before")
    qtbot.addWidget(label)
    group = TaskGroup(label)
    succeeded: list[int] = []

    async def body() -> None:
        group.run(_locked(), name="save", on_error=label.setText, on_success=succeeded.append)
        await group.drain()

    run(qloop, body())
    assert label.text() == LOCKED
    assert succeeded == []


def test_the_success_callback_gets_the_value_and_a_step_after_it_runs(qloop, qtbot):
    """``on_success`` is called with the operation's value; when it returns a coroutine (the
    next step), the operation ends after it."""
    from memory_support import run
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    qtbot.addWidget(label)
    group = TaskGroup(label)

    async def next_step(value: int) -> None:
        label.setText(f"{label.text()} then {value + 1}")

    async def body() -> None:
        shown = await group.attempt(
            _answer(), on_error=label.setText, on_success=lambda v: label.setText(str(v))
        )
        assert shown == 42
        await group.run(_answer(), name="read", on_error=label.setText, on_success=next_step)

    run(qloop, body())
    assert label.text() == "42 then 43"


def test_a_long_operation_shows_its_progress_in_the_status_bar_and_clears_it(qloop, qtbot):
    """Still running after ``PROGRESS_DELAY_S``, an operation's progress line shows in the
    window's status bar; it goes when the operation ends, and what the success callback or the
    error sink shows stays."""
    from memory_support import run, until

    from yak.ui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    group = TaskGroup(window, progress=window)
    status = window.statusBar()
    gate = asyncio.Event()

    async def body() -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        task = group.run(
            _answer(gate), name="refresh", on_error=window.show_error, progress="Refreshing…"
        )
        await until(lambda: status.currentMessage() == "Refreshing…", what="progress")
        assert loop.time() - started >= PROGRESS_DELAY_S * 0.9
        gate.set()
        await task
        assert status.currentMessage() == ""

        shown = await group.attempt(
            _answer(),
            on_error=window.show_error,
            on_success=lambda v: window.show_status(f"Done: {v}", timeout_ms=60000),
            progress="Refreshing…",
        )
        assert shown == 42 and status.currentMessage() == "Done: 42"

        await group.run(
            _locked(), name="refresh", on_error=window.show_status, progress="Refreshing again…"
        )
        assert status.currentMessage() == LOCKED  # the error, not a stale progress line

    run(qloop, body())


def test_a_widget_closed_mid_operation_stops_it_without_touching_the_widget(
    qloop, qtbot, background_errors
):
    """The window goes away while an operation runs: its task is cancelled, no sink or
    callback is called on the deleted widget, and nothing is logged as a failure."""
    import shiboken6
    from memory_support import run
    from PySide6.QtWidgets import QLabel

    label = QLabel("before")
    group = TaskGroup(label)
    gate = asyncio.Event()
    called: list[object] = []

    async def body() -> None:
        task = group.run(
            _answer(gate),
            name="read",
            on_error=called.append,
            on_success=lambda v: (called.append(v), label.setText(str(v))),
        )
        failing = group.run(_locked(gate), name="write", on_error=called.append)
        await asyncio.sleep(0)  # both are waiting now
        shiboken6.delete(label)
        gate.set()
        await group.drain()
        assert task.cancelled() and failing.cancelled()

    run(qloop, body())
    assert called == []


def test_an_operation_cancelled_before_it_starts_is_closed_quietly(qloop, recwarn):
    """Quitting closes the group: an operation started from a slot afterwards never runs, and
    its coroutine is closed rather than left to warn that it was never awaited."""
    import gc

    from memory_support import run

    group = TaskGroup()
    group.close()
    ran: list[int] = []

    async def operation() -> int:
        ran.append(1)
        return 1

    async def body() -> bool:
        task = group.run(operation(), name="late", on_error=ran.append)
        await group.drain()
        return task.cancelled()

    assert run(qloop, body()) is True
    gc.collect()  # the task and its traceback are gone: an unawaited coroutine would warn now
    assert ran == []
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def test_a_background_read_that_fails_is_a_warning_in_the_log(qloop, caplog):
    """A read nobody asked for (recent folders, a line's origins) that fails says so in the
    log with the error's sentence, and hands its caller :data:`FAILED`."""
    import logging

    from memory_support import run

    caplog.set_level(logging.WARNING, logger="yak.ui.tasks")

    async def body() -> object:
        return await TaskGroup().attempt(_locked(), on_error=logged("reading recent workspaces"))

    assert run(qloop, body()) is FAILED
    assert [r.getMessage() for r in caplog.records if r.name == "yak.ui.tasks"] == [
        f"reading recent workspaces failed: {LOCKED}"
    ]
