"""The code's static checks run with the tests, so CI runs them: the layer contracts of
docs/architecture.md (import-linter), the type check (mypy), the lint rules and the format
(ruff). Each test fails with the tool's own report."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# mypy on a cold cache takes about a minute on an idle 2-core machine and several under load:
# the suite's 120 s default would kill it before its own 600 s limit (a red first run on a
# fresh clone). Each check gets the time its own tool is given, and a margin.
pytestmark = pytest.mark.timeout(660)


def _tool(name: str) -> str:
    """The console script installed beside this interpreter (the test extra installs them)."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name) or name


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_import_linter_contracts_hold():
    """lint-imports passes: the core never imports Qt, the database or the SDK; the adapters
    import only the ports and the leaf modules; front ends go through the composition root."""
    result = _run(_tool("lint-imports"), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_finds_no_type_errors_in_the_package():
    """mypy over yak/ (configured in pyproject.toml) reports no error."""
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "arguments",
    [("check", "yak", "tests", "benchmarks"), ("format", "--check", "yak", "tests", "benchmarks")],
    ids=["ruff-check", "ruff-format"],
)
def test_ruff_passes(arguments):
    """ruff's lint rules and its format hold over the package, the tests and the benchmarks."""
    result = _run(_tool("ruff"), *arguments)
    assert result.returncode == 0, result.stdout + result.stderr
