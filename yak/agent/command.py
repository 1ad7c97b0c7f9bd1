"""``run_command``: one shell command in the workspace, confined by a sandbox
(``yak.agent.sandbox``), with a timeout, its output capped (head and tail kept), without the
Anthropic key in its environment (so the key cannot end up in a stored tool result), and killed
with its process group on timeout or when the turn is stopped."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

from yak.agent.confinement import ToolError, ToolResult
from yak.agent.sandbox import Sandbox, prepared

log = logging.getLogger(__name__)

SECRET_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


async def run_command(
    command: str,
    *,
    cwd: Path,
    timeout_s: float,
    output_chars: int,
    target: str,
    sandbox: Sandbox,
) -> ToolResult:
    """Run ``command`` through the shell in ``cwd``, confined by ``sandbox``.

    Args:
        command: the shell command.
        cwd: the workspace root.
        timeout_s: seconds before the command is killed.
        output_chars: characters of output the model sees (head and tail).
        target: the command as the user sees it in the transcript.
        sandbox: the confinement (its label ends the result's first line).

    Returns:
        The exit code (or the timeout) and the output, as a ``ToolResult``.

    Raises:
        ToolError: no sandbox is available and running unconfined is not allowed; nothing ran
            (a sandbox that cannot be applied ends the command with exit code 126 and a line
            saying so, before anything runs).
        asyncio.CancelledError: Stop; the command and what it started are killed first.
    """
    if sandbox.refusal is not None:
        raise ToolError(sandbox.refusal)
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    if sys.platform == "win32":
        return await _run(
            await asyncio.create_subprocess_shell(
                command,
                cwd=cwd,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            ),
            timeout_s=timeout_s,
            output_chars=output_chars,
            target=target,
            label=sandbox.label,
        )
    with prepared(sandbox, command, cwd=cwd, env=env) as launch:
        # A session of its own, so _kill() can end everything the command started.
        process = await asyncio.create_subprocess_exec(
            *launch.argv,
            cwd=cwd,
            env=launch.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        return await _run(
            process,
            timeout_s=timeout_s,
            output_chars=output_chars,
            target=target,
            label=sandbox.label,
        )


async def _run(
    process: asyncio.subprocess.Process,
    *,
    timeout_s: float,
    output_chars: int,
    target: str,
    label: str,
) -> ToolResult:
    collected = _CappedOutput(output_chars)

    async def pump() -> int:
        assert process.stdout is not None
        while chunk := await process.stdout.read(65536):
            collected.add(chunk)
        return await process.wait()

    timed_out = False
    code: int | None  # None only when a stopped command did not exit in time
    try:
        code = await asyncio.wait_for(pump(), timeout_s)
    except TimeoutError:
        timed_out = True
        await _reap(process)
        code = process.returncode
    except asyncio.CancelledError:
        await asyncio.shield(_reap(process))  # Stop: the command dies with the turn
        raise
    output = collected.text()
    if timed_out:
        header = f"Timed out after {timeout_s:g} s; the command was stopped ({label})."
        summary = f"timed out after {timeout_s:g} s, {label}"
    else:
        header = f"Exit code {code} ({label})."
        summary = f"exit code {code}, {label}"
    body = f"{header}\n{output}" if output else f"{header}\n(no output)"
    return ToolResult(ok=not timed_out and code == 0, output=body, summary=summary, target=target)


class _CappedOutput:
    """Keeps the head and the tail of a command's output: at most ``limit`` bytes in all, so at
    most ``limit`` characters once decoded."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: -self.half]

    def text(self) -> str:
        head = bytes(self.head).decode("utf-8", errors="replace")
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        if dropped <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        return f"{head}\n[… {dropped} bytes cut …]\n{tail}"


async def _reap(process: asyncio.subprocess.Process) -> None:
    """Kill a command with its process group and wait for it and its pipe to close (so no
    transport outlives the event loop)."""
    _kill(process)
    try:
        await asyncio.wait_for(process.communicate(), 5)
    except (TimeoutError, OSError, ValueError) as exc:
        log.warning("a stopped command did not exit cleanly: %s", type(exc).__name__)


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill a command and everything it started."""
    if process.returncode is not None:
        return
    try:
        if sys.platform != "win32":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        pass
