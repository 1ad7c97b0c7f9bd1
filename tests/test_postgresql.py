"""The team database on a real PostgreSQL server: what only PostgreSQL has (its migrations from
an empty database, the refresh lock across machines, the sentences for a server that cannot be
used, the password kept out of every output) and two "machines" sharing one server.

The storage, refresh and command-line tests marked ``databases`` run against PostgreSQL too
(``-k postgresql``); this module holds the rest. Without ``YAK_TEST_DATABASE_URL`` the whole
module is one skip saying so.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support.cli import yak_command
from tests.support.postgres import ENV, server_url

if server_url() is None:
    pytest.skip(
        f"PostgreSQL tests not run: no server (set {ENV}; README, Development)",
        allow_module_level=True,
    )

from sqlalchemy.engine import make_url

from tests.support import project_folder, say, until
from tests.support.builders import seed_document
from tests.support.fake_api import text
from yak.db.engine import open_database
from yak.db.postgres import REFRESH_LOCK, AdvisoryRefreshLock, _lock_key
from yak.domain import RefreshStatus
from yak.errors import StoreError

pytestmark = pytest.mark.timeout(180)


def yak(*args, data_dir: Path, database_url: str | None, stdin: bytes = b"", cwd=None):
    """``python -m yak ARGS`` as one machine runs it: its own data directory (and XDG folders
    under it), the team database's URL in ``YAK_DATABASE_URL``."""
    env = {**os.environ, "YAK_DATA_DIR": str(data_dir)}
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env[name] = str(data_dir / name.lower())
    env.pop("YAK_DATABASE_URL", None)
    if database_url is not None:
        env["YAK_DATABASE_URL"] = database_url
    return subprocess.run(
        yak_command(*args),
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )


@pytest.fixture
def team_url(postgres_databases):
    """A fresh, migrated team database's URL (dropped after the test)."""
    url = postgres_databases.create()
    yield url
    postgres_databases.drop(url)


@pytest.fixture
def machines(tmp_path):
    """Two machines' data directories."""
    made = [tmp_path / "machine-a", tmp_path / "machine-b"]
    for folder in made:
        folder.mkdir()
    return made


def lock_holders(url: str, workspace_id: str) -> int:
    """How many sessions on the server hold the workspace's refresh lock (from ``pg_locks``)."""
    import psycopg

    libpq = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(libpq, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
            "AND classid = %s::oid AND objid = %s::oid AND objsubid = 2",
            (REFRESH_LOCK, _lock_key(workspace_id)),
        ).fetchone()
    assert row is not None
    return int(row[0])


# --- opening: sentences, exit 1, never the password ---------------------------------------------


def test_a_server_that_cannot_be_used_is_one_line_exit_1_without_the_password(
    team_url, machines, tmp_path
):
    """A wrong password, a missing database, a server that is down and a URL that is not
    PostgreSQL's each give one sentence on stderr (and in ``--json``), exit 1, and nothing is
    written; the password never appears on stdout, stderr or in the log files."""
    url = make_url(team_url)
    password = "Hunter2-" + "x" * 8
    wrong = url.set(password=password).render_as_string(hide_password=False)
    missing = url.set(database="no_such_yak_db").render_as_string(hide_password=False)
    down = url.set(port=1, password=password).render_as_string(hide_password=False)
    not_pg = f"mysql://yak:{password}@127.0.0.1/yak"
    folder = project_folder(tmp_path, "proj")
    expected = {
        wrong: "refused user 'yak': wrong user or password",
        missing: "has no database 'no_such_yak_db'; create it",
        down: "Cannot reach the PostgreSQL server at 127.0.0.1:1",
        not_pg: "is not a PostgreSQL URL",
    }
    for bad, sentence in expected.items():
        for args in (
            ("memory", "set", "-w", folder, "--json"),
            ("memory", "show", "-w", folder, "--json"),
        ):
            result = yak(*args, data_dir=machines[0], database_url=bad, stdin=b"- a note\n")
            err, out = result.stderr.decode(), result.stdout.decode()
            assert result.returncode == 1, (bad, err)
            assert err.count("\n") == 1 and err.startswith("yak: ") and sentence in err, err
            assert json.loads(out)["exit_code"] == 1 and sentence in json.loads(out)["error"]
            assert password not in err + out and url.password not in err + out
    # --database-url says the same as the variable
    result = yak("memory", "list", "--database-url", wrong, data_dir=machines[0], database_url=None)
    assert result.returncode == 1 and "wrong user or password" in result.stderr.decode()
    logs = [p for p in machines[0].rglob("*") if p.is_file()]
    assert logs and not any(password.encode() in p.read_bytes() for p in logs)
    # nothing was written anywhere: the team database still has no workspace
    shown = yak("memory", "list", "--json", data_dir=machines[1], database_url=team_url)
    assert shown.returncode == 0 and json.loads(shown.stdout) == []


def test_every_migration_runs_on_postgresql_and_backfills_the_stored_revisions(
    postgres_databases,
):
    """An empty PostgreSQL database is migrated one revision at a time; the revisions stored
    before the trusted-memory migration get their added/removed counts from it, and opening
    the database afterwards finds the schema current."""
    from alembic import command
    from sqlalchemy import create_engine
    from sqlalchemy import text as sql

    from yak.db.engine import head_revision
    from yak.db.migrate import alembic_config

    url = postgres_databases.create(empty=True)
    try:
        engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"))
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0001")
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0002")
            conn.execute(
                sql(
                    "INSERT INTO workspaces (id, path, memory_enabled, created_at) "
                    "VALUES ('ws_1', '/p', true, now())"
                )
            )
            for version, content in ((1, "a\nb\n"), (2, "a\nc\nd\n")):
                conn.execute(
                    sql(
                        "INSERT INTO memory_revisions (id, workspace_id, version, source, "
                        "content, lines, chars, flags, session_ids, created_at) VALUES "
                        "(:id, 'ws_1', :v, 'hand', :c, 0, 0, '[]', '[]', now())"
                    ),
                    {"id": f"r{version}", "v": version, "c": content},
                )
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
            counts = conn.execute(
                sql("SELECT version, added, removed FROM memory_revisions ORDER BY version")
            ).all()
            stored = conn.execute(sql("SELECT version_num FROM alembic_version")).scalar_one()
        engine.dispose()
        assert [tuple(row) for row in counts] == [(1, 2, 0), (2, 2, 1)]
        assert stored == head_revision()
        open_database(None, url=url).close()  # current: opens without migrating again
    finally:
        postgres_databases.drop(url)


def test_a_team_database_from_a_newer_yak_is_refused_and_left_untouched(team_url, machines):
    """A schema revision this Yak does not know: one line, exit 1, the table unchanged."""
    import psycopg

    libpq = make_url(team_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(libpq, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    result = yak("memory", "list", data_dir=machines[0], database_url=team_url)
    assert result.returncode == 1
    assert "written by a newer version of Yak (schema 9999)" in result.stderr.decode()
    with psycopg.connect(libpq, autocommit=True) as conn:
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert row == ("9999",)
    with pytest.raises(StoreError, match="newer version of Yak"):
        open_database(None, url=team_url)


# --- two machines on one server -------------------------------------------------------------


def test_two_machines_racing_a_save_one_wins_and_the_others_get_exit_5(
    team_url, machines, tmp_path
):
    """Six ``yak memory set --expect-version 1`` at once from two machines (data directories):
    exactly one exits 0, the others exit 5 with one line, and the stored document is the
    winner's text as version 2."""
    folder = project_folder(tmp_path, "proj")
    first = yak(
        "memory", "set", "-w", folder, data_dir=machines[0], database_url=team_url,
        stdin=b"- v1\n",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    env_of = {}
    for machine in machines:
        env = {**os.environ, "YAK_DATA_DIR": str(machine), "YAK_DATABASE_URL": team_url}
        env_of[machine] = env
    procs = [
        subprocess.Popen(
            yak_command("memory", "set", "-w", folder, "--expect-version", "1", "--json"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env_of[machines[i % 2]],
        )
        for i in range(6)
    ]
    results = []
    for i, proc in enumerate(procs):
        out, err = proc.communicate(f"- writer {i}\n".encode(), timeout=60)
        results.append((proc.returncode, out, err))
    codes = sorted(code for code, _out, _err in results)
    assert codes == [0, 5, 5, 5, 5, 5], results
    winner = next(i for i, (code, _o, _e) in enumerate(results) if code == 0)
    for code, out, err in results:
        if code == 5:
            assert err.decode().count("\n") == 1 and json.loads(out)["exit_code"] == 5
    shown = yak(
        "memory", "show", "-w", folder, "--json", data_dir=machines[1], database_url=team_url
    )
    document = json.loads(shown.stdout)
    assert (document["version"], document["content"]) == (2, f"- writer {winner}\n")


# --- one refresh per workspace across machines ----------------------------------------------


@pytest.fixture
def two_cores(team_url, machines, make_core, monkeypatch):
    """Two cores on the team database, each with its own data directory (two machines)."""
    monkeypatch.setenv("YAK_DATABASE_URL", team_url)
    return [make_core(folder=machines[0]), make_core(folder=machines[1])]


MEMORY = "".join(f"- fact {i:03d}: the project keeps this fact\n" for i in range(10))


async def test_two_machines_refreshing_one_workspace_make_one_model_call(
    two_cores, team_url, tmp_path, fake_api
):
    """Two machines (own data directories, so no shared lock file) refresh one workspace at
    once: the first holds the workspace's lock on the server during its model call, the
    second waits, re-reads and is up to date: one model call; the lock is free afterwards."""
    a, b = two_cores
    folder = project_folder(tmp_path, "proj")
    workspace = await a.workspaces.open(str(folder))
    await seed_document(a, workspace.id, MEMORY)
    say(a, workspace.id, "We decided to lint with ruff.", "Noted.")
    new = MEMORY + "- lint with ruff\n"
    gate = threading.Event()
    fake_api.script(text(new, gate=gate), text(MEMORY + "- a second call\n"))
    try:
        tasks = [
            asyncio.ensure_future(a.refresh.refresh_now(workspace.id)),
            asyncio.ensure_future(b.refresh.refresh_now(workspace.id)),
        ]
        await until(lambda: fake_api.message_requests, what="the first model call")
        assert await asyncio.to_thread(lock_holders, team_url, workspace.id) == 1
        gate.set()
        outcomes = await asyncio.gather(*tasks)
    finally:
        gate.set()
    assert sorted(str(o.status) for o in outcomes) == ["applied", "up_to_date"]
    assert len(fake_api.message_requests) == 1
    assert (await b.memory.read(workspace.id)).content.encode() == new.encode()
    assert await asyncio.to_thread(lock_holders, team_url, workspace.id) == 0


async def test_a_lock_held_elsewhere_keeps_the_refresh_waiting_and_a_dead_holder_frees_it(
    two_cores, team_url, tmp_path, fake_api, monkeypatch
):
    """Another machine's process holds the workspace's refresh lock: a refresh here waits
    (no model call) and, cancelled, changes nothing and holds nothing; once that process dies
    (its connection closes) the server frees the lock and the refresh applies."""
    import psycopg

    a, _b = two_cores
    folder = project_folder(tmp_path, "proj")
    workspace = await a.workspaces.open(str(folder))
    await seed_document(a, workspace.id, MEMORY)
    say(a, workspace.id, "We decided to lint with ruff.", "Noted.")
    libpq = make_url(team_url).set(drivername="postgresql").render_as_string(hide_password=False)
    holder = psycopg.connect(libpq, autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s, %s)", (REFRESH_LOCK, _lock_key(workspace.id)))
    tries: list[object] = []  # what each try of the lock got (None: held elsewhere)
    real_try = AdvisoryRefreshLock._try

    def counted_try(lock: AdvisoryRefreshLock, workspace_id: str) -> object:
        tries.append(taken := real_try(lock, workspace_id))
        return taken

    monkeypatch.setattr(AdvisoryRefreshLock, "_try", counted_try)
    try:
        task = asyncio.ensure_future(a.refresher.refresh(workspace.id))
        await until(lambda: len(tries) >= 2, what="two tries of the lock")
        assert tries[:2] == [None, None]
        assert not task.done() and fake_api.message_requests == []
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(lock_holders, team_url, workspace.id) == 1  # only theirs
    finally:
        holder.close()  # the process holding it dies: its session ends
    assert (await a.memory.read(workspace.id)).content == MEMORY
    fake_api.script(text(MEMORY + "- lint with ruff\n"))
    assert (await a.refresh.refresh_now(workspace.id)).status is RefreshStatus.APPLIED


# --- shared identity: two clones of one repository ------------------------------------------


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def two_clones(tmp_path):
    """One repository cloned by Alice and Bob at different paths, each clone's ``origin``
    spelled their way (Alice's https URL carries a token); returns their ``backend`` folders."""
    origin = tmp_path / "origin.git"
    git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    clones = []
    for path, url in (
        ("alice/src/app", "https://alice:ghp_S3cretTok3n@GitHub.com/acme/app.git"),
        ("bob/code/app-clone", "git@github.com:acme/app"),
    ):
        target = tmp_path / path
        target.parent.mkdir(parents=True)
        git("clone", "-q", str(origin), str(target), cwd=tmp_path)
        git("remote", "set-url", "origin", url, cwd=target)
        (target / "backend").mkdir()
        clones.append(target / "backend")
    return clones


def test_two_machines_with_clones_at_different_paths_share_one_document(
    team_url, machines, two_clones
):
    """Alice saves the memory of ``backend`` in her clone; Bob, on another machine with his
    clone elsewhere, reads the same document and saves version 2; Alice's save still based on
    version 1 is refused with exit 5 and changes nothing. The repository's root is another
    workspace. On a machine's own SQLite file the two clones stay two workspaces."""
    alice_dir, bob_dir = two_clones
    alice, bob = machines

    def run(machine, *args, stdin=b"", url=team_url):
        return yak(*args, data_dir=machine, database_url=url, stdin=stdin)

    saved = run(alice, "memory", "set", "-w", alice_dir, "--json", stdin=b"- API in Go\n")
    assert saved.returncode == 0, saved.stderr
    shown = json.loads(run(bob, "memory", "show", "-w", bob_dir, "--json").stdout)
    assert (shown["version"], shown["content"]) == (1, "- API in Go\n")
    assert shown["workspace"] == str(bob_dir)  # his folder, not Alice's
    updated = run(
        bob, "memory", "set", "-w", bob_dir, "--expect-version", "1", stdin=b"- Go 1.23\n"
    )
    assert updated.returncode == 0, updated.stderr
    stale = run(alice, "memory", "set", "-w", alice_dir, "--expect-version", "1", stdin=b"- x\n")
    assert stale.returncode == 5
    assert stale.stderr.decode().count("\n") == 1 and "version" in stale.stderr.decode()
    final = json.loads(run(alice, "memory", "show", "-w", alice_dir, "--json").stdout)
    assert (final["version"], final["content"]) == (2, "- Go 1.23\n")
    assert final["workspace_id"] == shown["workspace_id"]
    root = json.loads(run(bob, "memory", "show", "-w", bob_dir.parent, "--json").stdout)
    assert (root["version"], root["content"]) == (0, "")
    # Without the team database each machine keys by path: two workspaces.
    run(alice, "memory", "set", "-w", alice_dir, stdin=b"- local\n", url=None)
    local = json.loads(run(bob, "memory", "show", "-w", bob_dir, "--json", url=None).stdout)
    assert (local["version"], local["content"]) == (0, "")


def test_a_remote_url_with_credentials_never_reaches_the_database(team_url, machines, two_clones):
    """After Alice (whose remote URL holds a token) opens and writes her clone's workspace,
    no row of any table holds the token or her user name; the workspace's stored identity is
    the normalized remote plus the folder inside the repository."""
    import psycopg

    alice_dir, _bob_dir = two_clones
    saved = yak(
        "memory", "set", "-w", alice_dir, data_dir=machines[0], database_url=team_url,
        stdin=b"- note\n",
    )  # fmt: skip
    assert saved.returncode == 0, saved.stderr
    libpq = make_url(team_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(libpq, autocommit=True) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        ]
        dump = "".join(
            repr(conn.execute(f'SELECT * FROM "{table}"').fetchall()) for table in tables
        )
        keys = conn.execute("SELECT shared_key FROM workspaces").fetchall()
    assert "S3cretTok3n" not in dump and "alice:" not in dump
    assert keys == [("git:github.com/acme/app//backend",)]
