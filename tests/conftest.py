"""Shared fixtures. Qt runs offscreen; no test needs a display, the network or a key.

Core tests get their core from ``open_core`` through the ``core`` fixture (or ``make_core`` for
a second core on the same database, like another process) and are written as ``async def``
tests: each runs on its own fresh event loop (the ``loop`` fixture), which the core fixtures also
close their cores on. Helpers shared with the benchmarks live in ``tests/support``.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import tempfile
from dataclasses import dataclass

# Before any QApplication exists: without it a headless machine aborts pytest.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Never let a developer's real key or data directory leak into tests.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ.pop("YAK_DATA_DIR", None)
os.environ.pop("YAK_DATABASE_URL", None)  # PostgreSQL only where a test asks (``database``)
os.environ.pop("YAK_MODEL", None)
os.environ.pop("YAK_MEMORY_MODEL", None)
os.environ.pop("YAK_REFRESH_IDLE_SECONDS", None)
os.environ.pop("YAK_MEMORY_CONTEXT_WINDOW", None)
os.environ.pop("YAK_STALE_AFTER_DAYS", None)
# Never write into the developer's real data, log or config folders (platformdirs and Qt's
# QSettings follow the XDG variables on Linux), here or in subprocesses.
_SANDBOX = tempfile.mkdtemp(prefix="yak-tests-")
for _name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
    os.environ[_name] = os.path.join(_SANDBOX, _name.lower())
# Never touch the real OS keyring, here or in subprocesses: the "fail" backend stores nothing
# (tests that need a keyring install an in-memory one with the ``memory_keyring`` fixture).
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import pytest


# --- async tests: one fresh event loop per test ----------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """An ``async def`` test gets the ``loop`` fixture first, so it is set up before (and torn
    down after) every fixture that may use it."""
    if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
        names = item.fixturenames
        if "loop" in names:
            names.remove("loop")
        names.insert(0, "loop")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run an ``async def`` test to completion on its ``loop``."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    parameters = inspect.signature(pyfuncitem.obj).parameters
    arguments = {name: pyfuncitem.funcargs[name] for name in parameters}
    pyfuncitem.funcargs["loop"].run_until_complete(pyfuncitem.obj(**arguments))
    return True


@pytest.fixture
def loop():
    """The test's own event loop, current while the test runs; what is still pending after the
    test is cancelled, and the loop's worker threads are joined before it closes."""
    event_loop = asyncio.new_event_loop()
    asyncio.set_event_loop(event_loop)
    try:
        yield event_loop
    finally:
        pending = [t for t in asyncio.all_tasks(event_loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            event_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        event_loop.run_until_complete(event_loop.shutdown_asyncgens())
        event_loop.run_until_complete(event_loop.shutdown_default_executor())
        event_loop.close()
        asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def _private_default_data_dir(tmp_path, monkeypatch):
    """Every test, and every ``yak`` subprocess it starts, gets its own data directory even
    when it does not ask for ``data_dir``: nothing reaches the platform data directory."""
    monkeypatch.setenv("YAK_DATA_DIR", str(tmp_path / "yakdata-default"))


# --- the database: SQLite, and PostgreSQL where a server is configured ------------------------
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked ``databases`` (and not ``sqlite_only``) that use the database run once per
    database: ``sqlite`` always, ``postgresql`` when ``YAK_TEST_DATABASE_URL`` names a server
    (select that half with ``-k postgresql``). Without a server, ``tests/test_postgresql.py``
    reports the PostgreSQL tests as skipped, once, with the reason."""
    from tests.support.postgres import server_url

    if (
        "database" in metafunc.fixturenames
        and metafunc.definition.get_closest_marker("databases")
        and not metafunc.definition.get_closest_marker("sqlite_only")
        and server_url()
    ):
        metafunc.parametrize("database", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture(scope="session")
def postgres_databases():
    """The fresh-database maker for ``YAK_TEST_DATABASE_URL``'s server (see
    ``tests/support/postgres.py``); skips when no server is configured."""
    from tests.support.postgres import ENV, Databases, server_url

    url = server_url()
    if url is None:
        pytest.skip(f"no PostgreSQL server: set {ENV} (see README, Development)")
    databases = Databases(url)
    yield databases
    databases.close()


@pytest.fixture
def database(request, monkeypatch):
    """Which database the test's cores and ``yak`` subprocesses use: ``None`` for the SQLite
    file in ``data_dir``, else the URL of a fresh PostgreSQL database, exported as
    ``YAK_DATABASE_URL`` for the test and its subprocesses and dropped afterwards."""
    kind = getattr(request, "param", "sqlite")
    if kind == "sqlite":
        monkeypatch.delenv("YAK_DATABASE_URL", raising=False)
        yield None
        return
    databases = request.getfixturevalue("postgres_databases")
    url = databases.create()
    monkeypatch.setenv("YAK_DATABASE_URL", url)
    try:
        yield url
    finally:
        databases.drop(url)


@pytest.fixture
def data_dir(tmp_path, monkeypatch, database):
    """A private Yak data directory, also exported as ``YAK_DATA_DIR`` for subprocesses (with
    ``database`` set, the database itself is on the PostgreSQL server)."""
    folder = tmp_path / "yakdata"
    folder.mkdir()
    monkeypatch.setenv("YAK_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def db(data_dir, database):
    """A migrated database: the file in ``data_dir``, or the PostgreSQL test database."""
    from yak.db.engine import open_database

    opened = open_database(data_dir, url=database)
    yield opened
    opened.close()


@pytest.fixture
def fake_api(monkeypatch):
    """A scripted fake Messages API on 127.0.0.1 (see ``tests/support/fake_api.py``).

    Sets ``ANTHROPIC_BASE_URL`` to it and ``ANTHROPIC_API_KEY=test-key`` for the test and its
    subprocesses; yields the :class:`~tests.support.fake_api.FakeAnthropic` (``script``,
    ``respond_with``, ``requests``, ``url``). Stopped after the test, hanging handlers included.
    """
    from tests.support.fake_api import FakeAnthropic

    fake = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    try:
        yield fake
    finally:
        fake.stop()


# --- the core ----------------------------------------------------------------------------------
@pytest.fixture
def timers():
    """The fake clock and the timers fired by hand that the test cores' refresh queues use."""
    from tests.support.clock import ManualTimers

    return ManualTimers()


@pytest.fixture
def model_clients():
    """The test cores' model clients: the real SDK against ``fake_api``, no retries (see
    ``tests/support/clients.py``); a test may change ``base_url`` or ``timeout_s``."""
    from tests.support.clients import ModelClients

    return ModelClients()


@pytest.fixture
def make_core(data_dir, loop, fake_api, timers, model_clients):
    """``make_core(**options)`` opens a core on ``data_dir`` with ``open_core(data_dir,
    **options)`` (``folder=`` another data directory: another machine on the same team
    database); by default with the ``timers`` clock and scheduler and the ``model_clients``
    (``model_client=None`` asks for the core's own), and in the edits rewrite form: the scripted
    replies of most tests are edits or whole documents (``rewrite_form=None`` asks for the
    settings' form, the tool where the endpoint supports it; the tool form's own tests say so).
    Each core has its own database connections, like another process sharing the database.
    Every core is closed after the test, on ``loop``.
    """
    from yak.bootstrap import open_core
    from yak.domain import RewriteForm

    opened = []

    def make(*, folder=data_dir, **options):
        options.setdefault("clock", timers.clock)
        options.setdefault("timer_scheduler", timers.schedule)
        options.setdefault("model_client", model_clients)
        options.setdefault("rewrite_form", RewriteForm.EDITS)
        core = open_core(folder, **options)
        opened.append(core)
        return core

    yield make
    for core in reversed(opened):
        loop.run_until_complete(core.aclose())
    loop.run_until_complete(model_clients.aclose())


@pytest.fixture
def core(make_core):
    """The application core on ``data_dir`` (``open_core``), talking to ``fake_api``, its refresh
    queue on the ``timers``; closed after the test."""
    return make_core()


@pytest.fixture
def memory_keyring():
    """An in-memory OS keyring for the test (``.passwords`` maps (service, user) to the secret);
    the previous backend is restored afterwards."""
    import keyring
    from keyring.backend import KeyringBackend
    from keyring.errors import PasswordDeleteError

    class MemoryKeyring(KeyringBackend):
        priority = 1

        def __init__(self) -> None:
            super().__init__()
            self.passwords: dict[tuple[str, str], str] = {}

        def get_password(self, service, username):
            return self.passwords.get((service, username))

        def set_password(self, service, username, password):
            self.passwords[(service, username)] = password

        def delete_password(self, service, username):
            if self.passwords.pop((service, username), None) is None:
                raise PasswordDeleteError("not stored")

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@dataclass
class Ran:
    """What one in-process ``yak`` command gave: its exit code and what it printed."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def yak(data_dir, capsys, monkeypatch):
    """Run ``yak ARGS`` through its entry point in this process (as ``python -m yak`` does) on
    ``data_dir``, with a chat model named ``claude-chat-test``; returns a ``Ran``."""
    from yak.cli import main

    monkeypatch.setenv("YAK_MODEL", "claude-chat-test")

    def run(*args) -> Ran:
        capsys.readouterr()
        code = main([*map(str, args)])
        out, err = capsys.readouterr()
        return Ran(code, out, err)

    return run
