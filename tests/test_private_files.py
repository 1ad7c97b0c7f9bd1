"""Conversations, memory documents and logs are the user's alone: Yak's data and log folders
are created 0700 and the database, its WAL, the settings file and every log file 0600, whatever
the umask."""

from __future__ import annotations

import logging
import logging.handlers
import os
import shutil
import stat

import pytest

from yak import logfile, paths
from yak.bootstrap import open_core
from yak.config import Settings, save_settings
from yak.db.locks import FileRefreshLock


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def open_umask():
    """A permissive umask (022, the usual default) for the test; restored afterwards."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


async def test_data_folder_database_and_settings_are_private(tmp_path, open_umask):
    """A new data folder is 0700; the database Yak creates in it, its WAL and settings.json
    are 0600."""
    folder = paths.data_dir(tmp_path / "new" / "yak")
    assert mode(folder) == 0o700
    assert mode(folder.parent) == 0o755  # only Yak's own folder is tightened
    core = open_core(folder)
    try:
        await core.workspaces.open(str(tmp_path))  # a write: the WAL exists now
        core.settings.save(Settings(chat_model="claude-x"))
        files = {p.name: mode(p) for p in folder.iterdir() if not p.name.endswith("lock")}
    finally:
        await core.aclose()
    assert files["yak.db"] == 0o600
    assert files["settings.json"] == 0o600
    assert files["yak.db-wal"] == 0o600
    assert set(files.values()) == {0o600}, files


async def test_lock_files_and_their_folder_are_private(tmp_path, open_umask):
    """The migration lock beside the database, the refresh locks' folder (0700) and a
    workspace's refresh lock (0600) are private too."""
    folder = paths.data_dir(tmp_path / "yak")
    core = open_core(folder)
    await core.aclose()
    lock = FileRefreshLock(folder)
    assert await lock.acquire("ws_demo", wait_s=1.0)
    lock.release("ws_demo")

    assert mode(folder / "yak.db.migrate-lock") == 0o600
    assert mode(folder / "locks") == 0o700
    assert mode(folder / "locks" / "ws_demo.lock") == 0o600


async def test_a_refresh_lock_taken_again_after_its_folder_was_removed_is_private_and_held(
    tmp_path, open_umask
):
    """The lock released last is taken again (each process keeps it); when its folder was
    removed meanwhile, the folder is made again, private, and the lock still keeps another
    holder out."""
    folder = paths.data_dir(tmp_path / "yak")
    lock, other = FileRefreshLock(folder), FileRefreshLock(folder)
    assert await lock.acquire("ws_demo", wait_s=0)
    lock.release("ws_demo")
    assert await lock.acquire("ws_demo", wait_s=0)
    assert not await other.acquire("ws_demo", wait_s=0)
    lock.release("ws_demo")
    shutil.rmtree(folder / "locks")

    assert await lock.acquire("ws_demo", wait_s=0)
    assert mode(folder / "locks") == 0o700
    assert mode(folder / "locks" / "ws_demo.lock") == 0o600
    assert not await other.acquire("ws_demo", wait_s=0)
    lock.release("ws_demo")
    assert await other.acquire("ws_demo", wait_s=0)
    other.release("ws_demo")


def test_settings_rewrite_stays_private_over_a_leftover_temporary_file(tmp_path, open_umask):
    """A temporary file left by an interrupted save (with open permissions) is not reused:
    the saved settings.json is 0600."""
    (tmp_path / "settings.json.tmp").write_text("{}")
    os.chmod(tmp_path / "settings.json.tmp", 0o644)
    save_settings(tmp_path, Settings())
    assert mode(tmp_path / "settings.json") == 0o600


def test_the_log_folder_and_every_log_file_are_private(tmp_path, monkeypatch, open_umask):
    """The shared log's folder is 0700 and yak.log 0600, also the new file after a rollover."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    handler = logfile.open_log()
    assert isinstance(handler, logging.handlers.RotatingFileHandler)
    try:
        logging.getLogger("yak.test").info("first line")
        handler.doRollover()
        logging.getLogger("yak.test").info("after the rollover")
        log_file = paths.log_dir() / logfile.LOG_FILE
        assert mode(log_file.parent) == 0o700
        assert mode(log_file) == 0o600
        assert mode(log_file.with_name(log_file.name + ".1")) == 0o600
        assert "after the rollover" in log_file.read_text(encoding="utf-8")
    finally:
        logfile.close_log(handler)


def test_a_log_an_older_yak_left_readable_by_others_is_made_private(tmp_path, monkeypatch):
    """yak.log at 0644 from before (its lines kept) is 0600 once Yak opens it again."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    log_file = paths.log_dir() / logfile.LOG_FILE
    log_file.write_text("an old line\n", encoding="utf-8")
    log_file.chmod(0o644)
    handler = logfile.open_log()
    try:
        logging.getLogger("yak.test").info("a new line")
        assert mode(log_file) == 0o600
        assert log_file.read_text(encoding="utf-8").startswith("an old line\n")
    finally:
        logfile.close_log(handler)


def test_a_deferred_log_is_written_only_when_a_warning_comes(tmp_path, monkeypatch):
    """A command that only reads holds its lines: without a warning no log file is created;
    the first warning writes the held lines before it, in order, and later lines follow."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    log = logging.getLogger("yak.test")
    handler = logfile.open_log(deferred=True)
    try:
        log.info("a read that went well")
    finally:
        logfile.close_log(handler)
    assert list((tmp_path / "state").rglob("*.log")) == []

    handler = logfile.open_log(deferred=True)
    try:
        log.info("yak memory show")
        log.warning("the database is read-only; opened for reading")
        log.info("after the warning")
    finally:
        logfile.close_log(handler)
    lines = (paths.log_dir() / logfile.LOG_FILE).read_text(encoding="utf-8").splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == [
        "yak memory show",
        "the database is read-only; opened for reading",
        "after the warning",
    ]
    assert [line.split()[2] for line in lines] == ["INFO", "WARNING", "INFO"]
    assert mode(paths.log_dir() / logfile.LOG_FILE) == 0o600
