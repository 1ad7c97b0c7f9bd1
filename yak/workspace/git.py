"""Git worktrees, read from the files git leaves in the folder ("Scopes" in
docs/architecture.md): no ``git`` process is started, so opening a folder stays cheap.

A linked worktree has a ``.git`` *file* holding ``gitdir: <repository>/.git/worktrees/<name>``,
and that folder holds ``commondir``, the path (often relative) of the repository's ``.git``
folder, whose parent is the main checkout. A submodule also has a ``.git`` file, but its git
folder has no ``commondir``: it is not taken for a worktree.
"""

from __future__ import annotations

import os

GITDIR_PREFIX = "gitdir:"
_MAX_GIT_FILE_BYTES = 4096  # a .git file or commondir is one short line


def main_checkout(folder: str) -> str | None:
    """For ``folder`` inside a linked git worktree, the same folder in the repository's main
    checkout (``/wt/feature/api`` → ``/src/app/api``); ``None`` when ``folder`` is in no
    worktree (a main checkout, a plain folder, a submodule, a bare repository's worktree, or
    files that cannot be read).

    Args:
        folder: an absolute, normalized folder path (a workspace key).

    Returns:
        The main checkout's folder, ``os.path.normpath``-ed; it may not exist (a folder only
        in this worktree's branch).
    """
    current = folder
    while True:
        dotgit = os.path.join(current, ".git")
        if os.path.isdir(dotgit):
            return None  # the main checkout (or a plain repository) comes first
        if os.path.isfile(dotgit):
            main = _main_of(current, dotgit)
            if main is None:
                return None
            inside = os.path.relpath(folder, current)
            return main if inside == os.curdir else os.path.normpath(os.path.join(main, inside))
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _main_of(worktree: str, dotgit: str) -> str | None:
    """The main checkout of the worktree whose ``.git`` file is ``dotgit``, or ``None``."""
    line = _first_line(dotgit)
    if line is None or not line.startswith(GITDIR_PREFIX):
        return None
    gitdir = os.path.join(worktree, line[len(GITDIR_PREFIX) :].strip())
    common = _first_line(os.path.join(gitdir, "commondir"))
    if not common:
        return None  # a submodule's git folder: not a worktree
    common_dir = os.path.normpath(os.path.join(gitdir, common))
    if os.path.basename(common_dir) != ".git":
        return None  # a bare repository has no main checkout
    return os.path.dirname(common_dir)


def _first_line(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_GIT_FILE_BYTES)
    except OSError:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.splitlines()[0].strip() if text.strip() else None
