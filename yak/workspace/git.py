"""Git worktrees, read from the files git leaves in the folder ("Scopes" in
docs/workspaces.md): no ``git`` process is started, so opening a folder stays cheap.

A linked worktree has a ``.git`` *file* holding ``gitdir: <repository>/.git/worktrees/<name>``,
and that folder holds ``commondir``, the path (often relative) of the repository's ``.git``
folder, whose parent is the main checkout. ``yak.identity.repository_root`` follows them (the
same walk keys a shared workspace by its repository). A submodule also has a ``.git`` file, but
its git folder has no ``commondir``, and a bare repository's folder is not named ``.git``:
neither is taken for a worktree.
"""

from __future__ import annotations

import os

from yak.identity import repository_root


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
    found = repository_root(folder)
    if found is None:
        return None
    top, git_dir = found
    if (top / ".git").is_dir() or git_dir.name != ".git":
        return None  # the main checkout itself, a submodule, or a bare repository's worktree
    main = str(git_dir.parent)
    inside = os.path.relpath(folder, top)
    return main if inside == os.curdir else os.path.normpath(os.path.join(main, inside))
