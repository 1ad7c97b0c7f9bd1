"""Running a core's coroutines in place, without an event loop (``yak.aio``): what a command
that only reads relies on."""

from __future__ import annotations

import asyncio
import threading

import pytest

from yak.aio import in_daemon_thread, in_place, run_in_place, to_thread


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


def test_in_daemon_thread_gives_the_result_and_raises_the_error():
    """The call runs on another thread; its result, or its exception, reaches the waiter."""

    def fail() -> None:
        raise ValueError("bad input")

    async def work() -> str:
        with pytest.raises(ValueError, match="bad input"):
            await in_daemon_thread(fail)
        return await in_daemon_thread(lambda: threading.current_thread().name)

    name = asyncio.run(work())
    assert name != threading.main_thread().name


def test_a_process_quits_without_waiting_for_a_call_in_a_daemon_thread(tmp_path):
    """The app's warm-up imports the SDK for seconds on such a thread: quitting meanwhile ends
    the process at once (a worker of the loop's executor is joined first: Ctrl+Q lingered). Here
    the call never ends; the process still exits 0, its last line printed."""
    import subprocess
    import sys

    script = tmp_path / "quit.py"
    script.write_text(
        "import asyncio, threading\n"
        "from yak.aio import in_daemon_thread\n"
        "async def main():\n"
        "    started = threading.Event()\n"
        "    def forever():\n"
        "        started.set()\n"
        "        threading.Event().wait()\n"
        "    task = asyncio.ensure_future(in_daemon_thread(forever))\n"
        "    await asyncio.to_thread(started.wait)\n"
        "    task.cancel()\n"
        "asyncio.run(main())\n"
        "print('quit')\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "quit\n"), done.stderr
