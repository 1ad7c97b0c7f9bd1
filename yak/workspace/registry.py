"""The workspace registry: every front end turns a path into a workspace here, with the same
errors (see ``docs/workspaces.md``, "The workspace key").

Three ways to resolve a path:

- :meth:`WorkspaceRegistry.open` (the desktop app): the folder must exist; it is registered
  when new and marked opened (the recent list);
- :meth:`WorkspaceRegistry.for_write` (commands that write): the folder must exist; it is
  registered when new, without touching the recent list;
- :meth:`WorkspaceRegistry.for_read` (commands that only read): a stored workspace is found by
  key even when its folder is gone (orphaned); an existing folder never stored reads as an
  unsaved workspace with an empty document, and nothing is created.

A folder without a memory of its own may be offered another one ("Scopes" in
docs/workspaces.md): the enclosing workspace's (:meth:`WorkspaceRegistry.enclosing`), or an
orphan's that looks like the folder before a rename (:meth:`WorkspaceRegistry.renamed_from`).
A git worktree can share its main checkout's document when the person says so
(:meth:`WorkspaceRegistry.link`).
"""

from __future__ import annotations

import errno
import os
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from yak import paths
from yak.aio import Offload, to_thread
from yak.domain import MemorySummary, Workspace
from yak.errors import UsageError, WorkspaceNotFound
from yak.text import shown
from yak.workspace import git

if TYPE_CHECKING:  # a type only: the ports' dataclasses cost a reading command's start
    from yak.ports import WorkspaceRepository


def folder_error(path: str) -> WorkspaceNotFound:
    """The error for a path that names no folder: a file (or a link to one), a folder whose full
    path is longer than the system allows, or nothing. The path is shown with control
    characters escaped and shortened in the middle (``yak.text.shown``)."""
    target = os.path.expanduser(path)
    if os.path.exists(target) and not os.path.isdir(target):
        return WorkspaceNotFound(f"{shown(path)} is a file, not a folder")
    try:
        os.stat(os.path.realpath(target))
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            length = len(os.path.realpath(target))
            return WorkspaceNotFound(
                f"the folder's full path is too long for this system ({length:,} characters): "
                f"{shown(path)}"
            )
    except ValueError:  # a NUL: normalize() refuses it with its own sentence
        pass
    return WorkspaceNotFound(f"no such folder: {shown(path)}")


def normalize(path: str) -> str:
    """``normalize_workspace_path``; a path that cannot be one is a ``UsageError``."""
    try:
        return paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# Names nearly every project has: a document naming them says nothing about which one it is.
COMMON_NAMES = frozenset(
    {
        "readme",
        "readme.md",
        "readme.rst",
        "readme.txt",
        "license",
        "license.md",
        "changelog",
        "changelog.md",
        "makefile",
        "src",
        "lib",
        "tests",
        "test",
        "docs",
        "build",
        "dist",
        "setup.py",
        "pyproject.toml",
        "package.json",
        "requirements.txt",
        "node_modules",
        "agents.md",
        "claude.md",
        "scripts",
        "bin",
        "config",
        "main.py",
        "index.js",
    }
)
MIN_NAME_CHARS = 4  # a shorter file or folder name ("app", "db") is found in any text
_NAME_WORD = re.compile(r"\w[\w.-]*")  # a file or folder name as a document writes it


def folder_entries(folder: str) -> list[str]:
    """The names of the files and folders directly in ``folder`` (not hidden), or ``[]`` when
    it cannot be listed."""
    try:
        return [name for name in os.listdir(folder) if not name.startswith(".")]
    except OSError:
        return []


def names_in_common(entries: list[str], document: str) -> int:
    """How many of a folder's own file and folder names (``entries``) a memory document
    names, leaving out the ones nearly every project has (:data:`COMMON_NAMES`) and the
    shorter ones: how much the document looks written about this folder. Pure."""
    words = {word.rstrip(".") for word in _NAME_WORD.findall(document.casefold())}
    return sum(
        1
        for name in {entry.casefold() for entry in entries}
        if name not in COMMON_NAMES and len(name) >= MIN_NAME_CHARS and name in words
    )


class WorkspaceRegistry:
    """Path → workspace for every front end, and the workspaces' own settings.

    Args:
        repository: the stored workspaces.
        offload: runs each repository call (``yak.aio``): on a worker thread, or in place for
            a command that only reads.
    """

    def __init__(self, repository: WorkspaceRepository, *, offload: Offload = to_thread) -> None:
        self._repository = repository
        self._offload = offload

    async def open(self, path: str | os.PathLike[str]) -> Workspace:
        """Register (or find) the workspace of an existing folder and mark it opened.

        Raises:
            UsageError: an empty path. WorkspaceNotFound: no such folder. StoreError.
        """
        text = os.fspath(path)
        if not text.strip():
            raise UsageError("Choose a folder to open.")
        if paths.folder_identity(normalize(text)) is None:
            raise folder_error(text)
        return await self._offload(self._repository.open, text, mark_opened=True)

    async def for_write(self, path: str) -> Workspace:
        """The workspace of ``path`` for a command that writes: the folder must exist; it is
        registered when new, without marking it opened.

        Raises:
            WorkspaceNotFound: no such folder (or a file). UsageError: not a usable path.
        """
        if paths.folder_identity(normalize(path)) is None:
            raise folder_error(path)
        found = await self._offload(self._repository.find, path)
        if found is not None:
            return found
        return await self._offload(self._repository.open, path, mark_opened=False)

    async def for_read(self, path: str) -> tuple[Workspace, bool]:
        """The workspace of ``path`` for a command that only reads, and whether it is stored.

        Raises:
            WorkspaceNotFound: not stored and no such folder.
        """
        found = await self._offload(self._repository.find, path)
        if found is not None:
            return found, True
        key = normalize(path)
        if paths.folder_identity(key) is None:
            raise folder_error(path)
        unsaved = Workspace(id=paths.workspace_id_for(key), path=key, created_at=datetime.now(UTC))
        return unsaved, False

    async def find(self, path: str) -> Workspace | None:
        """The stored workspace of ``path``, or ``None``; never creates one."""
        return await self._offload(self._repository.find, path)

    async def get(self, workspace_id: str) -> Workspace:
        """The stored workspace. Raises ``WorkspaceNotFound`` for an unknown id."""
        return await self._offload(self._repository.get, workspace_id)

    async def recent(self, limit: int = 10) -> list[Workspace]:
        """Recently opened workspaces, most recent first (at most ``limit``)."""
        return await self._offload(self._repository.recent, limit)

    async def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move an orphaned workspace's memory and history to another existing folder.

        Returns the workspace under its new id.

        Raises:
            WorkspaceNotFound: no such folder (or a file). UsageError: that folder has a memory
                of its own, or is not a usable path.
        """
        if paths.folder_identity(normalize(new_path)) is None:
            raise folder_error(new_path)
        return await self._offload(self._repository.reattach, workspace_id, new_path)

    async def set_memory_enabled(self, workspace_id: str, *, enabled: bool) -> Workspace:
        """Turn memory (injection into chats and refreshes) on or off for a workspace."""
        return await self._offload(
            self._repository.set_memory_enabled, workspace_id, enabled=enabled
        )

    async def enclosing(self, path: str) -> MemorySummary | None:
        """The nearest workspace above ``path`` whose document is not empty, when ``path`` has
        no memory of its own (not stored, or an empty document); else ``None``. Only stored
        keys are compared: nothing above ``path`` is read from the disk.

        Raises:
            UsageError: not a usable path. StoreError.
        """
        key = normalize(path)
        above = paths.enclosing_keys(key)
        if await self._offload(self._repository.linked_to, paths.workspace_id_for(key)):
            return None
        found = await self._offload(self._repository.memories_at, [key, *above])
        if key in found:
            return None
        return next((found[parent] for parent in above if parent in found), None)

    async def renamed_from(self, path: str) -> MemorySummary | None:
        """The orphan that looks like the folder ``path`` before a rename: a workspace whose
        folder no longer exists, with a non-empty document, not declined for this folder
        (:meth:`decline_rename`): one with the same folder name, the most recently updated
        first; else, for a folder renamed in place, one in the same parent folder whose
        document names the most of this folder's own files and folders
        (:func:`names_in_common`, at least one). ``None`` when ``path`` has a memory of its
        own or nothing fits.

        Raises:
            UsageError: not a usable path. StoreError.
        """
        key = normalize(path)
        name = os.path.basename(key)
        if not name:
            return None

        def find() -> MemorySummary | None:
            if self._repository.memories_at([key]):
                return None
            if self._repository.linked_to(paths.workspace_id_for(key)) is not None:
                return None
            declined = self._repository.declined_renames(key)
            named = next(
                (
                    orphan
                    for orphan in self._repository.orphans_named(name)
                    if orphan.workspace.id not in declined and orphan.workspace.path != key
                ),
                None,
            )
            if named is not None:
                return named
            beside = [
                (orphan, text)
                for orphan, text in self._repository.orphans_beside(key)
                if orphan.workspace.id not in declined and orphan.workspace.path != key
            ]
            if not beside:
                return None
            entries = folder_entries(key)
            scored = [(names_in_common(entries, text), orphan) for orphan, text in beside]
            best = max(scored, key=lambda pair: pair[0])  # the first (newest) of the best
            return best[1] if best[0] > 0 else None

        return await self._offload(find)

    async def decline_rename(self, path: str, workspace_id: str) -> None:
        """Remember that the orphan ``workspace_id`` is not the folder ``path`` renamed, so
        :meth:`renamed_from` no longer offers it there.

        Raises:
            UsageError: not a usable path. WorkspaceNotFound: unknown id. StoreError.
        """
        key = normalize(path)
        await self._offload(self._repository.decline_rename, key, workspace_id)

    async def link(self, path: str, to: str | None = None) -> tuple[Workspace, Workspace]:
        """Make the workspace of ``path`` use the memory document of the workspace of ``to``
        (default: ``path``'s main checkout when ``path`` is in a git worktree): reads, writes,
        history and proposals then go to that one document; conversations stay apart. Stored
        until :meth:`unlink`. Linking to a folder that itself uses another's document is
        refused.

        Returns:
            ``(workspace, target)``, both registered.

        Raises:
            UsageError: no ``to`` and ``path`` is no git worktree; the same folder; ``path``
                has a memory of its own. WorkspaceNotFound: a folder does not exist.
        """
        workspace = await self.for_write(path)
        if to is None:
            to = await self._offload(git.main_checkout, workspace.path)
            if to is None:
                raise UsageError(
                    f"{shown(workspace.path)} is not in a git worktree; name the folder whose "
                    "memory it should share with --to"
                )
        target = await self.for_write(to)
        await self._offload(self._repository.link, workspace.id, target.id)
        return workspace, target

    async def unlink(self, path: str) -> Workspace:
        """Stop the workspace of ``path`` using another's document; its own (as it was before
        the link, usually empty) is back. Returns the workspace it used.

        Raises:
            UsageError: it used no other workspace's document. WorkspaceNotFound.
        """
        workspace, stored = await self.for_read(path)
        target = None
        if stored:
            target = await self._offload(self._repository.unlink, workspace.id)
        if target is None:
            raise UsageError(f"{shown(workspace.path)} does not share another folder's memory")
        return target

    async def linked_to(self, workspace_id: str) -> Workspace | None:
        """The workspace whose document ``workspace_id`` uses, or ``None``."""
        return await self._offload(self._repository.linked_to, workspace_id)

    async def worktree_main(self, path: str) -> MemorySummary | None:
        """The main checkout's workspace when ``path`` is in a git worktree, has no memory of
        its own, uses no other document yet, and the main checkout's document is not empty;
        else ``None`` (what the window offers to share).

        Raises:
            UsageError: not a usable path. StoreError.
        """
        key = normalize(path)

        def find() -> MemorySummary | None:
            main = git.main_checkout(key)
            if main is None:
                return None
            if self._repository.linked_to(paths.workspace_id_for(key)) is not None:
                return None
            try:
                main_key = paths.normalize_workspace_path(main)
            except ValueError:
                return None
            found = self._repository.memories_at([key, main_key])
            return None if key in found else found.get(main_key)

        return await self._offload(find)
