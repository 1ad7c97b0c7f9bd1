"""What the command line loads when it starts (the speed itself is measured in
``benchmarks/bench_cli.py``, never asserted): ``yak --help`` and ``yak --version`` load no
command module, neither the core nor the database nor ``asyncio``; a command's help loads its
own module but no database, SDK or Qt; and a reading command on a database whose schema is
current does not load Alembic or the model SDK. Each case runs the real ``python -m yak`` with
``-X importtime`` and reads the modules it imported from stderr."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

from tests.support.builders import say, workspace_with_document

# Never needed to print help or the version.
HEAVY = (
    "sqlalchemy",
    "alembic",
    "asyncio",
    "anthropic",
    "PySide6",
    "platformdirs",
    "mcp",
    "mcp_types",
    "yak.mcp",
)
CORE = ("yak.core", "yak.bootstrap", "yak.db", "yak.domain", "yak.cli.output")
# What no help page needs: the database, the model SDK, Qt.
DATABASE_SDK_QT = ("sqlalchemy", "alembic", "anthropic", "PySide6", "yak.db", "mcp", "yak.mcp")
COMMAND_MODULES = ("yak.cli.memory", "yak.cli.ask", "yak.cli.context", "yak.cli.completion")


def run_yak(*args: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """``python -X importtime -m yak ARGS``: the finished process (stdout bytes) and the names
    of the modules it imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "yak", *args],
        capture_output=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )
    imported = set()
    other = []
    for line in result.stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:"):
            imported.add(line.rsplit("|", 1)[1].strip())
        else:
            other.append(line)
    result.stderr = "\n".join(other).encode()
    return result, imported


def loaded(imported: set[str], packages: tuple[str, ...]) -> list[str]:
    """The modules of ``packages`` (a package and its submodules) that were imported."""
    return sorted(m for m in imported if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_help_and_version_load_no_command_core_database_or_event_loop(argv):
    """The version and the top help print (exit 0) from the table of commands alone: no
    command module, nor the core, the database, asyncio, the SDK or Qt."""
    result, imported = run_yak(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"yak 0" if argv == ["--version"] else b"usage: yak")
    assert loaded(imported, HEAVY + CORE + COMMAND_MODULES) == []


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["ask", "--help"], "yak.cli.ask"),
        (["memory", "-h"], None),
        (["memory", "show", "-h"], "yak.cli.memory"),
        (["memory", "sync", "-h"], "yak.cli.share"),
        (["mcp", "--help"], "yak.cli.mcp"),
    ],
)
def test_a_commands_help_builds_its_parser_alone(argv, module):
    """A command's help imports that command's module and no other command's (``memory -h``
    none: the group lists its subcommands from the table), and no database, SDK or Qt."""
    result, imported = run_yak(*argv)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"usage: yak")
    others = ["yak.cli." + name for name in ("memory", "ask", "mcp", "share", "review", "scopes")]
    assert loaded(imported, tuple(m for m in others if m != module)) == []
    assert loaded(imported, DATABASE_SDK_QT) == []


def test_showing_a_current_database_loads_no_sqlalchemy_agent_or_refresh(
    core, loop, data_dir, tmp_path
):
    """``yak memory show`` (plain and ``--json``) on a local database already at this Yak's
    schema prints the document through the plain ``sqlite3`` read path: neither SQLAlchemy nor
    Alembic (nor Mako), nor the agent, the conversations, the refresh machinery, the rewrite
    rules or the model SDK are imported, nor what only other paths need: the log file's
    handlers and folder lookup (a read that goes well writes no log line), the ports
    (the services name them as types only), and ``importlib.resources``' readers and
    ``zipfile`` (the newest migration is found beside the module). Nor ``asyncio``: a command
    that only reads runs its core in place, without an event loop or a worker thread."""
    folder = tmp_path / "project"
    folder.mkdir()
    loop.run_until_complete(workspace_with_document(core, folder, "kept notes\n"))
    never = (
        "sqlalchemy",
        "alembic",
        "mako",
        "anthropic",
        "PySide6",
        "mcp",
        "mcp_types",
        "yak.chat",
        "yak.agent.loop",
        "yak.agent.tools",
        "yak.refresh",
        "yak.memory.judging.guards",
        "yak.memory.redaction",
        "yak.db.engine",
        "yak.db.models",
        "yak.llm.provider",
        "logging.handlers",
        "platformdirs",
        "asyncio",
        "concurrent.futures",
        "yak.ports",
        "importlib.readers",
        "importlib.resources.readers",
        "zipfile",
    )

    result, imported = run_yak("memory", "show", "-w", str(folder))
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"kept notes\n"
    assert loaded(imported, never) == []
    assert "yak.db.sqlite_read" in imported

    result, imported = run_yak("memory", "show", "-w", str(folder), "--json")
    assert result.returncode == 0, result.stderr
    assert b'"content": "kept notes\\n"' in result.stdout
    assert loaded(imported, never) == []


def test_a_refresh_without_a_key_fails_at_once_without_loading_the_sdk(
    core, loop, tmp_path, monkeypatch
):
    """``yak memory refresh`` with a conversation to fold in and no API key anywhere: exit 4
    and the sentence saying how to add one, before the model SDK (seconds to import) loads;
    the document is unchanged."""
    folder = tmp_path / "project"
    folder.mkdir()
    workspace = loop.run_until_complete(workspace_with_document(core, folder, "- notes\n"))
    say(core, workspace.id, "We lint with ruff.", "Noted.")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the test's core had a fake key

    result, imported = run_yak("memory", "refresh", "-w", str(folder))

    assert result.returncode == 4, result.stderr
    assert result.stderr.decode().startswith("yak: Refresh failed: No Anthropic API key is set.")
    assert loaded(imported, ("anthropic",)) == []
    assert run_yak("memory", "show", "-w", str(folder))[0].stdout == b"- notes\n"


def test_mcp_on_a_missing_folder_says_so_before_loading_the_mcp_sdk(data_dir, tmp_path):
    """``yak mcp -w`` a folder that does not exist: exit 2 and the folder named, before the
    MCP SDK (seconds to import on a busy machine) loads."""
    missing = tmp_path / "no-such-project"

    result, imported = run_yak("mcp", "-w", str(missing))

    assert result.returncode == 2, result.stderr
    assert result.stderr.decode().strip() == f"yak: no such folder: {missing}"
    assert loaded(imported, ("mcp", "mcp_types", "yak.mcp")) == []


def test_a_database_to_migrate_is_read_through_sqlalchemy(data_dir, tmp_path):
    """A data directory without a database (nothing to read fast) still answers ``show``: the
    usual path creates and migrates it, and an unknown folder reads as empty."""
    folder = tmp_path / "project"
    folder.mkdir()

    result, imported = run_yak("memory", "show", "-w", str(folder), "--data-dir", str(data_dir))

    assert (result.returncode, result.stdout) == (0, b""), result.stderr
    assert "sqlalchemy" in imported and "yak.db.engine" in imported


def test_the_collector_runs_during_a_commands_work_and_after_it(data_dir, tmp_path, capsys):
    """``main`` keeps the garbage collector off only while a command starts: the command's
    work (a long ``yak ask`` or ``yak mcp``) runs with it on, and it is on again after the
    command, whether it printed the document (exit 0) or refused its arguments (exit 2)."""
    from yak.cli import main
    from yak.cli.context import Context

    folder = tmp_path / "project"
    folder.mkdir()
    assert gc.isenabled()

    async def work(_core) -> int:
        return 0 if gc.isenabled() else 9

    gc.disable()  # as ``main`` leaves it for the command
    try:
        assert Context(data_dir=data_dir).run(work) == 0
    finally:
        gc.enable()
    assert main(["memory", "show", "-w", str(folder), "--data-dir", str(data_dir)]) == 0
    assert gc.isenabled()
    assert main(["memory", "show", "--no-such-option"]) == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err
    assert gc.isenabled()
