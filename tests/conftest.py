"""Shared fixtures. Qt runs offscreen; no test needs a display, the network or a key."""

from __future__ import annotations

import os

# Before any QApplication exists (QT_TESTING.md): without it a headless machine aborts pytest.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Never let a developer's real key or data directory leak into tests.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)
os.environ.pop("YAK_DATA_DIR", None)

import pytest  # noqa: E402


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
