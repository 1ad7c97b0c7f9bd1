"""``yak memory …`` as a user runs it: bytes on stdout, files written, exit codes, one-line
errors.

The contract flows run ``python -m yak`` as a subprocess (about half a second each, so they are
few and each checks a whole flow); the remaining user mistakes call ``yak.cli.main`` in process.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import replace

import pytest

from tests.support.cli import yak
from yak.bootstrap import open_core
from yak.cli import main
from yak.domain import RefreshOutcome, RefreshStatus, TokenUsage

# Run against SQLite, and against PostgreSQL when a test server is configured.
pytestmark = pytest.mark.databases


def one_error_line(result):
    """stderr is exactly one ``yak: …`` line and there is no traceback anywhere."""
    err = result.stderr.decode("utf-8")
    assert "Traceback" not in err + result.stdout.decode("utf-8", "replace")
    assert err.count("\n") == 1 and err.startswith("yak: "), err
    return err.strip()


@pytest.fixture
def folder(tmp_path):
    made = tmp_path / "project"
    made.mkdir()
    return made


@pytest.fixture
def lines150(tmp_path):
    path = tmp_path / "memory150.txt"
    path.write_bytes("".join(f"- note {i}: café ✓\n" for i in range(1, 151)).encode("utf-8"))
    return path


def test_set_150_lines_then_show_and_export_the_same_bytes(data_dir, folder, lines150, tmp_path):
    """A 150-line file set from the CLI shows as 150 lines; ``show`` and ``export`` give back
    exactly its bytes (also through a symlink spelling); export refuses to overwrite without
    ``--force``."""
    expected = lines150.read_bytes()
    result = yak("memory", "set", "-w", folder, "--file", lines150, data_dir=data_dir)
    assert result.returncode == 0, result.stderr

    shown = json.loads(yak("memory", "show", "-w", folder, "--json", data_dir=data_dir).stdout)
    assert (shown["lines"], shown["version"], shown["workspace"]) == (150, 1, str(folder))
    assert shown["content"].encode("utf-8") == expected
    assert shown["tokens"] == -(-len(shown["content"]) // 4)  # an estimate: characters / 4
    assert set(shown) == {
        "workspace",
        "workspace_id",
        "version",
        "lines",
        "chars",
        "tokens",
        "flags",
        "updated_at",
        "content",
        "last_refresh",
        "proposals",
        "mode",
        "memory_enabled",
        "enclosing",
        "renamed_from",
        "linked_to",
        "worktree_main",
    }
    assert (shown["last_refresh"], shown["proposals"], shown["mode"]) == (None, 0, "auto")
    assert shown["memory_enabled"] is True
    assert (shown["enclosing"], shown["renamed_from"]) == (None, None)

    link = tmp_path / "link"
    link.symlink_to(folder, target_is_directory=True)
    assert yak("memory", "show", "-w", f"{link}/", data_dir=data_dir).stdout == expected

    out = tmp_path / "exported.txt"
    assert yak("memory", "export", "-w", folder, "-o", out, data_dir=data_dir).returncode == 0
    assert out.read_bytes() == expected

    out.write_bytes(b"do not lose me\n")
    refused = yak("memory", "export", "-w", folder, "-o", out, data_dir=data_dir)
    assert refused.returncode == 2
    assert "already exists; use --force" in one_error_line(refused)
    assert out.read_bytes() == b"do not lose me\n"
    for force in ([], ["--force"]):  # a folder: --force would not help, so it is not offered
        into_folder = yak(
            "memory", "export", "-w", folder, "-o", tmp_path, *force, data_dir=data_dir
        )
        assert into_folder.returncode == 2
        assert one_error_line(into_folder) == f"yak: {tmp_path} is a folder; give a file name"
    forced = yak(
        "--data-dir",
        data_dir,
        "memory",
        "export",
        "-w",
        folder,
        "-o",
        out,
        "--force",
        "--format",
        "markdown",
        data_dir=data_dir,
    )
    assert forced.returncode == 0, forced.stderr
    assert out.read_bytes() == b"# Yak memory: project\n\n" + expected


def test_set_from_stdin_and_the_guards_leave_the_document_unchanged(data_dir, folder):
    """stdin sets the document; a stale ``--expect-version`` exits 5 and a document over the
    ceiling exits 3, both with one JSON document on stdout, and the stored bytes do not change."""
    result = yak(
        "memory", "set", "-w", folder, "--json", stdin=b"first\r\nsecond\r\n", data_dir=data_dir
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["version"] == 1

    stale = yak(
        "memory",
        "set",
        "-w",
        folder,
        "--expect-version",
        "0",
        "--json",
        stdin=b"mine\n",
        data_dir=data_dir,
    )
    assert stale.returncode == 5
    assert "the memory changed (version 1) since version 0" in one_error_line(stale).lower()
    assert json.loads(stale.stdout)["exit_code"] == 5

    over = yak("memory", "set", "-w", folder, "--json", stdin=b"x\n" * 212, data_dir=data_dir)
    assert over.returncode == 3
    assert "212 lines (limit 200)" in one_error_line(over)
    assert json.loads(over.stdout)["status"] == "refused_ceiling"

    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b"first\nsecond\n"
    fresh = yak(
        "memory",
        "set",
        "-w",
        folder,
        "--expect-version",
        "1",
        "--json",
        stdin=b"third\n",
        data_dir=data_dir,
    )
    assert (fresh.returncode, json.loads(fresh.stdout)["version"]) == (0, 2)


def test_import_history_restore_delete_and_list(data_dir, folder, tmp_path):
    """Import a UTF-16 file, restore an older revision by the id ``history`` gives, delete with
    ``--yes`` and restore again; ``list --json`` shows the workspace."""
    assert (
        yak("memory", "set", "-w", folder, stdin=b"original\n", data_dir=data_dir).returncode == 0
    )
    utf16 = tmp_path / "notes-utf16.txt"
    utf16.write_bytes("imported — ünïcode\r\nline 2\r\n".encode("utf-16"))
    assert yak("memory", "import", utf16, "-w", folder, data_dir=data_dir).returncode == 0
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == (
        "imported — ünïcode\nline 2\n".encode()
    )

    history = json.loads(yak("memory", "history", "-w", folder, "--json", data_dir=data_dir).stdout)
    assert [(r["version"], r["source"], r["lines"], r["added"], r["removed"]) for r in history] == [
        (2, "import", 2, 2, 1),
        (1, "hand", 1, 1, 0),
    ]
    assert set(history[0]) == {
        "id",
        "version",
        "source",
        "lines",
        "chars",
        "added",
        "removed",
        "flags",
        "created_at",
    }
    assert (
        yak("memory", "restore", history[1]["id"], "-w", folder, data_dir=data_dir).returncode == 0
    )
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b"original\n"

    refused = yak("memory", "delete", "-w", folder, data_dir=data_dir)  # stdin is not a terminal
    assert refused.returncode == 2
    assert "refusing to delete without --yes" in one_error_line(refused)
    assert yak("memory", "delete", "-w", folder, "--yes", data_dir=data_dir).returncode == 0
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b""
    history = json.loads(yak("memory", "history", "-w", folder, "--json", data_dir=data_dir).stdout)
    assert history[0]["source"] == "clear"
    assert (
        yak("memory", "restore", history[1]["id"], "-w", folder, data_dir=data_dir).returncode == 0
    )
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b"original\n"

    listed = json.loads(yak("memory", "list", "--json", data_dir=data_dir).stdout)
    assert [(d["workspace"], d["version"], d["lines"], d["orphaned"]) for d in listed] == [
        (str(folder), 5, 1, False)
    ]


def test_a_missing_folder_is_one_line_and_json_stays_json(data_dir, tmp_path):
    """``-w`` naming no folder: exit 2, one stderr line, no traceback, and with ``--json`` a
    JSON document on stdout."""
    missing = tmp_path / "no-such-folder"
    result = yak("memory", "show", "-w", missing, "--json", data_dir=data_dir)
    assert result.returncode == 2
    assert one_error_line(result) == f"yak: no such folder: {missing}"
    assert json.loads(result.stdout) == {
        "error": f"no such folder: {missing}",
        "exit_code": 2,
        "status": None,
    }
    bad_option = yak("memory", "list", "--json", "--bogus", data_dir=data_dir)
    assert bad_option.returncode == 2
    assert json.loads(bad_option.stdout)["exit_code"] == 2
    one_error_line(bad_option)


# --- in process: the remaining user mistakes, edit, delete on a terminal ----------------------
def run(capsysbinary, *argv, stdin=None):
    """``yak.cli.main(argv)`` in this process; returns (exit code, stdout bytes, stderr text)."""
    if stdin is not None:
        sys.stdin = stdin
    try:
        code = main([str(a) for a in argv])
    finally:
        sys.stdin = sys.__stdin__
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode("utf-8")


class FakeTerminal(io.TextIOWrapper):
    """stdin that says it is a terminal and answers ``answer``."""

    def __init__(self, answer: str) -> None:
        super().__init__(io.BytesIO(answer.encode()), encoding="utf-8")

    def isatty(self) -> bool:
        return True


def with_core(data_dir, work):
    """Run ``work(core)`` against a core on ``data_dir`` (as the app would), then close it."""

    async def run_it():
        core = open_core(data_dir)
        try:
            return await work(core)
        finally:
            await core.aclose()

    return asyncio.run(run_it())


def stored(data_dir, folder):
    """The stored bytes of ``folder``'s memory document (``b""`` when Yak never stored it)."""

    async def read(core):
        workspace = await core.workspaces.find(str(folder))
        return (await core.memory.read(workspace.id)).content.encode("utf-8") if workspace else b""

    return with_core(data_dir, read)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["memory", "import", "{tmp}/missing.txt", "-w", "{folder}"], "no such file"),
        (["memory", "import", "{tmp}/binary.bin", "-w", "{folder}"], "is not UTF-8/UTF-16/UTF-32"),
        (["memory", "set", "--file", "{tmp}/latin1.txt", "-w", "{folder}"], "is not UTF-8 text"),
        (["memory", "restore", "NOSUCHREVISION", "-w", "{folder}"], "has no revision"),
        (["memory", "restore", "01J", "-w", "{folder}"], "at least 6 characters"),
        (["memory", "restore", "7", "-w", "{folder}"], "has no version 7"),
        (
            ["memory", "set", "--expect-version", "-1", "-w", "{folder}"],
            "--expect-version must be 0 or more",
        ),
        (
            ["memory", "show", "--reply", "01NOSUCHATTEMPT", "-w", "{folder}"],
            "has no refresh attempt '01NOSUCHATTEMPT'",
        ),
        (["memory", "import", "-", "-w", "{folder}"], "stdin is not UTF-8/UTF-16/UTF-32"),
        (["memory", "show", "-w", "{tmp}/binary.bin"], "binary.bin is a file, not a folder"),
        (["memory", "set", "-w", "{tmp}/binary.bin"], "binary.bin is a file, not a folder"),
        (["memory", "refresh", "-w", "{tmp}/binary.bin"], "binary.bin is a file, not a folder"),
        (["memory", "export", "--format", "pdf", "-w", "{folder}"], "invalid choice: 'pdf'"),
        (["memory", "set", "--expect-version", "two", "-w", "{folder}"], "invalid int value"),
        (
            ["memory", "export", "-o", "{tmp}/no/such/dir/out.txt", "-w", "{folder}"],
            "its folder does not exist",
        ),
    ],
)
def test_user_mistakes_are_one_line_with_exit_2_and_change_nothing(
    data_dir, folder, tmp_path, capsysbinary, argv, message
):
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    assert (
        run(
            capsysbinary,
            "memory",
            "set",
            "-w",
            folder,
            stdin=io.TextIOWrapper(io.BytesIO(b"keep\n")),
        )[0]
        == 0
    )
    argv = [a.format(tmp=tmp_path, folder=folder) for a in argv]
    binary = (tmp_path / "binary.bin").read_bytes()
    code, _, err = run(capsysbinary, *argv, stdin=io.TextIOWrapper(io.BytesIO(binary)))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("yak: ") and message in err, err
    assert "Traceback" not in err
    assert stored(data_dir, folder) == b"keep\n"


@pytest.mark.parametrize(
    "bad, line",
    [
        ("{tmp}/no-such-folder", "yak: no such folder: {tmp}/no-such-folder\n"),
        ("{tmp}/notes.txt", "yak: {tmp}/notes.txt is a file, not a folder\n"),
    ],
)
def test_a_bad_workspace_is_the_same_line_in_every_command(
    tmp_path, capsysbinary, monkeypatch, bad, line
):
    """Every command that takes ``-w`` refuses the same bad folder with the same line (exit 2)
    and prints nothing on stdout, whether it reads, writes, refreshes or asks."""
    (tmp_path / "notes.txt").write_bytes(b"a note\n")
    monkeypatch.setenv("EDITOR", "true")  # never started: the folder is refused first
    bad, line = bad.format(tmp=tmp_path), line.format(tmp=tmp_path)
    for argv in (
        ["memory", "show"],
        ["memory", "show", "--reply", "01ABCDEF"],
        ["memory", "history"],
        ["memory", "history", "--refreshes"],
        ["memory", "export"],
        ["memory", "set"],
        ["memory", "edit"],
        ["memory", "import", tmp_path / "notes.txt"],
        ["memory", "restore", "1"],
        ["memory", "delete", "--yes"],
        ["memory", "refresh"],
        ["ask", "hi"],
    ):
        code, out, err = run(
            capsysbinary, *argv, "-w", bad, stdin=io.TextIOWrapper(io.BytesIO(b"text\n"))
        )
        assert (code, out, err) == (2, b"", line), argv


@pytest.mark.sqlite_only  # writes into the SQLite file
def test_a_database_from_a_newer_yak_is_one_line_exit_1(data_dir, folder, capsysbinary):
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"x\n")))
    with sqlite3.connect(data_dir / "yak.db") as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    conn.close()
    code, out, err = run(capsysbinary, "memory", "list", "--json")
    assert code == 1
    assert "written by a newer version of Yak" in err and err.count("\n") == 1
    assert json.loads(out)["exit_code"] == 1


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path, folder, capsysbinary):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    code, _, err = run(capsysbinary, "--data-dir", not_a_folder, "memory", "show", "-w", folder)
    assert code == 1 and err.startswith("yak: cannot use data directory") and err.count("\n") == 1


def test_show_of_an_orphaned_workspace_still_works_but_writes_need_the_folder(
    data_dir, folder, capsysbinary
):
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"old\n")))
    folder.rmdir()
    assert run(capsysbinary, "memory", "show", "-w", folder)[:2] == (0, b"old\n")
    assert run(capsysbinary, "memory", "history", "-w", folder, "--json")[0] == 0
    code, _, err = run(
        capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"new\n"))
    )
    assert code == 2 and "no such folder" in err
    code, out, _ = run(capsysbinary, "memory", "list")
    assert b"(orphaned: folder missing)" in out


def test_delete_on_a_terminal_asks_first(data_dir, folder, capsysbinary):
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"x\n")))
    code, _, err = run(capsysbinary, "memory", "delete", "-w", folder, stdin=FakeTerminal("n\n"))
    assert code == 0 and "[y/N]" in err
    assert stored(data_dir, folder) == b"x\n"
    code, out, _ = run(capsysbinary, "memory", "delete", "-w", folder, stdin=FakeTerminal("y\n"))
    assert code == 0 and b"yak memory restore " in out
    assert stored(data_dir, folder) == b""


# --- edit -----------------------------------------------------------------------------------
@pytest.fixture
def editor(tmp_path, monkeypatch):
    """A real editor program: it writes ``$FAKE_EDIT_TEXT`` (when set) into the file and, when
    ``$FAKE_EDIT_CONCURRENT`` is set, changes the memory through the CLI meanwhile."""
    script = tmp_path / "fake_editor.py"
    script.write_text(
        textwrap.dedent("""
        import os, subprocess, sys
        path = sys.argv[-1]
        if os.environ.get("FAKE_EDIT_CONCURRENT"):
            subprocess.run([sys.executable, "-m", "yak", "memory", "set", "-w",
                            os.environ["FAKE_EDIT_CONCURRENT"]], input=b"someone else\\n",
                           check=True)
        if "FAKE_EDIT_TEXT" in os.environ:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(os.environ["FAKE_EDIT_TEXT"])
    """)
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    return monkeypatch


def _kept_file(err):
    return err.rsplit("Your text is kept in ", 1)[1].strip()


def test_edit_saves_what_the_editor_wrote(data_dir, folder, capsysbinary, editor):
    editor.setenv("FAKE_EDIT_TEXT", "edited\r\nby hand\r\n")
    code, out, err = run(capsysbinary, "memory", "edit", "-w", folder)
    assert code == 0, err
    assert stored(data_dir, folder) == b"edited\nby hand\n"
    editor.delenv("FAKE_EDIT_TEXT")  # the editor leaves the file as it was
    code, out, _ = run(capsysbinary, "memory", "edit", "-w", folder)
    assert (code, out) == (0, b"No changes.\n")


def test_edit_over_the_ceiling_keeps_the_text_and_the_document(
    data_dir, folder, capsysbinary, editor
):
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"v1\n")))
    typed = "typed line\n" * 230
    editor.setenv("FAKE_EDIT_TEXT", typed)
    code, _, err = run(capsysbinary, "memory", "edit", "-w", folder)
    assert code == 3 and "230 lines (limit 200)" in err and err.count("\n") == 1
    kept = _kept_file(err)
    with open(kept, encoding="utf-8") as f:
        assert f.read() == typed
    os.unlink(kept)
    assert stored(data_dir, folder) == b"v1\n"


def test_edit_refuses_to_overwrite_a_change_made_meanwhile(data_dir, folder, capsysbinary, editor):
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"v1\n")))
    editor.setenv("FAKE_EDIT_TEXT", "mine\n")
    editor.setenv("FAKE_EDIT_CONCURRENT", str(folder))
    code, _, err = run(capsysbinary, "memory", "edit", "-w", folder)
    assert code == 5 and "changed (version 2) since version 1" in err
    kept = _kept_file(err)
    with open(kept, encoding="utf-8") as f:
        assert f.read() == "mine\n"
    os.unlink(kept)
    assert stored(data_dir, folder) == b"someone else\n"


# --- what a newcomer ran into ---------------------------------------------------------------
def set_text(capsysbinary, folder, data: bytes, *extra):
    return run(
        capsysbinary,
        "memory",
        "set",
        "-w",
        folder,
        *extra,
        stdin=io.TextIOWrapper(io.BytesIO(data)),
    )


def test_expect_version_below_zero_or_beyond_the_memory_is_refused_plainly(
    data_dir, folder, capsysbinary
):
    """``--expect-version -1`` is bad usage (exit 2); a version the memory never reached is a
    conflict (exit 5) that says which version exists; the right version saves (exit 0)."""
    for text in (b"a\n", b"b\n", b"c\n"):
        assert set_text(capsysbinary, folder, text)[0] == 0

    code, out, err = set_text(capsysbinary, folder, b"mine\n", "--expect-version", "-1", "--json")
    assert (code, err) == (2, "yak: --expect-version must be 0 or more\n")
    assert json.loads(out)["exit_code"] == 2

    code, out, err = set_text(capsysbinary, folder, b"mine\n", "--expect-version", "999")
    assert code == 5 and err.count("\n") == 1
    assert "version 999 does not exist; the memory is at version 3" in err.lower(), err
    assert stored(data_dir, folder) == b"c\n"

    code, out, _ = set_text(capsysbinary, folder, b"mine\n", "--expect-version", "3")
    assert (code, out) == (0, f"Saved version 4 (1 line) for {folder}.\n".encode())
    assert stored(data_dir, folder) == b"mine\n"


def test_edit_without_an_editor_or_a_terminal_is_refused_before_anything_starts(
    data_dir, folder, capsysbinary, monkeypatch, tmp_path
):
    """No $VISUAL/$EDITOR and no terminal: exit 2 with one line, no editor is started and no
    temporary copy is left; the document is unchanged."""
    set_text(capsysbinary, folder, b"kept\n")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    started = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: started.append(a))
    code, out, err = run(
        capsysbinary, "memory", "edit", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b""))
    )
    assert (code, out) == (2, b"")
    assert err == "yak: no editor: set $VISUAL or $EDITOR, or use yak memory set\n"
    assert started == [] and list((tmp_path / "tmp").iterdir()) == []
    assert stored(data_dir, folder) == b"kept\n"


def test_edit_with_an_editor_variable_but_no_terminal_still_runs_it(
    data_dir, folder, capsysbinary, editor
):
    """Beside the refusal: $EDITOR set, stdin not a terminal, the editor runs and is saved."""
    editor.setenv("FAKE_EDIT_TEXT", "one line\n")
    code, out, err = run(
        capsysbinary, "memory", "edit", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b""))
    )
    assert (code, out) == (0, f"Saved version 1 (1 line) for {folder}.\n".encode()), err


def record(data_dir, folder, *outcomes):
    """Store refresh attempts for ``folder`` as the refresher would; returns their ids."""

    async def store(core):
        workspace = await core.workspaces.for_write(str(folder))
        return [
            (
                await core.memory.record_attempt(
                    replace(o, workspace_id=workspace.id), base_version=b
                )
            ).id
            for o, b in outcomes
        ]

    return with_core(data_dir, store)


def test_refresh_attempts_are_listed_and_a_refused_reply_is_printed_exactly(
    data_dir, folder, capsysbinary, tmp_path
):
    """``history --refreshes`` lists attempts newest first (text and ``--json``), each with the
    rewrite form its reply was read in;
    ``show --reply ID`` prints the kept reply byte for byte, so it can be trimmed and saved
    with ``set --file``; an attempt that kept no reply is one line, exit 2. Plain ``history``
    keeps its contract."""
    set_text(capsysbinary, folder, b"one\ntwo\n")
    reply = "".join(f"- fact {i}: naïve café ✓\n" for i in range(240))
    failed = RefreshOutcome(
        status=RefreshStatus.FAILED,
        reason="rate limited (HTTP 429)",
        workspace_id="",
        version=1,
        lines=2,
        model="claude-haiku-4-5",
        duration_s=0.25,
    )
    refused = RefreshOutcome(
        status=RefreshStatus.REFUSED_CEILING,
        reason="the reply has 240 lines; the limit is 200",
        workspace_id="",
        version=1,
        lines=2,
        reply=reply,
        model="claude-haiku-4-5",
        usage=TokenUsage(1234, 5678),
        duration_s=3.14159,
        flags=("tool_rejected", "form:edits", "condense_retry"),
    )
    failed_id, refused_id = record(data_dir, folder, (failed, 1), (refused, 1))

    code, out, _ = run(capsysbinary, "memory", "history", "-w", folder, "--refreshes", "--json")
    listed = json.loads(out)
    assert code == 0 and [a["id"] for a in listed] == [refused_id, failed_id]
    assert listed[0] == {
        "id": refused_id,
        "status": "refused_ceiling",
        "waited_for_review": False,
        "reason": "the reply has 240 lines; the limit is 200",
        "base_version": 1,
        "result_version": None,
        "model": "claude-haiku-4-5",
        "input_tokens": 1234,
        "output_tokens": 5678,
        "duration_s": 3.142,
        "flags": ["tool_rejected", "form:edits", "condense_retry"],
        "forms": ["edits"],
        "created_at": listed[0]["created_at"],
        "has_reply": True,
        "added": 0,
        "removed": 0,
        "proposal": None,
        "superseded_by": None,
    }
    assert listed[0]["created_at"].endswith("Z") and listed[1]["has_reply"] is False
    assert listed[1]["forms"] == []  # no reply was read

    code, out, _ = run(capsysbinary, "memory", "history", "-w", folder, "--refreshes")
    table = out.decode().splitlines()
    assert code == 0 and table[0].split() == [
        "ID",
        "CREATED",
        "STATUS",
        "REPLY",
        "MODEL",
        "FORM",
        "TOKENS",
        "REASON",
    ]
    assert table[1].startswith(refused_id) and "refused: too long" in table[1]
    assert "claude-haiku-4-5  edits (tool rejected)  1,234 in" in table[1]
    assert "claude-haiku-4-5  -  " in table[2]  # a failed call read no reply
    assert "240 lines" in table[1] and "1,234 in / 5,678 out" in table[1]
    assert table[2].startswith(failed_id) and "rate limited (HTTP 429)" in table[2]

    code, out, _ = run(capsysbinary, "memory", "show", "-w", folder, "--reply", refused_id.lower())
    assert (code, out) == (0, reply.encode("utf-8"))
    trimmed = tmp_path / "r.txt"
    trimmed.write_bytes(b"".join(out.splitlines(keepends=True)[:150]))
    code, out, _ = run(capsysbinary, "memory", "set", "-w", folder, "--file", trimmed)
    assert (code, out) == (0, f"Saved version 2 (150 lines) for {folder}.\n".encode())
    assert stored(data_dir, folder) == trimmed.read_bytes()

    code, out, err = run(capsysbinary, "memory", "show", "-w", folder, "--reply", failed_id)
    assert (code, out) == (2, b"")
    assert err == (
        f"yak: refresh attempt {failed_id} kept no reply (failed: rate limited (HTTP 429))\n"
    )

    code, out, _ = run(capsysbinary, "memory", "history", "-w", folder, "--json")
    assert [set(r) for r in json.loads(out)] == [
        {"id", "version", "source", "lines", "chars", "added", "removed", "flags", "created_at"}
    ] * 2


def test_the_help_tells_about_refreshes_replies_and_version_numbers(capsys):
    """``--refreshes``, ``--reply`` and ``restore VERSION`` are documented where users look."""
    texts = {}
    for command in ("history", "show", "restore"):
        with pytest.raises(SystemExit) as done:
            main(["memory", command, "--help"])
        assert done.value.code == 0
        texts[command] = " ".join(capsys.readouterr().out.split())
    assert "--refreshes" in texts["history"] and "show --reply ID" in texts["history"]
    assert "--reply ATTEMPT_ID" in texts["show"] and "set --file reply.txt" in texts["show"]
    assert "'restore 3' restores the revision that produced version 3" in texts["restore"]


def test_export_offers_exactly_the_formats_the_document_rules_write(capsys):
    """``export --format`` lists the formats of the document rules: the same names, in the
    same order."""
    from yak.memory.document import EXPORT_FORMATS

    assert EXPORT_FORMATS == ("text", "markdown", "json")
    with pytest.raises(SystemExit):
        main(["memory", "export", "--help"])
    assert "{text,markdown,json}" in capsys.readouterr().out


def test_restore_takes_a_version_number_or_an_id(data_dir, folder, capsysbinary):
    """``restore 1`` restores the revision that produced version 1; ids still work; a version
    that does not exist writes nothing."""
    for text in (b"first\n", b"second\nline\n", b"third\n"):
        set_text(capsysbinary, folder, text)
    code, out, _ = run(capsysbinary, "memory", "restore", "2", "-w", folder)
    assert code == 0 and out.decode().endswith("as version 4 (2 lines).\n")
    assert stored(data_dir, folder) == b"second\nline\n"

    history = json.loads(run(capsysbinary, "memory", "history", "-w", folder, "--json")[1])
    first_id = next(r["id"] for r in history if r["version"] == 1)
    code, out, _ = run(capsysbinary, "memory", "restore", first_id, "-w", folder)
    assert (code, out.decode()) == (
        0,
        f"Restored revision {first_id} (version 1) as version 5 (1 line).\n",
    )
    assert stored(data_dir, folder) == b"first\n"

    code, _, err = run(capsysbinary, "memory", "restore", "9", "-w", folder)
    assert code == 2 and "has no version 9" in err
    assert stored(data_dir, folder) == b"first\n"


def test_diff_shows_the_last_change_or_two_chosen_versions_and_show_prints_a_version(
    data_dir, folder, capsysbinary
):
    """``diff`` alone is the last change; ``diff 1`` version 1 to now; ``diff 1 2`` (and its
    ``--json``) the two given; ``show --version 1`` prints version 1's bytes; a version that
    does not exist is one line, exit 2, for both."""
    for text in (b"a\nb\n", b"a\nc\nd\n", b"a\nc\nd\ne\n"):
        set_text(capsysbinary, folder, text)

    code, out, _ = run(capsysbinary, "memory", "diff", "-w", folder)
    assert (code, out.decode()) == (
        0,
        "--- version 2\n+++ version 3\n@@ -1,3 +1,4 @@\n a\n c\n d\n+e\n",
    )
    code, out, _ = run(capsysbinary, "memory", "diff", "1", "-w", folder)
    assert (code, out.decode()) == (
        0,
        "--- version 1\n+++ version 3\n@@ -1,2 +1,4 @@\n a\n-b\n+c\n+d\n+e\n",
    )
    code, out, _ = run(capsysbinary, "memory", "diff", "1", "2", "-w", folder, "--json")
    shown = json.loads(out)
    assert code == 0
    assert (shown["from"]["version"], shown["to"]["version"]) == (1, 2)
    assert (shown["added"], shown["removed"]) == (2, 1)
    assert shown["diff"] == "--- version 1\n+++ version 2\n@@ -1,2 +1,3 @@\n a\n-b\n+c\n+d\n"

    code, out, _ = run(capsysbinary, "memory", "show", "--version", "1", "-w", folder)
    assert (code, out) == (0, b"a\nb\n")
    for argv in (["diff", "9"], ["show", "--version", "9"]):
        code, out, err = run(capsysbinary, "memory", *argv, "-w", folder)
        assert (code, out) == (2, b"")
        assert err.count("\n") == 1 and "has no version 9" in err


def test_import_dash_reads_the_file_from_stdin(data_dir, folder, capsysbinary):
    """``import -`` takes the bytes from stdin and decodes them like a file (UTF-16, CRLF)."""
    data = "from stdin — ünï\r\nsecond\r\n".encode("utf-16")
    code, out, err = run(
        capsysbinary,
        "memory",
        "import",
        "-",
        "-w",
        folder,
        stdin=io.TextIOWrapper(io.BytesIO(data)),
    )
    assert (code, out) == (0, b"Imported stdin as version 1 (2 lines).\n"), err
    assert stored(data_dir, folder) == "from stdin — ünï\nsecond\n".encode()
    history = json.loads(run(capsysbinary, "memory", "history", "-w", folder, "--json")[1])
    assert [r["source"] for r in history] == ["import"]


def test_json_before_the_subcommand_says_where_it_goes(data_dir, capsysbinary):
    code, out, err = run(capsysbinary, "--json", "memory", "list")
    assert code == 2
    assert err == "yak: put --json after the subcommand (yak memory list --json)\n"
    assert json.loads(out)["exit_code"] == 2
    code, out, _ = run(capsysbinary, "memory", "list", "--json")
    assert (code, json.loads(out)) == (0, [])


# --- empty input and importing our own exports -------------------------------------------------
EMPTY_MESSAGE = (
    "yak: The input is empty; nothing was saved. To empty the memory, use yak memory delete.\n"
)


@pytest.mark.parametrize("data", [b"", b"  \n\r\n\t\n", "\ufeff".encode()])
@pytest.mark.parametrize("how", ["stdin", "file", "import", "import-stdin"])
def test_empty_input_is_refused_with_exit_2_and_the_document_kept(
    data_dir, folder, tmp_path, capsysbinary, data, how
):
    assert (
        run(
            capsysbinary,
            "memory",
            "set",
            "-w",
            folder,
            stdin=io.TextIOWrapper(io.BytesIO(b"keep\n")),
        )[0]
        == 0
    )
    empty = tmp_path / "empty.txt"
    empty.write_bytes(data)
    argv = {
        "stdin": ["memory", "set"],
        "file": ["memory", "set", "--file", empty],
        "import": ["memory", "import", empty],
        "import-stdin": ["memory", "import", "-"],
    }[how]
    code, out, err = run(
        capsysbinary, *argv, "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(data))
    )
    assert (code, out, err) == (2, b"", EMPTY_MESSAGE)
    assert stored(data_dir, folder) == b"keep\n"
    # Positive beside it: the same command with text saves it.
    empty.write_bytes(b"new\n")
    code, _, err = run(
        capsysbinary, *argv, "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"new\n"))
    )
    assert code == 0, err
    assert stored(data_dir, folder) == b"new\n"


@pytest.mark.parametrize(
    "fmt, suffix", [("text", ".txt"), ("markdown", ".md"), ("json", ".json"), ("json", ".txt")]
)
def test_an_export_imports_into_another_workspace_as_the_same_bytes(
    data_dir, folder, tmp_path, capsysbinary, fmt, suffix
):
    content = '# not a title: a line of the document\n\nConventions\n- ruff\n\n{"a": 1}\n'
    assert (
        run(
            capsysbinary,
            "memory",
            "set",
            "-w",
            folder,
            stdin=io.TextIOWrapper(io.BytesIO(content.encode())),
        )[0]
        == 0
    )
    target = tmp_path / f"export{suffix}"
    code, _, err = run(
        capsysbinary, "memory", "export", "--format", fmt, "-o", target, "-w", folder
    )
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, _, err = run(capsysbinary, "memory", "import", target, "-w", elsewhere)
    assert code == 0, err
    assert stored(data_dir, elsewhere) == content.encode()


def test_a_markdown_title_is_kept_unless_it_is_yak_s_export_title(
    data_dir, folder, tmp_path, capsysbinary
):
    """An AGENTS.md's own ``# Title`` is imported with the rest; only Yak's export title line
    (``# Yak memory: …`` then a blank line) in a .md/.markdown file is left out, and the same
    bytes from a .txt file keep it."""
    own = b"# Project guidelines\n\nAlways run make lint\n"
    export = b"# Yak memory: proj\n\nfirst fact\n"
    for name, data, expected in [
        ("AGENTS.md", own, own),
        ("notes.md", b"# proj\n\nfirst fact\n", b"# proj\n\nfirst fact\n"),
        ("notes.txt", export, export),
        ("notes.markdown", export, b"first fact\n"),
    ]:
        (tmp_path / name).write_bytes(data)
        code, _, err = run(capsysbinary, "memory", "import", tmp_path / name, "-w", folder)
        assert code == 0, err
        assert stored(data_dir, folder) == expected, name


def test_a_json_file_that_is_not_a_yak_export_is_refused_and_stdin_keeps_it_as_text(
    data_dir, folder, tmp_path, capsysbinary
):
    """Another tool's ``.json`` would replace the memory with raw JSON: it is refused (exit 2,
    one line naming the file and the way to keep it anyway) and the document is unchanged;
    the same bytes piped on stdin are imported as text, as asked."""
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"v1\n")))
    data = b'{"format": "other/1", "content": "x"}\n'
    (tmp_path / "other.json").write_bytes(data)
    code, _, err = run(capsysbinary, "memory", "import", tmp_path / "other.json", "-w", folder)
    assert code == 2
    assert err.count("\n") == 1 and "other.json is not a Yak JSON export" in err
    assert "import it from stdin or under a name not ending in .json" in err
    assert stored(data_dir, folder) == b"v1\n"
    code, _, err = run(
        capsysbinary,
        "memory",
        "import",
        "-",
        "-w",
        folder,
        stdin=io.TextIOWrapper(io.BytesIO(data)),
    )
    assert code == 0, err
    assert stored(data_dir, folder) == data


def test_edit_that_empties_the_file_is_refused_and_the_document_kept(
    data_dir, folder, capsysbinary, editor
):
    """An editor that leaves the file empty saves nothing (exit 2, the sentence `set` gives):
    emptying the memory is `delete`, which asks first."""
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"v1\n")))
    editor.setenv("FAKE_EDIT_TEXT", "")
    code, _, err = run(capsysbinary, "memory", "edit", "-w", folder)
    assert code == 2 and "The input is empty; nothing was saved" in err, err
    assert stored(data_dir, folder) == b"v1\n"


def test_an_input_larger_than_any_document_is_refused_without_reading_it_all(
    data_dir, folder, tmp_path, capsysbinary
):
    """A file or stdin of more than 1 MiB (a runaway pipe, ``/dev/zero``) is refused after
    reading just past that: one line, exit 3 (over the ceiling), the document unchanged."""
    run(capsysbinary, "memory", "set", "-w", folder, stdin=io.TextIOWrapper(io.BytesIO(b"v1\n")))
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"- line\n" * 200_000)
    code, _, err = run(capsysbinary, "memory", "import", huge, "-w", folder)
    assert code == 3 and err.count("\n") == 1
    assert f"{huge} is over 1,024 KiB, far more than a memory document holds" in err
    code, _, err = run(
        capsysbinary,
        "memory",
        "set",
        "-w",
        folder,
        stdin=io.TextIOWrapper(io.BytesIO(b"x" * (2 << 20))),
    )
    assert code == 3 and "The input on stdin" in err and err.count("\n") == 1
    assert stored(data_dir, folder) == b"v1\n"


def test_show_of_a_folder_without_memory_says_so_on_stderr_only(data_dir, folder):
    """stdout stays the document (nothing, for piping); stderr says there is none yet and how
    one is made; ``--json`` says it with ``"content": ""`` and no note."""
    shown = yak("memory", "show", "-w", folder, data_dir=data_dir)
    assert (shown.returncode, shown.stdout) == (0, b"")
    assert shown.stderr.decode() == (
        f"{folder} has no memory yet: it is written after a conversation here, or with "
        "'yak memory set'.\n"
    )
    as_json = yak("memory", "show", "-w", folder, "--json", data_dir=data_dir)
    assert json.loads(as_json.stdout)["content"] == "" and as_json.stderr == b""


def test_show_after_delete_says_the_memory_is_empty_and_how_to_get_it_back(data_dir, folder):
    """A deleted memory is not "no memory yet": ``show`` says since which version it is empty
    and how to bring an earlier one back, and ``restore`` does."""
    assert yak("memory", "set", "-w", folder, stdin=b"- kept\n", data_dir=data_dir).returncode == 0
    assert yak("memory", "delete", "-w", folder, "--yes", data_dir=data_dir).returncode == 0
    shown = yak("memory", "show", "-w", folder, data_dir=data_dir)
    assert (shown.returncode, shown.stdout) == (0, b"")
    assert shown.stderr.decode() == (
        f"The memory of {folder} is empty since version 2: 'yak memory history' lists the "
        "versions before, 'yak memory restore VERSION' brings one back.\n"
    )
    assert yak("memory", "restore", "1", "-w", folder, data_dir=data_dir).returncode == 0
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b"- kept\n"


def test_list_tells_apart_two_folders_whose_names_differ_only_in_accents(data_dir, tmp_path):
    """``café`` as one letter and as ``e`` plus an accent are two folders and two workspaces;
    the table says which is which instead of printing the same path twice."""
    composed, decomposed = tmp_path / "caf\u00e9", tmp_path / "cafe\u0301"
    for folder, text in ((composed, b"- composed\n"), (decomposed, b"- decomposed\n")):
        folder.mkdir()
        assert yak("memory", "set", "-w", folder, stdin=text, data_dir=data_dir).returncode == 0
    listed = yak("memory", "list", data_dir=data_dir).stdout.decode()
    assert f"{composed}  (composed accents)" in listed
    assert f"{decomposed}  (decomposed accents)" in listed
    shown = yak("memory", "show", "-w", decomposed, data_dir=data_dir)
    assert shown.stdout == b"- decomposed\n"


def test_export_to_a_json_file_writes_what_import_reads_back(data_dir, folder, tmp_path):
    """``-o notes.json`` without ``--format`` writes the JSON export (``import`` takes it back
    as an export), ``-o notes.md`` the markdown one; ``--format`` still decides when given."""
    assert yak("memory", "set", "-w", folder, stdin=b"- one\n", data_dir=data_dir).returncode == 0
    as_json = tmp_path / "notes.json"
    assert yak("memory", "export", "-w", folder, "-o", as_json, data_dir=data_dir).returncode == 0
    assert json.loads(as_json.read_text())["content"] == "- one\n"
    assert yak("memory", "set", "-w", folder, stdin=b"- two\n", data_dir=data_dir).returncode == 0
    imported = yak("memory", "import", as_json, "-w", folder, data_dir=data_dir)
    assert imported.returncode == 0, imported.stderr
    assert yak("memory", "show", "-w", folder, data_dir=data_dir).stdout == b"- one\n"
    as_md = tmp_path / "notes.md"
    assert yak("memory", "export", "-w", folder, "-o", as_md, data_dir=data_dir).returncode == 0
    assert as_md.read_text().startswith("# ")
    plain = tmp_path / "plain.json"
    assert (
        yak(
            "memory", "export", "-w", folder, "-o", plain, "--format", "text", data_dir=data_dir
        ).returncode
        == 0
    )
    assert plain.read_bytes() == b"- one\n"


def test_list_says_which_memories_are_off_and_export_needs_a_file_name(data_dir, folder):
    """A workspace whose memory is switched off is listed with "(memory off)" (``--json``:
    ``memory_enabled``); ``export -o ''`` is one line, exit 2, instead of "." being taken."""
    assert yak("memory", "set", "-w", folder, stdin=b"- one\n", data_dir=data_dir).returncode == 0
    assert yak("memory", "disable", "-w", folder, data_dir=data_dir).returncode == 0
    assert f"{folder}  (memory off)" in yak("memory", "list", data_dir=data_dir).stdout.decode()
    listed = json.loads(yak("memory", "list", "--json", data_dir=data_dir).stdout)
    assert [d["memory_enabled"] for d in listed] == [False]
    refused = yak("memory", "export", "-w", folder, "-o", "", data_dir=data_dir)
    assert refused.returncode == 2
    assert one_error_line(refused) == "yak: give a file name after -o (or - for standard output)"
