"""Quitting by signal goes through the same shutdown as File › Quit."""

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.builders import say
from tests.support.cli import yak_command
from tests.support.fake_api import hang
from yak.bootstrap import open_core


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_quits_the_app_cleanly(tmp_path, data_dir, signum):
    """``kill`` (SIGTERM) or Ctrl+C (SIGINT) on a running ``yak FOLDER`` ends it with status 0
    through the app's shutdown instead of killing it mid-write."""
    folder = tmp_path / "proj"
    folder.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    returncode, stderr = _signal_when(
        folder, env, signum, lambda: asyncio.run(_opened(data_dir, folder)), "opened the folder"
    )
    assert returncode == 0, stderr
    assert "Traceback" not in stderr


def _signal_when(
    folder, env, signum, ready, moment: str, *, timeout_s: float = 60
) -> tuple[int, str]:
    """Start ``yak FOLDER``, wait until ``ready()`` (polled; at most a minute), send ``signum``
    and wait up to ``timeout_s`` for the process to end; returns its status and stderr."""
    app = subprocess.Popen(
        yak_command(folder),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        got_there = False
        while time.monotonic() < deadline and app.poll() is None and not got_there:
            time.sleep(0.2)  # polling a real process's progress; not a timing assertion
            got_there = ready()
        assert got_there, f"the app never {moment}: " + (
            app.stderr.read() if app.poll() is not None else ""
        )
        app.send_signal(signum)
        _, stderr = app.communicate(timeout=timeout_s)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    return app.returncode, stderr


async def _opened(data_dir, folder) -> bool:
    """Whether the app has opened ``folder`` (read by a core of this process, like the CLI;
    only once the app created the database, never racing it to create one)."""
    if not (data_dir / "yak.db").exists():
        return False
    core = open_core(data_dir)
    try:
        found = await core.workspaces.find(str(folder))
        return found is not None and found.last_opened_at is not None
    finally:
        await core.aclose()


@pytest.mark.parametrize("moment", ["opening", "refreshing"])
def test_sigterm_ends_the_app_at_once_with_a_huge_conversation(
    tmp_path, data_dir, fake_api, moment
):
    """A workspace whose last conversation holds a 20 MB message (stored before the size limits
    existed): SIGTERM while the window opens it, or while its memory refresh waits on the model,
    ends the app with status 0 and keeps the conversation unfolded for the next start. (It was
    ignored for minutes: the window rendered the whole message and each refresh redacted it.)
    The bound is generous: the app must end within ``QUIT_DEADLINE_S``; this is not a timing
    assertion."""
    folder = tmp_path / "proj"
    folder.mkdir()
    huge = "".join(f"line {n:07d} of a pasted log\n" for n in range(20_000_000 // 29))
    asyncio.run(_seed(data_dir, folder, huge))
    fake_api.respond_with(lambda body: hang())
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", YAK_REFRESH_IDLE_SECONDS="2")

    def ready() -> bool:
        if moment == "opening":
            return asyncio.run(_opened(data_dir, folder))
        return bool(fake_api.message_requests)  # the refresh waits on the model

    returncode, stderr = _signal_when(
        folder, env, signal.SIGTERM, ready, f"got {moment}", timeout_s=10
    )
    assert returncode == 0, stderr
    assert "Traceback" not in stderr
    assert asyncio.run(_unfolded(data_dir, folder)) == 2


async def _seed(data_dir, folder, question: str) -> None:
    """Store a conversation (``question`` and a short reply) in ``folder``'s workspace."""
    core = open_core(data_dir)
    try:
        workspace = await core.workspaces.for_write(str(folder))  # not opened in a window
        say(core, workspace.id, question, "That is a long log.", title="Log")
    finally:
        await core.aclose()


async def _unfolded(data_dir, folder) -> int:
    """How many of ``folder``'s messages are not yet folded into its memory."""
    core = open_core(data_dir)
    try:
        workspace = await core.workspaces.find(str(folder))
        return len(core.chat.conversations.unfolded_messages(workspace.id))
    finally:
        await core.aclose()


def test_the_quit_deadline_ends_a_process_stuck_in_a_long_call(tmp_path):
    """Once a quit has started (SIGTERM, Ctrl+Q, closing the window), the process ends within
    ``QUIT_DEADLINE_S`` even when a thread is inside one long call that holds the interpreter
    (here a C loop that never returns to Python): exit status 1, every thread's stack written
    for the log. Waits up to 10 s; not a timing assertion."""
    stuck = (
        "from yak.app.lifetime import arm_quit_deadline\narm_quit_deadline()\nsum(range(10**13))\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", stuck], env=env, capture_output=True, text=True, timeout=10
    )
    assert done.returncode == 1
    assert "Timeout (0:00:01.800000)!" in done.stderr and 'File "<string>", line 3' in done.stderr
