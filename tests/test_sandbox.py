"""Commands run confined: writes only in the workspace and a temporary folder, no way to read
Yak's environment, and the confinement named in every result."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.cli import yak
from tests.support.fake_api import text, tool_use
from yak.agent import sandbox
from yak.agent.tools import WorkspaceTools

KEY = "sk-ant-test-0123456789-do-not-leak"
AVAILABLE = [
    kind
    for kind, usable in (
        (sandbox.LANDLOCK, sandbox.landlock_abi() >= 1),
        (sandbox.BUBBLEWRAP, sandbox.bubblewrap_path() is not None),
    )
    if usable
]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandboxes")


@pytest.fixture
def layout(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("untouched\n")
    return ws, outside


@linux_only
def test_this_machine_has_a_sandbox():
    """Linux here offers Landlock or bubblewrap, so the confinement tests below run (CI installs
    bubblewrap when the kernel lacks Landlock)."""
    assert AVAILABLE, "neither Landlock nor bubblewrap works here"
    assert sandbox.choose("auto").kind == AVAILABLE[0]


@linux_only
@pytest.mark.parametrize("kind", AVAILABLE)
def test_a_command_writes_inside_and_its_temp_folder_but_not_outside(layout, kind):
    """Writing, truncating, creating, removing and renaming outside fail; the workspace and the
    command's private temporary folder work; the result names the sandbox."""
    ws, outside = layout
    tools = WorkspaceTools(ws, sandbox=sandbox.choose(kind))
    script = (
        "echo in > inside.txt && echo tmp > $TMPDIR/t && cat $TMPDIR/t; "
        f"echo pwned > {outside}/new.txt; echo pwned > {outside}/keep.txt; "
        f"rm -f {outside}/keep.txt; mkdir {outside}/d; mv inside.txt {outside}/moved.txt; "
        "echo > /dev/null && echo devnull-ok; exit 0"
    )
    result = tools.run("run_command", {"command": script})
    assert result.output.startswith(f"Exit code 0 (sandbox: {kind}).")
    assert result.summary == f"exit code 0, sandbox: {kind}"
    assert "tmp\n" in result.output and "devnull-ok" in result.output
    assert (ws / "inside.txt").read_text() == "in\n"
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "untouched\n"


def test_unconfined_runs_anywhere_and_says_so(layout):
    """The ``none`` setting runs a command unconfined and its result says ``sandbox: none``."""
    ws, outside = layout
    tools = WorkspaceTools(ws, sandbox=sandbox.choose("none"))
    result = tools.run("run_command", {"command": f"echo out > {outside}/new.txt"})
    assert result.ok and result.output.startswith("Exit code 0 (sandbox: none).")
    assert (outside / "new.txt").read_text() == "out\n"
    assert "unconfined" in tools.approval_detail("run_command", {"command": "ls"})


def test_without_a_sandbox_a_command_is_refused_with_the_setting_named(layout, monkeypatch):
    """Asking for bubblewrap where it is not installed refuses the command (nothing runs) and
    says how to run unconfined."""
    ws, _ = layout
    monkeypatch.setenv("PATH", str(ws))  # no bwrap on it
    sandbox.bubblewrap_path.cache_clear()
    try:
        chosen = sandbox.choose("bubblewrap")
    finally:
        sandbox.bubblewrap_path.cache_clear()
    tools = WorkspaceTools(ws, sandbox=chosen)
    result = tools.run("run_command", {"command": "touch ran.txt"})
    assert not result.ok
    assert result.output == (
        "Error: Commands are not run: bubblewrap (bwrap) is not installed or cannot make a "
        "sandbox here; set the command sandbox to none in Settings › Provider (or "
        "YAK_COMMAND_SANDBOX=none) to run commands unconfined."
    )
    assert not (ws / "ran.txt").exists()


@linux_only
def test_the_command_line_makes_itself_non_dumpable(data_dir):
    """A ``yak`` command turns off its dumpable flag first, so another process of the same user
    cannot read its ``/proc/<pid>/environ`` or memory."""
    probe = (
        "import ctypes, sys; from yak.cli import main; main(['memory', 'list', '--json']); "
        "sys.stderr.write(str(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stderr.strip().endswith("0"), done.stderr


@linux_only
def test_yak_ask_commands_cannot_read_the_key_or_write_outside(tmp_path, fake_api, monkeypatch):
    """``yak ask --yes`` with the key in its environment: an approved command that reads
    ``/proc/$PPID/environ`` (Yak's) and writes outside gets neither; the model sees a result that
    names the sandbox and not the key; stderr names it too."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    ws = tmp_path / "project"
    ws.mkdir()
    target = tmp_path / "escaped.txt"
    command = (
        "env | grep -c ANTHROPIC_API_KEY; cat /proc/$PPID/environ || echo no-environ; "
        f"head -c 1 /proc/$PPID/mem || echo no-mem; echo x > {target}"
    )
    fake_api.script(tool_use("run_command", {"command": command}), text("Done."))
    done = yak(
        "ask",
        "-w",
        ws,
        "--yes",
        "--no-refresh",
        "go",
        env={"YAK_MODEL": "claude-chat-test"},
        text=True,
    )
    assert done.returncode == 0, done.stderr
    kind = sandbox.choose("auto").kind
    assert done.stderr.startswith("[run_command] env | grep -c ANTHROPIC_API_KEY;")
    assert done.stderr.endswith(f": exit code 2, sandbox: {kind}\n")  # the write outside failed
    [_, second] = fake_api.message_requests
    result = second.body["messages"][-1]["content"][0]
    shown = result["content"] if isinstance(result["content"], str) else str(result["content"])
    assert result["type"] == "tool_result" and f"sandbox: {kind}" in shown
    assert shown.splitlines()[1] == "0"  # no key variable in the command's environment
    assert "no-environ" in shown and "no-mem" in shown
    assert KEY not in shown and KEY not in done.stdout + done.stderr
    assert not target.exists()
