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
