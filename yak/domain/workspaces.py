"""Workspaces: a project folder, its review mode, what a view shows of it, and its row in the
memory list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class ReviewMode(StrEnum):
    """How a workspace's rewrites land: ``auto`` applies their supported lines and makes the
    doubtful ones wait for review; ``review`` makes every rewrite wait ("Review" in
    docs/memory.md)."""

    AUTO = "auto"
    REVIEW = "review"


@dataclass(frozen=True)
class Workspace:
    """A project folder. ``id`` is derived from ``path`` by :func:`yak.paths.workspace_id_for`
    ("The workspace key" in docs/workspaces.md)."""

    id: str
    path: str  # the normalized path, the key
    created_at: datetime
    last_opened_at: datetime | None = None
    memory_enabled: bool = True
    review_mode: ReviewMode = ReviewMode.AUTO
    # The instruction file (absolute path) whose managed block follows every applied revision
    # ("keep AGENTS.md in sync"), or ``None``.
    synced_file: str | None = None

    @property
    def name(self) -> str:
        """The folder's last path component, for titles and lists."""
        stripped = self.path.rstrip("/\\")
        return stripped.replace("\\", "/").rsplit("/", 1)[-1] or self.path


@dataclass(frozen=True)
class WorkspaceStamp:
    """What a view shows of a workspace, reduced to a few values that change whenever that
    view would (the watcher compares them to notice another process's writes; see "Live
    everywhere" in docs/ui.md).

    Attributes:
        version: the version of the document the workspace uses (0: never written).
        settings: its memory switch, review mode and kept-in-sync file.
        proposals: the id and base version of each proposal waiting for review, oldest
            first (a decision, a new proposal or a rebase changes it).
    """

    version: int = 0
    settings: tuple[bool, str, str | None] = (True, "auto", None)
    proposals: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class MemorySummary:
    """One row of the memory list: a workspace with a memory, without its content."""

    workspace: Workspace
    version: int
    lines: int
    chars: int
    updated_at: datetime | None
    flags: tuple[str, ...]
    orphaned: bool  # the folder no longer exists
    proposals: int = 0  # changes waiting for review
    valid_utf8: bool = True  # false: bytes another program wrote (``show --raw`` shows them)
