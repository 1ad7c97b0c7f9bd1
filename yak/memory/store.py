"""MemoryStore: the one way memory documents are read and written (DESIGN.md section 3).

Synchronous (SQLAlchemy on SQLite); async callers run it on the database worker thread.
Every write passes the version it was based on; a stale version raises ``ConflictError`` and
writes nothing. Every applied write appends a revision. Hand writes (hand edit, import) go
through the ceiling check; a human may shrink or clear the document (no floor for hands).
"""

from __future__ import annotations

from yak.db import Database
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    RefreshAttempt,
    RefreshOutcome,
    Revision,
    RevisionSource,
    Workspace,
)


class MemoryStore:
    """Workspaces, their memory documents, revisions and refresh attempts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- workspaces -------------------------------------------------------------------------
    def open_workspace(self, path: str) -> Workspace:
        """Register (or find) the workspace for an existing folder and mark it opened.

        The path goes through ``normalize_workspace_path``; when no stored workspace has that key
        but one has the same ``(st_dev, st_ino)`` folder identity, that one is returned (an alias
        on a case-insensitive filesystem).

        Raises:
            WorkspaceNotFound: ``path`` does not exist or is not a directory.
        """
        raise NotImplementedError

    def find_workspace(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (key or folder identity), or ``None``; never creates.
        Works for an orphaned workspace whose folder is gone."""
        raise NotImplementedError

    def get_workspace(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        raise NotImplementedError

    def recent_workspaces(self, limit: int = 10) -> list[Workspace]:
        """Most recently opened first."""
        raise NotImplementedError

    def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move an (orphaned) workspace's memory, sessions and history to another existing folder.
        The id changes with the key. Raises ``WorkspaceNotFound`` (folder missing) or
        ``UsageError`` (that folder already has a workspace with a non-empty memory)."""
        raise NotImplementedError

    def set_memory_enabled(self, workspace_id: str, enabled: bool) -> Workspace:
        raise NotImplementedError

    # --- the document -----------------------------------------------------------------------
    def list_documents(self) -> list[MemorySummary]:
        """Every workspace with a memory (non-empty document or any revision), most recently
        updated first, each with ``orphaned`` set when its folder is gone."""
        raise NotImplementedError

    def read(self, workspace_id: str) -> MemoryDocument:
        """The current document; version 0 and empty content when never written."""
        raise NotImplementedError

    def write(self, workspace_id: str, content: str, *, expected_version: int,
              source: RevisionSource = RevisionSource.HAND, flags: tuple[str, ...] = ()
              ) -> MemoryDocument:
        """A hand write (editor, ``set``, ``edit``): CRLF/CR become LF; checked against the
        ceiling (``check_ceiling``); appends a revision; returns the new document.

        Writing the same content as stored returns the stored document unchanged (no revision).

        Raises:
            CeilingExceeded: over 200 lines or 25,000 characters; nothing written.
            ConflictError: ``expected_version`` is not the stored version; nothing written.
            UsageError: content contains NUL characters.
        """
        raise NotImplementedError

    def apply_rewrite(self, workspace_id: str, content: str, *, base_version: int,
                      model: str | None, session_ids: tuple[str, ...],
                      watermarks: dict[str, str], flags: tuple[str, ...] = ()) -> MemoryDocument:
        """Apply an LLM rewrite that already passed the guards, and advance the session
        watermarks (``{session_id: last folded message id}``) in the same transaction.

        Raises:
            ConflictError: the document changed since ``base_version`` (the rewrite is
                superseded); nothing written, watermarks unchanged.
        """
        raise NotImplementedError

    def advance_watermarks(self, watermarks: dict[str, str]) -> None:
        """Advance session watermarks without a write (the memory was already up to date).
        A watermark never moves backwards."""
        raise NotImplementedError

    def history(self, workspace_id: str) -> list[Revision]:
        """Revisions newest first."""
        raise NotImplementedError

    def get_revision(self, workspace_id: str, revision_id: str) -> Revision:
        """Accepts a full id or a unique prefix (at least 6 characters) of one.
        Raises ``RevisionNotFound``."""
        raise NotImplementedError

    def restore(self, workspace_id: str, revision_id: str, *,
                expected_version: int | None = None) -> MemoryDocument:
        """Make a revision's content current again, as a new ``restore`` revision.
        ``expected_version`` None means "whatever is current" (CLI). Raises
        ``RevisionNotFound``, ``ConflictError``."""
        raise NotImplementedError

    def clear(self, workspace_id: str, *, expected_version: int | None = None) -> MemoryDocument:
        """Empty the document as a new ``clear`` revision (restorable from history)."""
        raise NotImplementedError

    def import_bytes(self, workspace_id: str, data: bytes, *,
                     expected_version: int | None = None) -> MemoryDocument:
        """Import a file's bytes (UTF-8/16/32 with or without BOM, CRLF) as an ``import``
        revision, through the ceiling check. Raises ``UsageError`` for bytes that are not text,
        ``CeilingExceeded``, ``ConflictError``."""
        raise NotImplementedError

    def export_bytes(self, workspace_id: str, fmt: str = "text") -> bytes:
        """``text``: exactly the document, UTF-8 without BOM, LF. ``markdown``: a ``# <folder>``
        title line, a blank line, then the document. ``json``: workspace, metadata, the document
        and the history (revisions newest first). Raises ``UsageError`` for another format."""
        raise NotImplementedError

    # --- refresh attempts -------------------------------------------------------------------
    def record_attempt(self, outcome: RefreshOutcome, *, base_version: int,
                       rebuild: bool = False) -> RefreshAttempt:
        """Store a refresh attempt (every one, applied or not)."""
        raise NotImplementedError

    def attempts(self, workspace_id: str, limit: int = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first."""
        raise NotImplementedError

    def last_attempt(self, workspace_id: str) -> RefreshAttempt | None:
        raise NotImplementedError
