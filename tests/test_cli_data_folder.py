"""The data folder as a user may hand it to ``yak``: one whose refresh lock cannot be taken,
one that cannot be created, one whose log cannot be written. Every command keeps the contract
of docs/cli.md: one line on stderr, one JSON document with ``--json``, the documented exit code;
and the log follows ``--data-dir``.

Commands run as a user runs them (``python -m yak`` in a subprocess), so what reaches the
terminal (the console log handler included) is what is asserted. Tests run as any user, root
included, so the folders are made unusable by their shape (a file where a folder must be, a
folder where a file must be), which no permission lets through.
"""

from __future__ import annotations

import json
import logging
import sys

import pytest

from tests.support.cli import yak
from yak.logfile import ConsoleFormatter


@pytest.fixture
def folder(tmp_path):
    made = tmp_path / "project"
    made.mkdir()
    return made


def workspace_id(data, folder) -> str:
    shown = yak("memory", "show", "-w", folder, "--json", "--data-dir", data)
    return json.loads(shown.stdout)["workspace_id"]


def test_a_refresh_lock_that_cannot_be_created_is_one_warning_not_a_traceback(tmp_path, folder):
    """The lock file cannot be created (here a folder has its name; a read-only ``locks``
    folder does the same): the refresh runs without it, says so in one line, and ``--json``
    still prints its one document. It used to print a 43-line traceback and nothing on
    stdout."""
    data = tmp_path / "data"
    assert yak("memory", "set", "-w", folder, "--data-dir", data, stdin=b"hello\n").returncode == 0
    (data / "locks" / f"{workspace_id(data, folder)}.lock").mkdir(parents=True)

    ran = yak("memory", "refresh", "-w", folder, "--data-dir", data)
    assert ran.returncode == 0
    assert ran.stdout.decode().startswith("Up to date: ")
    err = ran.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("yak: WARNING: no refresh lock for ws_")
    assert err.rstrip().endswith("; refreshing without it")

    ran = yak("memory", "refresh", "-w", folder, "--data-dir", data, "--json")
    assert ran.returncode == 0 and json.loads(ran.stdout)["status"] == "up_to_date"
    assert ran.stderr.decode().count("\n") == 1 and b"Traceback" not in ran.stderr


COMMANDS = [
    ("memory", "show", "-w"),
    ("memory", "list"),
    ("memory", "history", "-w"),
    ("memory", "set", "-w"),
    ("memory", "refresh", "-w"),
    ("memory", "blame", "-w"),
    ("memory", "review", "-w"),
    ("memory", "mode", "-w"),
    ("memory", "search", "hello"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda words: " ".join(words))
def test_a_data_folder_that_cannot_be_created_is_exit_1_in_one_line(tmp_path, folder, command):
    """``--data-dir`` under a file: the data folder cannot be created. DESIGN's exit 1 (the
    database cannot be read or written), one line on stderr, the error document with
    ``--json``, and nothing made anywhere."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    data = blocker / "data"
    where = [folder] if command[-1] == "-w" else []
    for as_json in (False, True):
        argv = [*command, *where, "--data-dir", data, *(["--json"] if as_json else [])]
        ran = yak(*argv, stdin=b"hello\n")
        err = ran.stderr.decode()
        assert ran.returncode == 1, err
        assert err == f"yak: cannot use data directory {blocker}: it is a file, not a folder\n"
        if as_json:
            assert json.loads(ran.stdout) == {
                "error": err.removeprefix("yak: ").rstrip("\n"),
                "exit_code": 1,
                "status": None,
            }
        else:
            assert ran.stdout == b""
    assert blocker.read_text() == "x"


def test_the_log_follows_the_data_dir(tmp_path, folder):
    """With ``--data-dir`` (or ``YAK_DATA_DIR``) the log is written in that folder's ``log``
    folder, never in the platform's log folder."""
    state = tmp_path / "state"
    env = {"XDG_STATE_HOME": str(state)}
    data = tmp_path / "data"
    ran = yak("memory", "set", "-w", folder, "--data-dir", data, stdin=b"hello\n", env=env)
    assert ran.returncode == 0 and ran.stderr == b""
    log_text = (data / "log" / "yak.log").read_text(encoding="utf-8")
    assert "yak memory set" in log_text
    assert not state.exists()

    other = tmp_path / "other"
    env_dir = {**env, "YAK_DATA_DIR": str(other)}
    assert yak("memory", "set", "-w", folder, stdin=b"hi\n", env=env_dir).returncode == 0
    assert "yak memory set" in (other / "log" / "yak.log").read_text(encoding="utf-8")
    assert not state.exists()


def test_a_log_that_cannot_be_written_is_said_once_and_never_beside_an_error(tmp_path, folder):
    """The log folder cannot be made (a file has its name): a command that succeeds says so
    in one line and exit 0; a command that fails says only its own error."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "log").write_text("not a folder")
    ran = yak("memory", "set", "-w", folder, "--data-dir", data, stdin=b"hello\n")
    assert ran.returncode == 0 and ran.stdout.decode().startswith("Saved version 1")
    err = ran.stderr.decode()
    assert err.count("\n") == 1 and err.startswith(f"yak: cannot write the log file {data}/log")

    ran = yak("memory", "restore", "99", "-w", folder, "--data-dir", data)
    err = ran.stderr.decode()
    assert ran.returncode == 2 and err.count("\n") == 1 and "log file" not in err, err


def test_the_console_shows_a_logged_error_in_one_line_without_its_traceback():
    """A logged exception is one ``yak: ERROR: …`` line on the terminal (the log file keeps
    the traceback)."""
    try:
        raise PermissionError(13, "Permission denied", "/data/locks/ws_1.lock")
    except PermissionError:
        record = logging.getLogger("yak.refresh").makeRecord(
            "yak.refresh",
            logging.ERROR,
            __file__,
            1,
            "memory refresh of %s failed",
            ("ws_1",),
            sys.exc_info(),
        )
    assert ConsoleFormatter().format(record) == "yak: ERROR: memory refresh of ws_1 failed"
    assert "Traceback" in logging.Formatter().format(record)  # the file's formatter keeps it
