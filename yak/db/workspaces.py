"""The workspace repository: stored workspaces keyed by normalized path.

A workspace's key is ``normalize_workspace_path`` of its folder; its id is derived from the key.
Two spellings of one folder on a case-insensitive disk are one workspace: a new key whose folder
has the ``(st_dev, st_ino)`` of a stored workspace's folder is that workspace (an alias). On a
team database (``shared_identity``) a folder in a git repository with a remote is keyed by the
remote and the path inside the repository instead (``yak.identity.shared_key``), so clones at
different paths on different machines are one workspace; its ``path`` is then this machine's
folder. See ``docs/workspaces.md``, "The workspace key".

Queries: ORM rows for the writes (a workspace's row is read, changed and flushed), and the
shared SQL texts of ``yak.db.reads`` for the reads (the command line's reader runs the same
ones).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from yak import identity, paths
from yak.db import reads
from yak.db.engine import Database
from yak.db.models import (
    ChatMessageRow,
    ChatSessionRow,
    DeclinedRenameRow,
    MemoryDocumentRow,
    MemoryProposalRow,
    MemoryRevisionRow,
    MemoryTombstoneRow,
    RefreshAttemptRow,
    WorkspaceLinkRow,
    WorkspaceRow,
)
from yak.db.portable import insert_ignore
from yak.db.rows import (
    SessionQuery,
    existing_folder,
    identity_columns,
    now,
    to_workspace,
    workspace_key,
    workspace_row,
)
from yak.domain import MemorySummary, ReviewMode, Workspace
from yak.errors import UsageError

log = logging.getLogger(__name__)


class SqlWorkspaceRepository:
    """Workspaces in the database (implements ``yak.ports.WorkspaceRepository``)."""

    def __init__(self, db: Database, *, shared_identity: bool = False) -> None:
        """Args:
        db: the open database.
        shared_identity: key a folder in a git repository with a remote by that remote and
            its path inside the repository (a team database, where machines' paths differ).
        """
        self.db = db
        self.shared_identity = shared_identity
        # A shared workspace's folder on this machine (the stored path is the last opener's).
        self._here: dict[str, str] = {}

    def _identify(self, key: str) -> tuple[str, str | None]:
        """The workspace id for the folder ``key`` and its shared identity (``None``: keyed
        by path)."""
        shared = identity.shared_key(key) if self.shared_identity else None
        return paths.workspace_id_for(shared or key), shared

    def _workspace(self, row: WorkspaceRow) -> Workspace:
        """The row as a workspace, with this machine's folder for a shared one it has opened."""
        return self._local(to_workspace(row))

    def _local(self, workspace: Workspace) -> Workspace:
        """``workspace`` with this machine's folder for a shared one it has opened."""
        here = self._here.get(workspace.id)
        return workspace if here is None else replace(workspace, path=here)

    def _found_at(
        self, row: WorkspaceRow, key: str, folder: tuple[int, int], *, shared: bool
    ) -> None:
        """Record that ``row``'s folder is, on this machine, at ``key`` with the identity
        ``folder`` (a shared workspace's stored path is its last opener's)."""
        row.st_dev, row.st_ino = identity_columns(folder)
        if shared:
            row.path = key
            self._here[row.id] = key

    def _stored(
        self, s: Session, key: str, workspace_id: str, *, shared: bool
    ) -> WorkspaceRow | None:
        """The row of the workspace stored for the folder ``key`` (by id, else an alias by
        folder identity unless ``shared``: see ``yak.db.reads.find_workspace``)."""
        found = reads.find_workspace(SessionQuery(s), key, workspace_id, by_folder=not shared)
        return None if found is None else s.get(WorkspaceRow, found.id)

    def open(self, path: str, *, mark_opened: bool = True) -> Workspace:
        """Register (or find) the workspace for an existing folder.

        The stored folder identity is refreshed on every open.

        Args:
            path: the folder as a user gave it.
            mark_opened: set ``last_opened_at`` (the app's recent workspaces); the command line
                passes ``False`` so scripting does not reorder the app's recent list.

        Raises:
            WorkspaceNotFound: ``path`` does not exist or is not a directory.
        """
        key, folder = existing_folder(path)
        st_dev, st_ino = identity_columns(folder)
        workspace_id, shared = self._identify(key)
        moment = now()
        with self.db.session() as s:
            row = self._stored(s, key, workspace_id, shared=shared is not None)
            if row is None:
                insert_ignore(
                    s,
                    WorkspaceRow,
                    id=workspace_id,
                    path=key,
                    st_dev=st_dev,
                    st_ino=st_ino,
                    memory_enabled=True,
                    created_at=moment,
                    last_opened_at=moment if mark_opened else None,
                    shared_key=shared,
                )
                insert_ignore(
                    s,
                    MemoryDocumentRow,
                    workspace_id=workspace_id,
                    content="",
                    version=0,
                    flags=[],
                    updated_at=None,
                )
                row = s.get(WorkspaceRow, workspace_id)
                assert row is not None
            self._found_at(row, key, folder, shared=shared is not None)
            if mark_opened:
                row.last_opened_at = moment
            s.flush()
            return self._workspace(row)

    def find(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (key or folder identity), or ``None``; never
        creates. Works for an orphaned workspace whose folder is gone."""
        key = workspace_key(path)
        workspace_id, shared = self._identify(key)
        with self.db.session() as s:
            found = reads.find_workspace(
                SessionQuery(s), key, workspace_id, by_folder=shared is None
            )
        if found is not None and shared is not None:
            self._here[found.id] = key
        return None if found is None else self._local(found)

    def get(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        with self.db.session() as s:
            return self._local(reads.existing_workspace(SessionQuery(s), workspace_id))

    def recent(self, limit: int = 10) -> list[Workspace]:
        """Most recently opened first, at most ``limit``."""
        with self.db.session() as s:
            rows = s.scalars(
                select(WorkspaceRow)
                .where(WorkspaceRow.last_opened_at.is_not(None))
                .order_by(WorkspaceRow.last_opened_at.desc())
                .limit(limit)
            )
            return [self._workspace(r) for r in rows]

    def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move a workspace's memory, sessions and history to another existing folder. The id
        changes with the key.

        When the target folder already has a workspace whose memory was never written (one only
        opened), the two merge: its sessions stay and this workspace's are added; the document
        and its history become this workspace's.

        Raises:
            WorkspaceNotFound: the folder does not exist.
            UsageError: that folder's workspace has a memory history of its own (even one
                emptied since: two histories would repeat version numbers), or uses another
                folder's memory.
        """
        key, folder = existing_folder(new_path)
        st_dev, st_ino = identity_columns(folder)
        target_id, shared = self._identify(key)
        with self.db.session() as s:
            source = workspace_row(s, workspace_id)
            target = self._stored(s, key, target_id, shared=shared is not None)
            if target is not None and target.id == source.id:
                source.st_dev, source.st_ino = st_dev, st_ino
                return self._workspace(source)
            if target is not None:
                linked = s.get(WorkspaceLinkRow, target.id)
                if linked is not None:
                    owner_path = workspace_row(s, linked.target_id).path
                    raise UsageError(
                        f"{target.path} uses the memory of {owner_path}; unlink it first "
                        "(yak memory unlink), then re-attach. Nothing was moved."
                    )
                target_doc = s.get(MemoryDocumentRow, target.id)
                if target_doc is not None and (target_doc.content or target_doc.version):
                    # Two histories would be mixed: versions repeated, numbering going back.
                    raise UsageError(
                        f"{target.path} has a memory history of its own (version "
                        f"{target_doc.version}); nothing was moved. To bring the text here, "
                        "export it (yak memory export -w OLD_FOLDER -o FILE) and import FILE."
                    )
                if target_doc is not None:
                    s.delete(target_doc)
                target_id = target.id
            else:
                s.add(
                    WorkspaceRow(
                        id=target_id,
                        path=key,
                        st_dev=st_dev,
                        st_ino=st_ino,
                        memory_enabled=source.memory_enabled,
                        review_mode=source.review_mode,
                        created_at=source.created_at,
                        last_opened_at=source.last_opened_at,
                        shared_key=shared,
                    )
                )
            s.flush()
            moving = select(MemoryTombstoneRow.key).where(
                MemoryTombstoneRow.workspace_id == workspace_id
            )
            s.execute(
                delete(MemoryTombstoneRow).where(
                    MemoryTombstoneRow.workspace_id == target_id,
                    MemoryTombstoneRow.key.in_(moving),
                )
            )
            for model in (
                MemoryDocumentRow,
                MemoryRevisionRow,
                RefreshAttemptRow,
                MemoryProposalRow,
                MemoryTombstoneRow,
                ChatSessionRow,
                ChatMessageRow,
            ):
                s.execute(
                    update(model)
                    .where(model.workspace_id == workspace_id)
                    .values(workspace_id=target_id)
                )
            s.delete(source)
            s.flush()
            moved = s.get(WorkspaceRow, target_id)
            assert moved is not None
            self._found_at(moved, key, folder, shared=shared is not None)
            log.info("re-attached workspace %s to %s (%s)", workspace_id, key, target_id)
            return self._workspace(moved)

    def set_memory_enabled(self, workspace_id: str, *, enabled: bool) -> Workspace:
        """Turn memory (injection and refresh) on or off for a workspace.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            row = workspace_row(s, workspace_id)
            row.memory_enabled = bool(enabled)
            return self._workspace(row)

    def set_synced_file(self, workspace_id: str, path: str | None) -> Workspace:
        """Keep ``path`` (absolute) in sync with the workspace's document after every applied
        revision, or stop (``None``).

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            row = workspace_row(s, workspace_id)
            row.synced_file = path
            return self._workspace(row)

    def set_review_mode(self, workspace_id: str, mode: ReviewMode) -> Workspace:
        """Set how a workspace's rewrites land: ``auto`` or ``review``.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            row = workspace_row(s, workspace_id)
            row.review_mode = str(ReviewMode(mode))
            return self._workspace(row)

    # --- scopes: memories a folder without its own could use ----------------------------------
    def memories_at(self, keys: Sequence[str]) -> dict[str, MemorySummary]:
        """The stored workspaces at exactly these keys whose document is not empty, by key."""
        with self.db.session() as s:
            return reads.memories_at(SessionQuery(s), keys)

    def orphans_named(self, name: str) -> list[MemorySummary]:
        """The workspaces whose folder is gone, whose folder's name is ``name`` and whose
        document is not empty, most recently updated first."""
        with self.db.session() as s:
            return reads.orphans_named(SessionQuery(s), name)

    def orphans_beside(self, folder: str) -> list[tuple[MemorySummary, str]]:
        """The orphans in the same parent folder as the key ``folder`` with a non-empty
        document, most recently updated first, each with its document's text."""
        with self.db.session() as s:
            return reads.orphans_beside(SessionQuery(s), folder)

    def declined_renames(self, folder: str) -> set[str]:
        """The ids of the orphaned workspaces declined as the predecessor of the folder with
        the key ``folder``."""
        with self.db.session() as s:
            return reads.declined_renames(SessionQuery(s), folder)

    def decline_rename(self, folder: str, workspace_id: str) -> None:
        """Remember that the workspace ``workspace_id`` is not the predecessor of the folder
        with the key ``folder``. Raises ``WorkspaceNotFound`` for an unknown id."""
        with self.db.session() as s:
            workspace_row(s, workspace_id)
            insert_ignore(
                s, DeclinedRenameRow, folder=folder, workspace_id=workspace_id, created_at=now()
            )

    # --- links: a workspace using another one's document --------------------------------------
    def link(self, workspace_id: str, target_id: str) -> None:
        """Make ``workspace_id`` use the document of ``target_id`` (replacing any link it had).

        Raises:
            WorkspaceNotFound: an unknown id.
            UsageError: the two are one workspace, ``target_id`` uses another's document
                itself, other workspaces use ``workspace_id``'s, or ``workspace_id`` has a
                memory of its own (nothing is merged).
        """
        with self.db.session() as s:
            source, target = workspace_row(s, workspace_id), workspace_row(s, target_id)
            if source.id == target.id:
                raise UsageError(f"{source.path} cannot share its own memory with itself.")
            if s.get(WorkspaceLinkRow, target.id) is not None:
                raise UsageError(
                    f"{target.path} uses another folder's memory itself; link to that folder."
                )
            users = s.scalars(
                select(WorkspaceRow.path)
                .join(WorkspaceLinkRow, WorkspaceLinkRow.workspace_id == WorkspaceRow.id)
                .where(WorkspaceLinkRow.target_id == source.id)
                .order_by(WorkspaceRow.path)
            ).all()
            if users:
                # Its users would go on reading its own document, which it then no longer shows.
                raise UsageError(
                    f"{source.path} shares its memory with {', '.join(users)}; unlink "
                    "those first (yak memory unlink -w FOLDER), or link them to the other "
                    "folder instead."
                )
            own = s.get(MemoryDocumentRow, source.id)
            if own is not None and own.content:
                raise UsageError(
                    f"{source.path} has a memory of its own; export it if you need it, delete "
                    "it (yak memory delete), then link."
                )
            s.execute(delete(WorkspaceLinkRow).where(WorkspaceLinkRow.workspace_id == source.id))
            s.add(WorkspaceLinkRow(workspace_id=source.id, target_id=target.id, created_at=now()))
            log.info("workspace %s now uses the memory of %s", source.id, target.id)

    def unlink(self, workspace_id: str) -> Workspace | None:
        """Stop ``workspace_id`` using another's document; returns the workspace it used
        (``None``: it used none). Its own document, empty or as it was before, is back."""
        with self.db.session() as s:
            link = s.get(WorkspaceLinkRow, workspace_id)
            if link is None:
                return None
            target = workspace_row(s, link.target_id)
            s.delete(link)
            return to_workspace(target)

    def linked_to(self, workspace_id: str) -> Workspace | None:
        """The workspace whose document ``workspace_id`` uses, or ``None``."""
        with self.db.session() as s:
            return reads.linked_to(SessionQuery(s), workspace_id)
