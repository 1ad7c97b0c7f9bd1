"""Shared fixtures. Qt runs offscreen; no test needs a display, the network or a key."""

from __future__ import annotations

import os
import tempfile

# Before any QApplication exists (QT_TESTING.md): without it a headless machine aborts pytest.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Never let a developer's real key or data directory leak into tests.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ.pop("YAK_DATA_DIR", None)
os.environ.pop("YAK_MODEL", None)
os.environ.pop("YAK_MEMORY_MODEL", None)
os.environ.pop("YAK_DEBOUNCE_SECONDS", None)
# Never write into the developer's real data, log or config folders (platformdirs and Qt's
# QSettings follow the XDG variables on Linux), here or in subprocesses.
_SANDBOX = tempfile.mkdtemp(prefix="yak-tests-")
for _name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
    os.environ[_name] = os.path.join(_SANDBOX, _name.lower())
# Never touch the real OS keyring, here or in subprocesses: the "fail" backend stores nothing
# (tests that need a keyring install an in-memory one with the ``memory_keyring`` fixture).
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"

import pytest


@pytest.fixture(autouse=True)
def _private_default_data_dir(tmp_path, monkeypatch):
    """Every test, and every ``yak`` subprocess it starts, gets its own data directory even
    when it does not ask for ``data_dir``: nothing reaches the platform data directory."""
    monkeypatch.setenv("YAK_DATA_DIR", str(tmp_path / "yakdata-default"))


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A private Yak data directory, also exported as ``YAK_DATA_DIR`` for subprocesses."""
    folder = tmp_path / "yakdata"
    folder.mkdir()
    monkeypatch.setenv("YAK_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def db(data_dir):
    """A migrated file-backed database in ``data_dir``."""
    from yak.db import open_database

    database = open_database(data_dir)
    yield database
    database.close()


@pytest.fixture
def fake_api(monkeypatch):
    """A scripted fake Messages API on 127.0.0.1 (see ``tests/fake_anthropic.py``).

    Sets ``ANTHROPIC_BASE_URL`` to it and ``ANTHROPIC_API_KEY=test-key`` for the test and its
    subprocesses; yields the :class:`fake_anthropic.FakeAnthropic` (``script``,
    ``respond_with``, ``requests``, ``url``). Stopped after the test, hanging handlers included.
    """
    from fake_anthropic import FakeAnthropic

    fake = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    try:
        yield fake
    finally:
        fake.stop()


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
