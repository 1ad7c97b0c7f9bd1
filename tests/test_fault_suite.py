"""The fault suite's short run (``python -m benchmarks.faults --quick``) as CI runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# The quick suite is given 600 s of its own; the suite-wide 120 s does not fit it under load.
@pytest.mark.timeout(660)
def test_the_quick_fault_suite_breaks_no_invariant():
    """kill -9 during set, refresh and import, racing writers, every provider fault the fake API
    can produce, bad input and escape attempts: the table reports no broken invariant and no
    acknowledged write lost, and the run exits 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "YAK_"))}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.faults", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 0, done.stdout[-3000:]
    assert "\n0 invariants broken, 0 acknowledged writes lost (" in done.stdout
    table = done.stdout.split("Provider faults (outcome of the refresh):")[0]
    for part in (
        "kill -9 during memory set",
        "kill -9 during refresh",
        "kill -9 during import",
        "racing writers",
        "provider faults during a refresh",
        "bad input",
        "escape attempts",
    ):
        assert f"\n{part} " in table
