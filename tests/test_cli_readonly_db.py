"""A Yak database nobody may write (an immutable or read-only data folder): the commands that
only read still work, opened read-only; the commands that write fail with one line (exit 1);
the database's bytes never change.

The deterministic tests emulate such a folder at the one place Yak opens SQLite files
(``yak.db.engine._connect``): a read-write open fails with SQLite's own "unable to open" error,
as it does when WAL's files cannot be created, and so does ``mode=ro`` where the folder allows
no shared-memory file. One more test uses a real ``chattr +i`` folder where the machine allows it.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys

import pytest

from yak.cli import main
from yak.db import engine

READ_ONLY_LINE = (
    "yak: The Yak database ({db}) is read-only; make it and its folder writable "
    "to save changes. Nothing was changed.\n"
)


def run(capsysbinary, *argv, stdin=b""):
    """``yak.cli.main(argv)`` in this process; returns (exit code, stdout bytes, stderr text)."""
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = main([str(a) for a in argv])
    finally:
        sys.stdin = sys.__stdin__
    captured = capsysbinary.readouterr()
    return code, captured.out, captured.err.decode("utf-8")


@pytest.fixture
def folder(tmp_path):
    made = tmp_path / "project"
    made.mkdir()
    return made


@pytest.fixture
def populated(data_dir, folder, capsysbinary):
    """A database with two revisions of a two-line document for ``folder``."""
    for text in (b"first\n", b"- one\n- two\n"):
        assert run(capsysbinary, "memory", "set", "-w", folder, stdin=text)[0] == 0
    return data_dir / "yak.db"


def cannot_write(monkeypatch, tmp_path, *, refused_modes):
    """Make every read-write open of a database file fail as in a folder nobody may write, and
    the read-only ``refused_modes`` too (``"mode=ro"`` where no -shm file can be created)."""
    real = engine._connect
    nowhere = f"file:{tmp_path}/no-such-folder/yak.db?mode=ro"

    def connect(database, *, uri=False):
        mode = database.split("?", 1)[1] if uri else "rw"
        if mode == "rw" or mode in refused_modes:
            return real(nowhere, uri=True)  # raises SQLite's own SQLITE_CANTOPEN
        return real(database, uri=uri)

    monkeypatch.setattr(engine, "_connect", connect)


@pytest.mark.parametrize(
    "refused_modes", [("mode=ro",), ()], ids=["immutable-needed", "mode-ro-works"]
)
def test_reading_commands_work_and_writing_ones_say_read_only(
    populated, folder, capsysbinary, monkeypatch, tmp_path, refused_modes
):
    before = populated.read_bytes()
    cannot_write(monkeypatch, tmp_path, refused_modes=refused_modes)

    assert run(capsysbinary, "memory", "show", "-w", folder)[:2] == (0, b"- one\n- two\n")
    code, out, err = run(capsysbinary, "memory", "list", "--json")
    assert (code, err) == (0, "")
    assert [(d["workspace"], d["version"], d["lines"]) for d in json.loads(out)] == [
        (str(folder), 2, 2)
    ]
    code, out, _ = run(capsysbinary, "memory", "history", "-w", folder, "--json")
    assert code == 0 and [r["version"] for r in json.loads(out)] == [2, 1]
    code, out, _ = run(capsysbinary, "memory", "history", "-w", folder, "--refreshes", "--json")
    assert (code, json.loads(out)) == (0, [])
    exported = tmp_path / "exported.txt"
    assert run(capsysbinary, "memory", "export", "-w", folder, "-o", exported)[0] == 0
    assert exported.read_bytes() == b"- one\n- two\n"

    code, out, err = run(capsysbinary, "memory", "set", "-w", folder, "--json", stdin=b"new\n")
    assert code == 1 and err == READ_ONLY_LINE.format(db=populated)
    assert json.loads(out)["exit_code"] == 1
    for argv in (
        ["memory", "restore", "1"],
        ["memory", "delete", "--yes"],
        ["memory", "import", exported],
    ):
        code, _, err = run(capsysbinary, *argv, "-w", folder)
        assert code == 1 and err == READ_ONLY_LINE.format(db=populated), argv
    assert populated.read_bytes() == before

    monkeypatch.undo()  # writable again: the same write goes through
    assert run(capsysbinary, "memory", "set", "-w", folder, stdin=b"new\n")[0] == 0
    assert run(capsysbinary, "memory", "show", "-w", folder)[1] == b"new\n"


def test_a_long_data_folder_is_one_whole_sentence_with_the_path_shortened(
    folder, capsysbinary, tmp_path
):
    """A data folder whose path runs to thousands of characters (more than SQLite opens): one
    line, exit 1, saying why in a whole sentence and naming the folder by its start and its
    end around "…", for a command that writes and one that reads."""
    data = tmp_path
    for i in range(12):
        data = data / f"{i:02d}-{'deep' * 50}"
    data.mkdir(parents=True)
    assert len(str(data)) > 2_000
    head = str(data / "yak.db")[:60]
    tail = f"{'deep' * 10}/yak.db)"

    for argv in (["set"], ["show"]):
        code, out, err = run(capsysbinary, "memory", *argv, "-w", folder, "--data-dir", data)
        assert (code, out) == (1, b""), err
        assert err.count("\n") == 1 and len(err) < 400, err
        assert err.startswith(f"yak: The Yak database ({head}") and "…" in err
        assert tail in err
        assert err.endswith(
            f"cannot be opened: its path has {len(str(data / 'yak.db')):,} characters, more "
            "than SQLite takes (512); choose a data directory with a shorter path.\n"
        )


def test_a_read_only_database_without_yak_tables_says_so(
    data_dir, folder, capsysbinary, monkeypatch, tmp_path
):
    """A read-only file Yak never set up cannot be migrated: one line, exit 1, left as it was."""
    (data_dir / "yak.db").write_bytes(b"")
    cannot_write(monkeypatch, tmp_path, refused_modes=())
    code, _, err = run(capsysbinary, "memory", "show", "-w", folder)
    assert code == 1
    assert err == (
        f"yak: The Yak database ({data_dir / 'yak.db'}) is read-only and holds no "
        "Yak data yet; make it writable once so Yak can set it up.\n"
    )
    assert (data_dir / "yak.db").read_bytes() == b""


def test_a_damaged_database_is_not_taken_for_a_read_only_one(data_dir, folder, capsysbinary):
    garbage = b"this is not a database\n" * 300
    (data_dir / "yak.db").write_bytes(garbage)
    code, _, err = run(capsysbinary, "memory", "show", "-w", folder)
    assert code == 1 and "is damaged" in err and err.count("\n") == 1
    assert (data_dir / "yak.db").read_bytes() == garbage


def test_a_database_from_a_newer_yak_is_still_refused_when_read_only(
    populated, folder, capsysbinary, monkeypatch, tmp_path
):
    with sqlite3.connect(populated) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz'")
    conn.close()
    cannot_write(monkeypatch, tmp_path, refused_modes=("mode=ro",))
    code, _, err = run(capsysbinary, "memory", "show", "-w", folder)
    assert code == 1 and "written by a newer version of Yak" in err


def _chattr(flag, *targets):
    return subprocess.run(["chattr", flag, *map(str, targets)], capture_output=True, check=False)


def test_an_immutable_data_folder_for_real(populated, folder, capsysbinary):
    """``chattr +i`` on the data folder and the database (where the machine allows it)."""
    data_dir = populated.parent
    if shutil.which("chattr") is None or _chattr("+i", data_dir, populated).returncode != 0:
        pytest.skip(
            "chattr +i is not possible here (needs root and a filesystem with "
            "attributes); the emulated tests above cover the same paths"
        )
    try:
        before = populated.read_bytes()
        assert run(capsysbinary, "memory", "show", "-w", folder)[:2] == (0, b"- one\n- two\n")
        code, out, _ = run(capsysbinary, "memory", "list", "--json")
        assert code == 0 and json.loads(out)[0]["lines"] == 2
        code, _, err = run(capsysbinary, "memory", "set", "-w", folder, stdin=b"new\n")
        assert (code, err) == (1, READ_ONLY_LINE.format(db=populated))
        assert populated.read_bytes() == before
        # Nothing new appeared (no -wal/-shm); the migration lock file is from the creation,
        # the log folder (a chosen data directory keeps its log) from the first command.
        assert sorted(p.name for p in data_dir.iterdir()) == [
            "log",
            "yak.db",
            "yak.db.migrate-lock",
        ]
    finally:
        _chattr("-i", data_dir, populated)
