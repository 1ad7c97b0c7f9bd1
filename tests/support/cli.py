"""Driving the command line, in the test's own process or as a person runs it in another, and
storing a memory as another session would: the helpers the command-line tests share."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from yak.bootstrap import open_core
from yak.cli import main
from yak.domain import Workspace


def yak_command(*args: object) -> list[str]:
    """The command line of ``python -m yak ARGS`` (for ``subprocess.Popen`` or an MCP client)."""
    return [sys.executable, "-m", "yak", *map(str, args)]


def yak(
    *args: object,
    data_dir: Path | None = None,
    stdin: str | bytes = b"",
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    text: bool = False,
    timeout_s: float = 120,
) -> subprocess.CompletedProcess[Any]:
    """``python -m yak ARGS`` in another process, run to its end: the test's environment (its
    ``YAK_DATA_DIR``, the fake API, the PostgreSQL URL of a ``database`` test) with ``env`` on
    top, and ``YAK_DATA_DIR`` set to ``data_dir`` when given. Stdin is a pipe holding ``stdin``
    (never a terminal); stdout and stderr are captured, as bytes, or as ``str`` with ``text``.

    Raises:
        subprocess.TimeoutExpired: it ran over ``timeout_s`` seconds (a hang guard).
    """
    environment = {**os.environ, **(env or {})}
    if data_dir is not None:
        environment["YAK_DATA_DIR"] = str(data_dir)
    if text:
        given: str | bytes = stdin.decode() if isinstance(stdin, bytes) else stdin
    else:
        given = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(
        yak_command(*args),
        input=given,
        capture_output=True,
        text=text,
        env=environment,
        cwd=cwd,
        timeout=timeout_s,
        check=False,
    )


def run_cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``yak.cli.main(argv)`` in this process; returns (exit code, stdout, stderr) of that call
    alone (what was printed before is dropped)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def seed_memory(data_dir: Path, folder: Path, text: str) -> Workspace:
    """Register ``folder`` and save ``text`` as its memory (as another session would)."""

    async def work() -> Workspace:
        core = open_core(data_dir)
        try:
            workspace = await core.workspaces.open(str(folder))
            await core.memory.save(workspace.id, text, expected_version=None)
            return workspace
        finally:
            await core.aclose()

    return asyncio.run(work())
