"""Running a core's coroutines in place, without an event loop (``yak.aio``): what a command
that only reads relies on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from yak.aio import in_place, run_in_place, to_thread


def test_a_coroutine_that_offloads_in_place_runs_to_its_result_on_this_thread():
    """Each ``in_place`` call runs at once on the calling thread; ``asyncio.sleep(0)`` is a
    bare yield and is allowed."""
    threads = []

    def read(n: int) -> int:
        threads.append(threading.current_thread())
        return n * 2

    async def work() -> list[int]:
        first = await in_place(read, 1)
        await asyncio.sleep(0)
        second = await in_place(read, n=2)
        return [first, second]

    assert run_in_place(work()) == [2, 4]
    assert threads == [threading.main_thread()] * 2


def test_the_coroutines_exception_is_raised_as_it_is():
    """A repository error inside reaches the caller unchanged (the CLI turns it into its line)."""

    def fail() -> None:
        raise OSError("disk gone")

    async def work() -> None:
        await in_place(fail)

    with pytest.raises(OSError, match="disk gone"):
        run_in_place(work())


def test_waiting_on_the_event_loop_is_a_clear_error_not_a_hang():
    """A path that needs a loop (a worker thread, a future) fails at once, naming what it
    waited on, and the coroutine is closed (its ``finally`` ran)."""
    closed = []

    async def work() -> int:
        try:
            return await to_thread(int, "3")
        finally:
            closed.append(True)

    with pytest.raises(RuntimeError, match="no running event loop"):
        run_in_place(work())
    assert closed == [True]

    class Waits:
        def __await__(self):
            yield "a future"

    async def waits() -> None:
        try:
            await Waits()
        finally:
            closed.append(True)

    with pytest.raises(RuntimeError, match="waited on 'a future', which needs an event loop"):
        run_in_place(waits())
    assert closed == [True, True]
