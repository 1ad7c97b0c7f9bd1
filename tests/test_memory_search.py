"""``yak memory search`` over the full-text index: the documents it finds follow every write,
the index is built for a database an older Yak wrote, and without an index (a SQLite without
FTS5) the same hits come from a plain scan that says so. Stdout, stderr and exit codes
(``yak.cli.main`` in process)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3

import pytest

from tests.support import drop_search_index
from tests.support.cli import run_cli as run
from tests.support.cli import seed_memory as save
from yak.bootstrap import open_core
from yak.db.engine import open_database

NO_INDEX = "Searched by plain scan: this database has no full-text index (FTS5).\n"


@pytest.fixture
def api(tmp_path, data_dir):
    """The workspace ``api`` whose memory mentions PostgreSQL."""
    folder = tmp_path / "api"
    folder.mkdir()
    save(data_dir, folder, "API service\n- db: PostgreSQL 16\n")
    return folder


def indexed(data_dir, query):
    """The folders of the documents the index names for ``query`` (the lines are then checked
    in the documents, so a stale index would hide only behind this)."""

    async def work():
        core = open_core(data_dir)
        try:
            found = await core.memory.search_candidates(query)
            assert found.method == "fts5"
            return {workspace.path for workspace, _content in found.documents}
        finally:
            await core.aclose()

    return asyncio.run(work())


def test_the_index_follows_every_write(api, data_dir, tmp_path, capsys):
    """A hand save replacing the text is found by its new words and no longer by the old
    (no plain-scan note: the index answered, and the index itself names only the new text);
    after ``delete`` nothing is found; a re-attach to a new folder is found under the new
    path."""
    code, out, err = run(capsys, "memory", "search", "postgres")
    assert (code, out, err) == (0, f"{api}:2: - db: PostgreSQL 16\n", "")
    save(data_dir, api, "API service\n- db: MariaDB\n")
    assert run(capsys, "memory", "search", "postgres")[1:] == (
        "No memory document contains 'postgres'.\n",
        "",
    )
    assert run(capsys, "memory", "search", "mariadb")[1:] == (f"{api}:2: - db: MariaDB\n", "")
    assert (indexed(data_dir, "postgres"), indexed(data_dir, "MARIA")) == (set(), {str(api)})

    moved = tmp_path / "api-v2"
    shutil.move(api, moved)
    assert run(capsys, "memory", "reattach", api, "-w", moved)[0] == 0
    assert run(capsys, "memory", "search", "mariadb")[1] == f"{moved}:2: - db: MariaDB\n"
    assert indexed(data_dir, "mariadb") == {str(moved)}
    assert run(capsys, "memory", "delete", "-w", moved, "--yes")[0] == 0
    assert run(capsys, "memory", "search", "mariadb")[1] == (
        "No memory document contains 'mariadb'.\n"
    )
    assert indexed(data_dir, "mariadb") == set()


def test_a_text_under_three_characters_is_a_labelled_plain_scan(api, capsys):
    """ "16" is shorter than the index's trigrams: the hit still comes, and stderr says it was a
    plain scan and why."""
    code, out, err = run(capsys, "memory", "search", "16", "--json")
    assert code == 0
    assert json.loads(out) == [{"workspace": str(api), "line": 2, "text": "- db: PostgreSQL 16"}]
    assert err == ("Searched by plain scan: the text is shorter than the index's 3 characters.\n")


def test_without_an_index_search_is_a_plain_scan_that_says_so(api, data_dir, tmp_path, capsys):
    """In a database without the index, writes still work and search finds the same lines,
    with one stderr line saying it was a plain scan for want of FTS5 (``--json`` keeps its
    list on stdout)."""
    drop_search_index(data_dir / "yak.db")
    web = tmp_path / "web"
    web.mkdir()
    save(data_dir, web, "Web app\n- uses postgres via the api\n")
    code, out, err = run(capsys, "memory", "search", "POSTGRES")
    assert (code, err) == (0, NO_INDEX)
    assert out == f"{web}:2: - uses postgres via the api\n{api}:2: - db: PostgreSQL 16\n"
    code, out, err = run(capsys, "memory", "search", "kubernetes", "--json")
    assert (code, out, err) == (0, "[]\n", NO_INDEX)


def test_on_a_database_nobody_may_write_search_still_finds_the_newest_text(
    api, data_dir, tmp_path, monkeypatch, capsys
):
    """The index catches up when a search runs; where the database cannot be written, the
    documents it holds an older version of are read as well: the new text is found and the
    replaced text is not."""
    from tests.test_cli_readonly_db import cannot_write

    save(data_dir, api, "API service\n- db: MariaDB\n")
    cannot_write(monkeypatch, tmp_path, refused_modes=())
    assert run(capsys, "memory", "search", "mariadb") == (0, f"{api}:2: - db: MariaDB\n", "")
    assert run(capsys, "memory", "search", "postgres")[1] == (
        "No memory document contains 'postgres'.\n"
    )


def test_the_index_round_trips_through_the_schema_before_on_demand_search(api, data_dir, capsys):
    """Downgraded to the schema whose triggers kept the index (0007), a save is indexed by
    them; upgraded again, search finds it through the index."""
    from alembic import command

    from yak.db.migrate import alembic_config

    old = open_database(data_dir, migrate=False)
    try:
        with old.engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0007")
            conn.exec_driver_sql(
                "UPDATE memory_documents SET content = 'API service\n- db: SQLite\n'"
            )
    finally:
        old.close()
    assert indexed(data_dir, "sqlite") == {str(api)}
    assert indexed(data_dir, "postgres") == set()
    assert run(capsys, "memory", "search", "sqlite")[1] == f"{api}:2: - db: SQLite\n"


def test_a_database_from_before_the_index_gets_it_with_its_documents(api, data_dir, capsys):
    """A database at the schema before the index (its documents already stored) is migrated
    on open: the index then holds those documents, and search finds them through it."""
    from alembic import command

    from yak.db.migrate import alembic_config

    old = open_database(data_dir, migrate=False)
    try:
        with old.engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0004")
            tables = conn.exec_driver_sql("SELECT name FROM sqlite_master").scalars().all()
        assert "memory_search" not in tables
    finally:
        old.close()
    code, out, err = run(capsys, "memory", "search", "postgresql")
    assert (code, out, err) == (0, f"{api}:2: - db: PostgreSQL 16\n", "")


def test_a_document_that_is_not_text_is_left_out_and_a_query_that_is_not_utf8_is_refused(
    api, tmp_path, data_dir, capsys
):
    """One document whose stored bytes are not UTF-8 (written by another program) does not
    fail the search of the others: its lines are left out, the rest are found (exit 0). A
    query holding bytes that are not UTF-8 (from the command line) is one line, exit 2."""
    web = tmp_path / "web"
    web.mkdir()
    path = save(data_dir, web, "web app\n- db: PostgreSQL 15\n").path
    with sqlite3.connect(data_dir / "yak.db") as connection:
        connection.execute(
            "UPDATE memory_documents SET content = CAST(? AS TEXT) WHERE workspace_id = "
            "(SELECT id FROM workspaces WHERE path = ?)",
            (b"- db: PostgreSQL caf\xe9\n", path),
        )
    code, out, err = run(capsys, "memory", "search", "postgresql")
    assert (code, err) == (0, "")
    assert out == f"{api}:2: - db: PostgreSQL 16\n"
    code, out, err = run(capsys, "memory", "search", "ab\udcff")
    assert (code, out) == (2, "")
    assert err == "yak: the search text is not UTF-8 text (invalid byte at offset 2)\n"
