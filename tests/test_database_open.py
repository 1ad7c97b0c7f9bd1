"""Opening the database: several programs at once, and what they find."""

import subprocess
import sys
import textwrap

from sqlalchemy import inspect

from yak.db.engine import open_database

# Each child opens the application core, as the desktop app and the command line do.
_OPENER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from yak.bootstrap import open_core
    go = Path(sys.argv[2])
    while not go.exists():  # start together: every child waits for the same signal file
        time.sleep(0.005)
    open_core(Path(sys.argv[1])).close()
""")


def test_programs_opening_a_new_database_at_once_all_succeed(tmp_path):
    """The app and the CLI may create the database at the same moment: each one opens it
    (exit 0, no 'table already exists'), and the schema is created once."""
    data = tmp_path / "data"
    data.mkdir()
    go = tmp_path / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _OPENER, str(data), str(go)], stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    go.touch()
    results = [(child.wait(timeout=120), child.stderr.read()) for child in children]
    for child in children:
        child.stderr.close()
    assert [code for code, _ in results] == [0, 0, 0, 0], [err for _, err in results]
    db = open_database(data)
    try:
        tables = set(inspect(db.engine).get_table_names())
    finally:
        db.close()
    assert {"workspaces", "memory_documents", "memory_revisions", "chat_messages"} <= tables


def test_a_new_database_another_program_is_switching_to_wal_opens_when_it_is_done(tmp_path):
    """Another program holds the write lock of a new database (it is switching it to WAL):
    SQLite answers this program's own switch "database is locked" at once, without its busy
    timeout (the two could deadlock). Opening waits for the other program, as the busy timeout
    promises, and the database opens, in WAL mode, with its schema."""
    import sqlite3
    import threading

    (tmp_path / "yak.db").touch()
    other = sqlite3.connect(tmp_path / "yak.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the lock a switch to WAL takes first

    def finish() -> None:
        other.execute("COMMIT")
        other.execute("PRAGMA journal_mode=WAL")
        other.close()

    done = threading.Timer(0.3, finish)
    done.start()
    try:
        db = open_database(tmp_path)
    finally:
        done.join()
    try:
        with db.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
        assert "memory_documents" in inspect(db.engine).get_table_names()
    finally:
        db.close()


def test_the_head_read_from_the_migration_files_is_alembics(tmp_path):
    """The cheap schema check compares the stored revision with the head read as text from the
    migration files; that head is exactly the one Alembic computes, and a new database is
    stored at it."""
    from alembic.script import ScriptDirectory

    from yak.db.engine import head_revision, stored_revisions
    from yak.db.migrate import alembic_config

    script = ScriptDirectory.from_config(alembic_config())
    assert [head_revision()] == script.get_heads()
    db = open_database(tmp_path)
    try:
        assert stored_revisions(db) == {head_revision()}
    finally:
        db.close()


def test_a_database_of_the_first_schema_is_still_migrated_to_the_newest(tmp_path):
    """A database an older Yak wrote (here: at the first migration) is not taken for current
    by the cheap check: opening it migrates it to the head, data kept."""
    from alembic import command
    from alembic.script import ScriptDirectory

    from yak.db.engine import head_revision, stored_revisions
    from yak.db.migrate import alembic_config

    script = ScriptDirectory.from_config(alembic_config())
    [first] = [rev.revision for rev in script.walk_revisions() if rev.down_revision is None]
    old = open_database(tmp_path, migrate=False)
    try:
        with old.engine.begin() as conn:
            command.upgrade(alembic_config(conn), first)
            conn.exec_driver_sql(
                "INSERT INTO workspaces (id, path, memory_enabled, created_at) "
                "VALUES ('ws_1', '/old/project', 1, '2026-01-01 00:00:00')"
            )
        assert stored_revisions(old) == {first}
    finally:
        old.close()

    db = open_database(tmp_path)
    try:
        assert stored_revisions(db) == {head_revision()}
        with db.engine.connect() as conn:
            paths = conn.exec_driver_sql("SELECT path FROM workspaces").scalars().all()
        assert paths == ["/old/project"]
    finally:
        db.close()


def test_a_database_url_yak_cannot_read_is_one_line_exit_1_and_never_shows_its_password(
    data_dir, yak, caplog
):
    """A team database URL without its scheme, in libpq's key=value form, or with an unclosed
    IPv6 bracket: one sentence, exit 1 (also with ``--json``), no traceback, and the password
    is in neither the output nor the log records (nothing is connected to)."""
    password = "S3cret-Pw-77"
    for bad, sentence in [
        (f"bob:{password}@db.example.com/yak", "is not a PostgreSQL URL"),
        (f"postgresql//bob:{password}@db.example.com/yak", "is not a PostgreSQL URL"),
        (f"host=127.0.0.1 password={password} dbname=yak", "is not a PostgreSQL URL"),
        (f"postgresql://bob:{password}@[::1/yak", "cannot be read"),
    ]:
        ran = yak("memory", "list", "--database-url", bad)
        assert ran.returncode == 1 and ran.stdout == ""
        assert ran.stderr.count("\n") == 1 and ran.stderr.startswith("yak: The database URL ")
        assert sentence in ran.stderr and "Traceback" not in ran.stderr
        ran = yak("memory", "list", "--json", "--database-url", bad)
        assert ran.returncode == 1 and sentence in ran.stdout
        assert password not in ran.stdout + ran.stderr
    assert not any(password in record.getMessage() for record in caplog.records)
