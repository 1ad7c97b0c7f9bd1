"""Driving the command line in the test's own process, and storing a memory as another
session would: the helpers the command-line tests share."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from yak.bootstrap import open_core
from yak.cli import main
from yak.domain import Workspace


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
