"""Quitting by signal goes through the same shutdown as File › Quit."""

import asyncio
import os
import signal
import subprocess
import sys
import time

import pytest

from yak.bootstrap import open_core


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_quits_the_app_cleanly(tmp_path, data_dir, signum):
    """``kill`` (SIGTERM) or Ctrl+C (SIGINT) on a running ``yak FOLDER`` ends it with status 0
    through the app's shutdown instead of killing it mid-write."""
    folder = tmp_path / "proj"
    folder.mkdir()
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    app = subprocess.Popen(
        [sys.executable, "-m", "yak", str(folder)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        opened = False
        while time.monotonic() < deadline and app.poll() is None and not opened:
            time.sleep(0.2)  # polling a real process's progress; not a timing assertion
            if (data_dir / "yak.db").exists():
                opened = asyncio.run(_opened(data_dir, folder))
        assert opened, "the app did not open the folder: " + (
            app.stderr.read() if app.poll() is not None else ""
        )
        app.send_signal(signum)
        _, stderr = app.communicate(timeout=60)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
    assert app.returncode == 0, stderr
    assert "Traceback" not in stderr


async def _opened(data_dir, folder) -> bool:
    """Whether the app has opened ``folder`` (read by a core of this process, like the CLI)."""
    core = open_core(data_dir)
    try:
        found = await core.workspaces.find(str(folder))
        return found is not None and found.last_opened_at is not None
    finally:
        await core.aclose()
