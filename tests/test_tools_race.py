"""Confinement under a race: names inside the workspace flip between a real folder or file and a
link pointing outside thousands of times a second while the tools read and write through them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yak.agent.tools import WorkspaceTools

SECRET = "OUTSIDE-SECRET"
INSIDE = "inside text"

FLIPPER = r"""
import os, shutil, sys
ws, outside = sys.argv[1], sys.argv[2]
j = lambda *p: os.path.join(ws, *p)


def retry(step):
    # write_file creates a missing "d" as a folder of its own: clear it and try again
    while True:
        try:
            return step()
        except OSError:
            if not os.path.islink(j("d")):
                shutil.rmtree(j("d"), ignore_errors=True)


flips = 0
while not os.path.exists(j("STOP")):
    # "d": a real folder inside <-> a link to the outside folder (never both at once)
    os.rename(j("d"), j("d_store"))
    retry(lambda: os.symlink(outside, j("d")))
    os.unlink(j("d"))
    retry(lambda: os.rename(j("d_store"), j("d")))
    # "f": a real file inside <-> a link to the outside file, each swapped in atomically
    os.symlink(os.path.join(outside, "secret.txt"), j("f.tmp"))
    os.replace(j("f.tmp"), j("f"))
    with open(j("f.new"), "w") as handle:
        handle.write("inside text")
    os.replace(j("f.new"), j("f"))
    flips += 4
    if flips == 4:
        print("flipping", flush=True)
print(flips)
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` with its bytes (links not followed)."""
    found = {}
    for base, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                found[os.path.relpath(path, folder)] = Path(path).read_bytes()
    return found


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_flipping_link_never_lets_a_read_or_write_out(tmp_path):
    """1,000 reads and 1,000 writes through names that another process flips between a real
    folder or file inside and a link outside: no read returns the outside file, no write lands
    outside (the outside folder is byte-identical and gains no file), and a read either returns
    the inside text or fails; edits, grep, list and glob never touch or show an outside file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "only.txt").write_text("outside-only")
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "secret.txt").write_text(INSIDE)
    (ws / "f").write_text(INSIDE)
    before = snapshot(outside)
    tools = WorkspaceTools(ws)

    flipper = subprocess.Popen(
        [sys.executable, "-c", FLIPPER, str(ws), str(outside)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert flipper.stdout is not None
        assert flipper.stdout.readline() == "flipping\n"  # it has flipped both once
        outcomes: dict[str, int] = {"ok": 0, "refused": 0, "other": 0}
        for i in range(1000):
            path = "d/secret.txt" if i % 2 else "f"
            result = tools.run("read_file", {"path": path})
            assert SECRET not in result.output, f"read {i} returned the outside file"
            assert result.ok is (INSIDE in result.output), result.output
            outcomes[
                "ok" if result.ok else "refused" if "Refused" in result.output else "other"
            ] += 1
        for i in range(1000):
            path = f"d/new{i}.txt" if i % 2 else "f"
            result = tools.run("write_file", {"path": path, "content": f"pwned {i}"})
            outcomes[
                "ok" if result.ok else "refused" if "Refused" in result.output else "other"
            ] += 1
        for i in range(200):
            edit = tools.run("edit_file", {"path": "f", "old_string": "SECRET", "new_string": "x"})
            assert not edit.ok
            grep = tools.run(
                "grep", {"pattern": "SECRET|outside-only", "path": "d" if i % 2 else "."}
            )
            assert SECRET not in grep.output and "outside-only" not in grep.output
            listing = tools.run("list_directory", {"path": "d"})
            globbed = tools.run("glob", {"pattern": "d/*"})
            assert "only.txt" not in listing.output + globbed.output
    finally:
        (ws / "STOP").write_text("")
        out, _ = flipper.communicate(timeout=30)
    flips = int(out)
    assert flips > 1000, "the link did not flip often enough for the test to mean anything"
    assert snapshot(outside) == before
    assert outcomes["ok"] > 0 and outcomes["refused"] + outcomes["other"] > 0, outcomes
