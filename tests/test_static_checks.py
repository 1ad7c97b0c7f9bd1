"""The code's static checks run with the tests, so CI runs them: the layer contracts of
docs/architecture.md (import-linter), the type check (mypy), the lint rules and the format
(ruff), each failing with the tool's own report; and three rules of the code's shape (no private
name imported across modules, one line diff, the memory package's top level)."""

from __future__ import annotations

import ast
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


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted((ROOT / "yak").rglob("*.py"))]


def test_no_module_imports_a_private_name_of_another():
    """No module of yak/ imports a name another module keeps private (``_x``): a name shared
    between modules is public, with a docstring (docs/architecture.md, "Packages")."""
    found = [
        f"{path.relative_to(ROOT)}: from {node.module} import {alias.name}"
        for path, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("yak")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert found == []


def test_line_diffs_are_computed_only_in_linediff():
    """Only ``yak/linediff.py`` diffs lines (``difflib``'s matcher and diffs); everything else
    calls it. A migration keeps its own code, as it ran."""
    diffs = {"SequenceMatcher", "unified_diff", "ndiff", "context_diff", "Differ"}
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, tree in _modules()
        if path.name != "linediff.py" and "migrations" not in path.parts
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in diffs)
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "difflib"
            and any(alias.name in diffs for alias in node.names)
        )
    ]
    assert found == []


def test_the_memory_package_keeps_at_most_eight_modules_at_its_top_level():
    """``yak/memory/`` holds the document's own modules at its top level and one sub-package per
    concern beside them (docs/architecture.md): at most eight modules, ``__init__`` counted."""
    top = sorted(path.name for path in (ROOT / "yak" / "memory").glob("*.py"))
    assert len(top) <= 8, top
