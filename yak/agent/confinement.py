"""The workspace root every tool path is confined to, and the result and error types the tools
share ("The agent" and "Confinement" in docs/agent.md).

Every path a tool receives is resolved (``..`` collapsed, symlinks followed) and must stay inside
the workspace root; anything else is refused with an error the model sees, and nothing outside
is read or written. Refused outright: ``..`` escapes, absolute paths outside the root, symlinks
whose target is outside, Windows drive and UNC paths (``C:\\x``, ``\\\\server\\share``), NUL
characters. Backslashes count as separators everywhere, so ``..\\secret`` is ``../secret``.

Checking a path and then opening it again would follow a link swapped in between, so files are
opened with :meth:`WorkspaceRoot.open`: from a descriptor of the root, one component at a time,
never following a link implicitly (``O_NOFOLLOW`` relative to the folder already opened); a link
met on the way is read and followed by hand only while it stays inside. Whatever happens to the
names meanwhile, the descriptor returned is a file under the root.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DRIVE_PATH = re.compile(r"^[A-Za-z]:")


class ToolError(Exception):
    """A tool call the model got wrong; ``str()`` is what the model is told."""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call did.

    ``output`` is what the model is told (capped); ``summary`` one line for the user
    ("read 120 lines", "refused: outside the workspace"); ``target`` the path, pattern or
    command.
    """

    ok: bool
    output: str
    summary: str
    target: str


class WorkspaceRoot:
    """Resolves paths the model sends against a workspace root and refuses escapes."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.realpath(os.fspath(root)))

    def resolve(self, path: Any, *, default: str | None = None) -> Path:
        """The real path for ``path`` (relative to the root, or absolute inside it).

        Raises:
            ToolError: empty, not text, a drive/UNC path, a NUL, outside the root once
                resolved (``..``, absolute elsewhere, a symlink pointing out), or the root
                folder no longer exists.
        """
        if path is None or path == "":
            if default is None:
                raise ToolError("A path is required.")
            path = default
        if not isinstance(path, str):
            raise ToolError("The path must be a string.")
        if not self.root.is_dir():  # never recreate a deleted workspace by writing into it
            raise ToolError(f"The workspace folder {self.root} no longer exists.")
        if "\0" in path:
            raise ToolError("The path contains a NUL character.")
        if DRIVE_PATH.match(path) or path.startswith(("\\\\", "//")):
            raise ToolError(
                f"Refused: {path!r} is a drive or network path; use a path relative "
                "to the workspace."
            )
        text = path.replace("\\", "/")
        candidate = Path(text) if os.path.isabs(text) else self.root / text
        resolved = Path(os.path.realpath(candidate))
        if not self.contains(resolved):
            raise ToolError(
                f"Refused: {path!r} is outside the workspace; only paths inside "
                f"{self.root} can be used."
            )
        return resolved

    def contains(self, resolved: Path) -> bool:
        """Whether an already resolved path is the root or inside it."""
        return resolved == self.root or self.root in resolved.parents

    def inside(self, path: Path) -> bool:
        """Whether ``path``'s real location (symlinks followed) is inside the root."""
        try:
            return self.contains(Path(os.path.realpath(path)))
        except (OSError, ValueError):
            return False

    def relative(self, resolved: Path) -> str:
        """``resolved`` as a workspace-relative POSIX path (``.`` for the root)."""
        rel = resolved.relative_to(self.root).as_posix()
        return rel or "."

    def open(self, resolved: Path, flags: int, *, shown: str, parents: bool = False) -> int:
        """Open a path :meth:`resolve` returned, race-free (see :func:`open_beneath`).

        Args:
            resolved: the path from :meth:`resolve`.
            flags: ``os.open`` flags.
            shown: the path as the model sent it, for the refusal.
            parents: create missing folders on the way.

        Returns:
            An open descriptor (close it).

        Raises:
            ToolError: a link swapped in since the check leads outside (the usual refusal).
            OSError: the open failed.
        """
        try:
            return open_beneath(self.root, self.relative(resolved), flags, parents=parents)
        except Escape:
            raise ToolError(
                f"Refused: {shown!r} is outside the workspace; only paths inside "
                f"{self.root} can be used."
            ) from None

    def read_file(self, resolved: Path, *, shown: str, limit: int | None = None) -> bytes:
        """The bytes of a regular file, opened race-free.

        Args:
            resolved: the checked path.
            shown: the path as the model gave it, for sentences.
            limit: read at most this many bytes (``None``: the whole file).

        Raises:
            ToolError: outside (as :meth:`open`), a folder, or not a regular file.
            OSError: missing or unreadable.
        """
        fd = self.open(resolved, os.O_RDONLY | _NONBLOCK, shown=shown)
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            os.close(fd)
            raise
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                raise ToolError(f"{self.relative(resolved)} is a folder; use list_directory.")
            raise ToolError(f"{self.relative(resolved)} is not a regular file.")
        with os.fdopen(fd, "rb") as handle:
            return handle.read() if limit is None else handle.read(limit)


MAX_LINK_HOPS = 40
_BENEATH = hasattr(os, "O_NOFOLLOW") and os.open in os.supports_dir_fd
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)


class Escape(ToolError):
    """A path (or a link on its way) led outside the workspace while it was being opened."""


def _parts(text: str) -> list[str]:
    return [part for part in text.split("/") if part not in ("", ".")]


def open_beneath(
    root: Path, rel: str, flags: int, mode: int = 0o666, *, parents: bool = False
) -> int:
    """Open ``rel`` (a POSIX path relative to ``root``) without ever leaving ``root``.

    Each component is opened relative to the folder descriptor before it with ``O_NOFOLLOW``;
    a symlink met on the way is read and its target walked the same way (an absolute target
    must name a place under ``root``), at most :data:`MAX_LINK_HOPS` times.

    Args:
        root: the real path of the workspace root.
        rel: the path inside it (``.`` or ``""`` for the root itself).
        flags: ``os.open`` flags for the last component (``O_NOFOLLOW`` is added).
        mode: permission bits when ``O_CREAT`` creates the file.
        parents: create missing folders on the way (mode 0o777 less the umask).

    Returns:
        An open descriptor (close it).

    Raises:
        Escape: a ``..`` or a link would lead outside ``root``.
        OSError: the open failed (missing, a folder opened for writing, too many links...).
    """
    if not _BENEATH:  # no dir_fd (Windows): open, then check where the descriptor led
        fd = os.open(root / rel, flags | getattr(os, "O_BINARY", 0), mode)
        real = Path(os.path.realpath(root / rel))
        if real != root and root not in real.parents:
            os.close(fd)
            raise Escape(f"Refused: {rel!r} is outside the workspace.")
        return fd
    stack = [os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)]
    parts = _parts(rel)
    hops = 0
    try:
        while True:
            if not parts:
                return os.open(".", flags | _CLOEXEC, mode, dir_fd=stack[-1])
            name = parts.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise Escape(f"Refused: {rel!r} leads outside the workspace.")
                os.close(stack.pop())
                continue
            last = not parts
            try:
                if last:
                    return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=stack[-1])
                stack.append(
                    os.open(
                        name,
                        os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC,
                        dir_fd=stack[-1],
                    )
                )
                continue
            except FileNotFoundError:
                if last or not parents:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=stack[-1])
                parts.insert(0, name)
                continue
            except OSError as exc:
                if exc.errno not in _LINK_ERRNOS:
                    raise
                try:
                    target = os.readlink(name, dir_fd=stack[-1])
                except OSError:
                    raise exc from None  # not a link: a file where a folder was expected
            hops += 1
            if hops > MAX_LINK_HOPS:
                raise OSError(errno.ELOOP, "Too many levels of symbolic links")
            if os.path.isabs(target):
                inner = os.path.relpath(target, root) if target.startswith(str(root)) else ".."
                if inner == ".." or inner.startswith("../"):
                    raise Escape(f"Refused: {rel!r} leads through a link outside the workspace.")
                while len(stack) > 1:
                    os.close(stack.pop())
                target = inner
            parts = _parts(target) + parts
    finally:
        for fd in stack:
            os.close(fd)


def walk_beneath(root: Path, rel: str) -> Iterator[tuple[str, list[str], list[str], int]]:
    """``os.fwalk`` of the folder ``rel`` under ``root``, opened with :func:`open_beneath`:
    ``(folder relative to root, folders, files, folder descriptor)``. Linked folders are listed
    in ``folders`` but never entered; the descriptors are only valid during their step.

    Raises:
        Escape, OSError: as :func:`open_beneath` for ``rel``.
    """
    top = open_beneath(root, rel, os.O_RDONLY | _DIRECTORY)
    base = "/".join(_parts(rel))
    try:
        for folder, dirs, files, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            inner = "/".join(_parts(folder))
            yield "/".join(p for p in (base, inner) if p), dirs, files, dir_fd
    finally:
        os.close(top)


def is_link(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in the folder ``dir_fd`` is a symlink (``False`` if it vanished)."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
