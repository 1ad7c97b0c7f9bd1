"""Workspace-confined tools: what they do inside, and that nothing outside is read or written."""

from __future__ import annotations

import asyncio
import os
import re

import pytest

from tests.support import until
from yak.agent.tools import SPECS, WorkspaceTools
from yak.limits import FILE_READ_BYTES, TOOL_OUTPUT_CHARS

SECRET = "TOP-SECRET-OUTSIDE"


@pytest.fixture
def layout(tmp_path):
    """A workspace folder beside an outside folder holding a secret, with symlinks pointing out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("def main():\n    return 'hello'\n")
    (ws / "README.md").write_text("# Demo\nhello world\n")
    (ws / "link_out.txt").symlink_to(outside / "secret.txt")
    (ws / "dir_out").symlink_to(outside, target_is_directory=True)
    (ws / "link_in.txt").symlink_to(ws / "README.md")
    return ws, outside


@pytest.fixture
def tools(layout):
    return WorkspaceTools(layout[0])


def snapshot(folder):
    """Every file under ``folder`` (not following symlinks) with its bytes."""
    result = {}
    for base, _dirs, files in os.walk(folder):
        for name in files:
            p = os.path.join(base, name)
            if not os.path.islink(p):
                with open(p, "rb") as handle:
                    result[os.path.relpath(p, folder)] = handle.read()
    return result


# --- confinement ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "../outside/secret.txt",
        "../anything",
        "src/../../outside/secret.txt",
        "..\\outside\\secret.txt",
        "link_out.txt",
        "dir_out/secret.txt",
        "C:\\Windows\\win.ini",
        "c:/x",
        "\\\\server\\share\\x",
        "//server/share/x",
    ],
)
def test_reads_outside_the_workspace_are_refused(tools, path):
    """``..``, symlinks pointing out, drive and UNC paths: an error the model sees, no content."""
    result = tools.run("read_file", {"path": path})
    assert not result.ok
    assert result.output.startswith("Error: Refused:")
    assert SECRET not in result.output
    assert result.summary.startswith("refused")


def test_absolute_paths_outside_are_refused_and_inside_allowed(tools, layout):
    """An absolute path works inside the root and is refused elsewhere."""
    ws, outside = layout
    refused = tools.run("read_file", {"path": str(outside / "secret.txt")})
    assert not refused.ok and SECRET not in refused.output
    allowed = tools.run("read_file", {"path": str(ws / "README.md")})
    assert allowed.ok and "hello world" in allowed.output


def test_a_symlink_pointing_inside_is_followed(tools):
    """Symlinks are fine while their target stays inside the workspace."""
    result = tools.run("read_file", {"path": "link_in.txt"})
    assert result.ok and "# Demo" in result.output


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write_file", {"path": "../anything", "content": "x"}),
        ("write_file", {"path": "../outside/secret.txt", "content": "pwned"}),
        ("write_file", {"path": "dir_out/new.txt", "content": "pwned"}),
        ("write_file", {"path": "link_out.txt", "content": "pwned"}),
        ("write_file", {"path": "C:\\evil.txt", "content": "pwned"}),
        ("edit_file", {"path": "link_out.txt", "old_string": SECRET, "new_string": "pwned"}),
        ("edit_file", {"path": "../outside/secret.txt", "old_string": SECRET, "new_string": "x"}),
    ],
)
def test_writes_outside_are_refused_and_nothing_outside_changes(tools, layout, tool, args):
    """No write or edit reaches outside: the outside folder is byte-for-byte unchanged and the
    parent folder gains nothing."""
    ws, outside = layout
    before_outside = snapshot(outside)
    before_parent = sorted(os.listdir(ws.parent))
    result = tools.run(tool, args)
    assert not result.ok and "Refused" in result.output
    assert snapshot(outside) == before_outside
    assert sorted(os.listdir(ws.parent)) == before_parent


def test_walking_tools_never_report_outside_entries(tools):
    """grep, glob and list do not read through symlinks that point out."""
    grep = tools.run("grep", {"pattern": "SECRET"})
    assert grep.ok and SECRET not in grep.output and grep.output == "(no matches)"
    globbed = tools.run("glob", {"pattern": "**/*.txt"})
    assert "secret" not in globbed.output and "link_out" not in globbed.output
    assert "link_in.txt" in globbed.output
    listing = tools.run("list_directory", {"path": "."})
    assert "dir_out -> (outside the workspace)" in listing.output
    inside_link = tools.run("list_directory", {"path": "dir_out"})
    assert not inside_link.ok and "secret" not in inside_link.output
    assert not tools.run("glob", {"pattern": "../outside/*"}).ok
    assert not tools.run("grep", {"pattern": "x", "path": "../outside"}).ok


# --- what the tools do ----------------------------------------------------------------------
def test_read_file_with_offset_limit_and_errors(tools, layout):
    """Lines by offset/limit with a hint for more; folders, missing and binary files explained."""
    ws, _ = layout
    (ws / "many.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    part = tools.run("read_file", {"path": "many.txt", "offset": 3, "limit": 2})
    assert part.output.startswith("line 3\nline 4\n")
    assert "[6 more lines; read again with offset=5]" in part.output
    assert part.summary == "read 2 lines"
    assert not tools.run("read_file", {"path": "src"}).ok
    assert "does not exist" in tools.run("read_file", {"path": "nope.txt"}).output
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert "binary file" in tools.run("read_file", {"path": "blob.bin"}).output
    bad = tools.run("read_file", {"path": "many.txt", "offset": 0})
    assert not bad.ok and "positive" in bad.output


def test_a_file_read_is_cut_with_a_marker_the_model_sees(tools, layout):
    """A file over the limits is never handed over whole: one long line comes back as its head
    and tail around ``[… N characters cut …]`` within ``TOOL_OUTPUT_CHARS``, and a file over
    ``FILE_READ_BYTES`` is read only that far, the result saying the rest was not read; a file
    within the limits comes back whole."""
    ws, _ = layout
    (ws / "one_line.txt").write_text("a" * 30_000 + "b" * 30_000)
    (ws / "huge.log").write_bytes(b"0123456789" * (FILE_READ_BYTES // 10 + 1))
    (ws / "small.txt").write_text("all of it\n")

    long_line = tools.run("read_file", {"path": "one_line.txt"})
    huge = tools.run("read_file", {"path": "huge.log"})

    assert long_line.ok and len(long_line.output) <= TOOL_OUTPUT_CHARS
    assert long_line.output.startswith("aaa") and long_line.output.endswith("bbb")
    assert re.search(r"\n\[… 10,0\d\d characters cut …\]\n", long_line.output)
    assert huge.ok and len(huge.output) <= TOOL_OUTPUT_CHARS
    assert huge.output.endswith(
        f"[huge.log is larger than the {FILE_READ_BYTES:,} bytes read_file reads; the rest of it "
        "was not read (grep or a command can search it)]"
    )
    assert "characters cut …]" in huge.output
    assert tools.run("read_file", {"path": "small.txt"}).output == "all of it\n"


def test_list_glob_grep(tools):
    """Listing marks folders; glob finds by pattern; grep reports path:line: text."""
    listing = tools.run("list_directory", {})
    assert listing.output.splitlines()[:2] == ["README.md", "dir_out -> (outside the workspace)"]
    assert "src/" in listing.output.splitlines()
    assert tools.run("glob", {"pattern": "**/*.py"}).output == "src/app.py"
    grep = tools.run("grep", {"pattern": "hel+o", "include": "*.py"})
    assert grep.output == "src/app.py:2:     return 'hello'"  # indentation kept for edits
    assert (
        "README.md:2: hello world"
        in tools.run("grep", {"pattern": "HELLO", "ignore_case": True}).output
    )
    bad = tools.run("grep", {"pattern": "("})
    assert not bad.ok and "regular expression" in bad.output


def test_write_file_creates_folders_and_overwrites(tools, layout):
    """write_file creates parents, writes exactly the content, and reports what it did."""
    ws, _ = layout
    created = tools.run("write_file", {"path": "docs/notes.md", "content": "a\r\nb\n"})
    assert created.ok and created.summary == "created docs/notes.md (2 lines)"
    assert (ws / "docs" / "notes.md").read_bytes() == b"a\r\nb\n"
    again = tools.run("write_file", {"path": "docs/notes.md", "content": "c"})
    assert again.summary.startswith("overwrote") and (ws / "docs/notes.md").read_text() == "c"
    assert not tools.run("write_file", {"path": "src", "content": "x"}).ok


def test_edit_file_needs_exactly_one_match(tools, layout):
    """One match is replaced; zero or several leave the file byte-for-byte unchanged."""
    ws, _ = layout
    target = ws / "src" / "app.py"
    original = target.read_bytes()
    missing = tools.run(
        "edit_file", {"path": "src/app.py", "old_string": "goodbye", "new_string": "x"}
    )
    assert not missing.ok and "not found" in missing.output
    assert target.read_bytes() == original
    (ws / "twice.txt").write_text("x = 1\nx = 1\n")
    twice = tools.run(
        "edit_file", {"path": "twice.txt", "old_string": "x = 1", "new_string": "x = 2"}
    )
    assert not twice.ok and "occurs 2 times" in twice.output
    assert (ws / "twice.txt").read_text() == "x = 1\nx = 1\n"
    done = tools.run(
        "edit_file", {"path": "src/app.py", "old_string": "'hello'", "new_string": "'bye'"}
    )
    assert done.ok and done.summary == "edited src/app.py"
    assert target.read_text() == "def main():\n    return 'bye'\n"


def test_run_command_in_the_workspace_with_exit_code(tools, layout):
    """Commands run in the workspace root; the model sees the exit code and output."""
    ws, _ = layout
    result = tools.run("run_command", {"command": "pwd && ls src && exit 3"})
    assert not result.ok
    label = tools.sandbox.label
    assert result.output.splitlines() == [f"Exit code 3 ({label}).", str(ws), "app.py"]
    assert result.summary == f"exit code 3, {label}"
    assert tools.run("run_command", {"command": "true"}).output == (
        f"Exit code 0 ({label}).\n(no output)"
    )


def test_run_command_never_sees_the_api_key(tools, monkeypatch):
    """The key cannot leak into a tool result (and so into the database)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-very-secret")
    monkeypatch.setenv("YAK_PROBE", "visible")
    result = tools.run("run_command", {"command": "env"})
    assert "YAK_PROBE=visible" in result.output
    assert "sk-very-secret" not in result.output


def test_run_command_timeout_and_output_cap(layout):
    """A command over its timeout is stopped and reported; long output keeps head and tail."""
    tools = WorkspaceTools(layout[0], command_output_chars=100)
    slow = tools.run("run_command", {"command": "sleep 30", "timeout_s": 0.3})
    assert not slow.ok and slow.output.startswith("Timed out after 0.3 s")
    loud = tools.run("run_command", {"command": "seq 1 5000"})
    lines = loud.output.splitlines()
    assert lines[1] == "1" and lines[-1] == "5000"
    assert "bytes cut" in loud.output and len(loud.output) < 200


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads process state from /proc")
def test_stop_kills_a_running_command(layout, tmp_path):
    """Cancelling the call (Stop) kills the command and what it started."""
    tools = WorkspaceTools(layout[0])
    pidfile = layout[0] / "pid"  # inside: the sandbox lets a command write only there

    async def go():
        task = asyncio.ensure_future(
            tools.execute("run_command", {"command": f"sleep 60 & echo $! > {pidfile}; wait"})
        )
        await until(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the pid file")
        pid = int(pidfile.read_text())
        assert _alive(pid)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await until(lambda: not _alive(pid), what="the command to die")

    asyncio.run(go())


def test_a_vanished_workspace_is_an_error_for_every_tool(layout):
    """The folder was deleted while the app was open: tools answer errors, never crash."""
    import shutil

    ws, _ = layout
    tools = WorkspaceTools(ws)
    shutil.rmtree(ws)
    assert "could not start" in tools.run("run_command", {"command": "true"}).output
    assert not tools.run("list_directory", {}).ok
    assert not tools.run("write_file", {"path": "a.txt", "content": "x"}).ok
    assert not ws.exists()


def test_bad_calls_are_errors_not_exceptions(tools):
    """Unknown tools, non-object input and missing arguments come back as errors."""
    assert "no tool named" in tools.run("rm_rf", {}).output
    assert not tools.run("read_file", "README.md").ok
    assert not tools.run("read_file", {}).ok
    assert not tools.run("run_command", {"command": " "}).ok


# --- registry -------------------------------------------------------------------------------
def test_definitions_and_approval_flags():
    """Seven tools with JSON schemas; exactly write, edit and command need approval."""
    names = [d["name"] for d in WorkspaceTools.definitions()]
    assert names == [
        "read_file",
        "list_directory",
        "glob",
        "grep",
        "write_file",
        "edit_file",
        "run_command",
    ]
    assert all(d["input_schema"]["type"] == "object" for d in WorkspaceTools.definitions())
    assert {n for n in SPECS if WorkspaceTools.requires_approval(n)} == {
        "write_file",
        "edit_file",
        "run_command",
    }
    assert not WorkspaceTools.requires_approval("unknown")


def test_approval_detail_shows_the_change(tools):
    """The user approves a diff for edits and overwrites, the text for a new file, the command."""
    edit = tools.approval_detail(
        "edit_file", {"path": "src/app.py", "old_string": "'hello'", "new_string": "'bye'"}
    )
    assert "-    return 'hello'" in edit and "+    return 'bye'" in edit
    new = tools.approval_detail("write_file", {"path": "n.txt", "content": "fresh"})
    assert new == "New file n.txt:\nfresh"
    over = tools.approval_detail("write_file", {"path": "README.md", "content": "# Demo\n"})
    assert "-hello world" in over
    assert tools.approval_detail("run_command", {"command": "make test"}).startswith(
        "$ make test\n(in "
    )
    assert "outside the workspace" in tools.approval_detail(
        "write_file", {"path": "../x", "content": ""}
    )
