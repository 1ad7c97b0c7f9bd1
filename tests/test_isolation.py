"""The test suite itself must never write into a developer's real Yak folders."""

import os

import platformdirs

from tests.support.cli import yak


def test_yak_subprocesses_in_tests_use_a_private_data_directory(tmp_path):
    """A ``yak`` command started by a test with no explicit data directory writes its database
    under the test's own folder, and the platform folders point into the test sandbox."""
    folder = tmp_path / "proj"
    folder.mkdir()
    result = yak("memory", "set", "-w", folder, stdin="a note\n", text=True)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "yakdata-default" / "yak.db").exists()
    home_data = os.path.expanduser("~/.local/share")
    assert not platformdirs.user_data_dir("yak", "Yak").startswith(home_data)
