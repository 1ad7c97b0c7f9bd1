"""The workspace root every tool path is confined to, and the result and error types the tools
share ("The agent" in docs/architecture.md).

Every path a tool receives is resolved (``..`` collapsed, symlinks followed) and must stay inside
the workspace root; anything else is refused with an error the model sees, and nothing outside
is read or written. Refused outright: ``..`` escapes, absolute paths outside the root, symlinks
whose target is outside, Windows drive and UNC paths (``C:\\x``, ``\\\\server\\share``), NUL
characters. Backslashes count as separators everywhere, so ``..\\secret`` is ``../secret``.
"""

from __future__ import annotations

import os
import re
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
