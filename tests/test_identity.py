"""A workspace's shared identity (``yak.identity``): the remote URL normalized, the remote read
from real repositories made by ``git`` (plain, a subfolder, several remotes, none, a worktree).
The team database's use of it (two clones, one document) is in ``tests/test_postgresql.py``."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from yak.identity import normalize_remote, remotes, shared_key
from yak.paths import normalize_workspace_path

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/app.git",
        "git@github.com:acme/app",
        "ssh://git@github.com/acme/app.git",
        "ssh://git@github.com:22/acme/app",
        "https://github.com/acme/app.git",
        "https://github.com/acme/app/",
        "https://user:s3cr3t-token@GitHub.COM/acme/app.git",
        "http://oauth2:glpat-abcdef@github.com:443/acme/app.git/",
        "git://github.com/acme/app.git",
        "  https://github.com/acme/app.git  ",
    ],
)
def test_every_spelling_of_one_remote_is_one_identity_without_credentials(url):
    """ssh, scp-like and https forms, with or without ``.git``, a port, credentials or a
    trailing slash, and any case of the host, normalize to ``github.com/acme/app``."""
    assert normalize_remote(url) == "github.com/acme/app"


def test_different_repositories_stay_apart_and_local_remotes_have_no_identity():
    """Another owner, another repository or a path differing in case are other identities; a
    remote that is a local path or ``file://`` is no shared identity at all."""
    assert normalize_remote("git@github.com:acme/app-api.git") == "github.com/acme/app-api"
    assert normalize_remote("git@github.com:Acme/App.git") == "github.com/Acme/App"
    assert normalize_remote("git@gitlab.example.org:group/sub/app.git") == (
        "gitlab.example.org/group/sub/app"
    )
    for local in ("/srv/git/app.git", "../app.git", "file:///srv/git/app.git", "~/app.git", ""):
        assert normalize_remote(local) is None, local


def test_the_remotes_of_a_config_file_are_read_with_their_first_url():
    """Each ``[remote "name"]`` gives its first ``url``; other sections' ``url`` keys (a
    submodule's) are not remotes."""
    config = (
        "[core]\n\tbare = false\n"
        '[remote "upstream"]\n\turl = git@github.com:acme/app.git\n\tfetch = +refs/*\n'
        '[submodule "lib"]\n\turl = https://example.com/lib.git\n'
        '[remote "origin"]\n\turl = "https://github.com/me/app.git"\n'
        "\turl = https://mirror.example.com/app.git\n"
    )
    assert remotes(config) == {
        "upstream": "git@github.com:acme/app.git",
        "origin": "https://github.com/me/app.git",
    }


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@needs_git
def test_a_clone_is_keyed_by_origin_and_the_path_inside_it(tmp_path):
    """A repository's root is ``git:<remote>``, a subfolder adds ``//<path inside>``; with
    several remotes ``origin`` wins, and without ``origin`` the first by name."""
    repo = tmp_path / "work" / "app"
    (repo / "backend" / "api").mkdir(parents=True)
    git("init", "-q", cwd=repo)
    git("remote", "add", "upstream", "git@github.com:acme/app.git", cwd=repo)
    git("remote", "add", "zz-fork", "git@github.com:zz/app.git", cwd=repo)
    assert shared_key(str(repo)) == "git:github.com/acme/app"
    git("remote", "add", "origin", "https://bob:tok@github.com/bob/app.git", cwd=repo)
    key = normalize_workspace_path(str(repo / "backend" / "api"))
    assert shared_key(key) == "git:github.com/bob/app//backend/api"
    assert shared_key(normalize_workspace_path(str(repo))) == "git:github.com/bob/app"


@needs_git
def test_a_worktree_has_its_repository_identity_and_a_folder_without_remote_has_none(tmp_path):
    """A linked worktree (``.git`` is a file) reads the main repository's remote; a repository
    without a remote and a folder outside any repository have no shared identity."""
    repo = tmp_path / "app"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "README").write_text("x\n")
    git("add", "README", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "one", cwd=repo)
    assert shared_key(str(repo)) is None  # no remote
    git("remote", "add", "origin", "git@example.com:team/app.git", cwd=repo)
    worktree = tmp_path / "app-feature"
    git("worktree", "add", "-q", str(worktree), cwd=repo)
    assert (worktree / ".git").is_file()
    assert shared_key(str(worktree)) == "git:example.com/team/app"
    plain = tmp_path / "notes"
    plain.mkdir()
    assert shared_key(str(plain)) is None
