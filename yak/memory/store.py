"""MemoryStore: the one way memory documents are read and written (DESIGN.md section 3).

Synchronous (SQLAlchemy on SQLite); async callers run it on the database worker thread.
Every write passes the version it was based on; a stale version raises ``ConflictError`` and
writes nothing. Every applied write appends a revision. Hand writes (hand edit, import) go
through the ceiling check; a human may shrink or clear the document (no floor for hands).

How a write cannot lose another: the transaction starts with a write statement (so SQLite takes
its write lock before anything is read, like ``BEGIN IMMEDIATE``), and the document row is
updated with ``UPDATE … WHERE version = :expected``; a row count of 0 means another writer got
there first and the transaction is rolled back. Two processes can never both win.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import and_, case, exists, func, or_, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from yak import paths
from yak.db import Database
from yak.db.models import (
    ChatMessageRow,
    ChatSessionRow,
    MemoryDocumentRow,
    MemoryRevisionRow,
    RefreshAttemptRow,
    WorkspaceRow,
)
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    RefreshAttempt,
    RefreshOutcome,
    RefreshStatus,
    Revision,
    RevisionSource,
    TokenUsage,
    Workspace,
    count_lines,
)
from yak.errors import (
    ConflictError,
    RevisionNotFound,
    UsageError,
    WorkspaceNotFound,
)
from yak.ids import new_id
from yak.memory import document as doc_rules

log = logging.getLogger(__name__)

MIN_REVISION_PREFIX = 6  # characters of a revision id a user must give


def _now() -> datetime:
    return datetime.now(UTC)


def _key(path: str) -> str:
    try:
        return paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise WorkspaceNotFound(str(exc)) from None


def _identity_columns(identity: tuple[int, int] | None) -> tuple[str | None, str | None]:
    if identity is None:
        return None, None
    return str(identity[0]), str(identity[1])


def _to_workspace(row: WorkspaceRow) -> Workspace:
    return Workspace(id=row.id, path=row.path, created_at=row.created_at,
                     last_opened_at=row.last_opened_at, memory_enabled=bool(row.memory_enabled))


def _to_document(workspace_id: str, row: MemoryDocumentRow | None) -> MemoryDocument:
    if row is None:
        return MemoryDocument(workspace_id=workspace_id, content="", version=0, updated_at=None)
    return MemoryDocument(workspace_id=workspace_id, content=row.content, version=row.version,
                          updated_at=row.updated_at, flags=tuple(row.flags or ()))


def _to_revision(row: MemoryRevisionRow) -> Revision:
    return Revision(id=row.id, workspace_id=row.workspace_id, version=row.version,
                    source=RevisionSource(row.source), content=row.content, lines=row.lines,
                    chars=row.chars, flags=tuple(row.flags or ()), created_at=row.created_at,
                    model=row.model, session_ids=tuple(row.session_ids or ()),
                    restored_from=row.restored_from)


def _existing_folder(path: str) -> tuple[str, tuple[int, int]]:
    """The workspace key of an existing folder and its ``(st_dev, st_ino)``.

    Raises:
        WorkspaceNotFound: ``path`` does not exist or is not a directory.
    """
    key = _key(path)
    identity = paths.folder_identity(key)
    if identity is None:
        raise WorkspaceNotFound(f"No such folder: {path} (it does not exist or is not a "
                                "directory).")
    return key, identity


def _to_attempt(row: RefreshAttemptRow) -> RefreshAttempt:
    return RefreshAttempt(id=row.id, workspace_id=row.workspace_id,
                          status=RefreshStatus(row.status), reason=row.reason or "",
                          base_version=row.base_version, result_version=row.result_version,
                          model=row.model, reply=getattr(row, "reply", None),
                          usage=TokenUsage(input_tokens=row.input_tokens or 0,
                                           output_tokens=row.output_tokens or 0),
                          duration_s=row.duration_s or 0.0,
                          session_ids=tuple(row.session_ids or ()), flags=tuple(row.flags or ()),
                          created_at=row.created_at)


def _conflict(expected: int, current: int) -> ConflictError:
    if expected > current:
        return ConflictError(
            f"Version {expected} does not exist; the memory is at version {current}. "
            "Nothing was saved.", expected_version=expected, current_version=current)
    return ConflictError(
        f"The memory changed (version {current}) since version {expected}; nothing was saved. "
        "Reload it and apply your change again.",
        expected_version=expected, current_version=current)


class MemoryStore:
    """Workspaces, their memory documents, revisions and refresh attempts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- workspaces -------------------------------------------------------------------------
    def open_workspace(self, path: str, *, mark_opened: bool = True) -> Workspace:
        """Register (or find) the workspace for an existing folder and mark it opened.

        The path goes through ``normalize_workspace_path``; when no stored workspace has that key
        but one has the same ``(st_dev, st_ino)`` folder identity, that one is returned (an alias
        on a case-insensitive filesystem). The stored folder identity is refreshed.

        Args:
            path: the folder as a user gave it.
            mark_opened: set ``last_opened_at`` (the app's recent workspaces); the CLI passes
                ``False`` so scripting does not reorder the app's recent list.

        Raises:
            WorkspaceNotFound: ``path`` does not exist or is not a directory.
        """
        key, identity = _existing_folder(path)
        st_dev, st_ino = _identity_columns(identity)
        workspace_id = paths.workspace_id_for(key)
        now = _now()
        with self.db.session() as s:
            row = s.get(WorkspaceRow, workspace_id) or self._alias(s, workspace_id, identity)
            if row is None:
                s.execute(sqlite_insert(WorkspaceRow).values(
                    id=workspace_id, path=key, st_dev=st_dev, st_ino=st_ino, memory_enabled=True,
                    created_at=now, last_opened_at=now if mark_opened else None,
                ).on_conflict_do_nothing())
                self._ensure_document(s, workspace_id)
                row = s.get(WorkspaceRow, workspace_id)
                assert row is not None
            row.st_dev, row.st_ino = st_dev, st_ino
            if mark_opened:
                row.last_opened_at = now
            s.flush()
            return _to_workspace(row)

    def find_workspace(self, path: str) -> Workspace | None:
        """The stored workspace for ``path`` (key or folder identity), or ``None``; never creates.
        Works for an orphaned workspace whose folder is gone."""
        key = _key(path)
        workspace_id = paths.workspace_id_for(key)
        with self.db.session() as s:
            row = s.get(WorkspaceRow, workspace_id)
            if row is None:
                identity = paths.folder_identity(key)
                if identity is not None:
                    row = self._alias(s, workspace_id, identity)
            return None if row is None else _to_workspace(row)

    @staticmethod
    def _alias(s: Session, workspace_id: str, identity: tuple[int, int]) -> WorkspaceRow | None:
        """A stored workspace with another key whose folder is, right now, the folder with
        ``identity`` (DESIGN.md section 2: two spellings of one folder on a case-insensitive
        filesystem). A row whose folder is gone or is now another folder is not an alias."""
        st_dev, st_ino = _identity_columns(identity)
        candidates = s.scalars(select(WorkspaceRow).where(
            WorkspaceRow.st_dev == st_dev, WorkspaceRow.st_ino == st_ino,
            WorkspaceRow.id != workspace_id))
        for candidate in candidates:
            if paths.folder_identity(candidate.path) == identity:
                return candidate
        return None

    def get_workspace(self, workspace_id: str) -> Workspace:
        """Raises ``WorkspaceNotFound`` for an unknown id."""
        with self.db.session() as s:
            return _to_workspace(self._workspace_row(s, workspace_id))

    @staticmethod
    def _workspace_row(s: Session, workspace_id: str) -> WorkspaceRow:
        row = s.get(WorkspaceRow, workspace_id)
        if row is None:
            raise WorkspaceNotFound(f"No workspace has the id {workspace_id}.")
        return row

    def recent_workspaces(self, limit: int = 10) -> list[Workspace]:
        """Most recently opened first."""
        with self.db.session() as s:
            rows = s.scalars(select(WorkspaceRow)
                             .where(WorkspaceRow.last_opened_at.is_not(None))
                             .order_by(WorkspaceRow.last_opened_at.desc()).limit(limit))
            return [_to_workspace(r) for r in rows]

    def reattach(self, workspace_id: str, new_path: str) -> Workspace:
        """Move an (orphaned) workspace's memory, sessions and history to another existing folder.
        The id changes with the key. Raises ``WorkspaceNotFound`` (folder missing) or
        ``UsageError`` (that folder already has a workspace with a non-empty memory).

        When the target folder already has a workspace with an empty document (for example one
        only opened, or cleared), the two merge: its sessions and history stay and this
        workspace's are added; the document becomes this workspace's.
        """
        key, identity = _existing_folder(new_path)
        st_dev, st_ino = _identity_columns(identity)
        target_id = paths.workspace_id_for(key)
        with self.db.session() as s:
            source = self._workspace_row(s, workspace_id)
            target = s.get(WorkspaceRow, target_id) or self._alias(s, target_id, identity)
            if target is not None and target.id == source.id:
                source.st_dev, source.st_ino = st_dev, st_ino
                return _to_workspace(source)
            if target is not None:
                target_doc = s.get(MemoryDocumentRow, target.id)
                if target_doc is not None and target_doc.content:
                    raise UsageError(f"{target.path} already has its own memory document; "
                                     "delete it there first, then re-attach.")
                if target_doc is not None:
                    s.delete(target_doc)
                target_id = target.id
            else:
                s.add(WorkspaceRow(id=target_id, path=key, st_dev=st_dev, st_ino=st_ino,
                                   memory_enabled=source.memory_enabled,
                                   created_at=source.created_at,
                                   last_opened_at=source.last_opened_at))
            s.flush()
            for model in (MemoryDocumentRow, MemoryRevisionRow, RefreshAttemptRow, ChatSessionRow,
                          ChatMessageRow):
                s.execute(update(model).where(model.workspace_id == workspace_id)
                          .values(workspace_id=target_id))
            s.delete(source)
            s.flush()
            moved = s.get(WorkspaceRow, target_id)
            assert moved is not None
            moved.st_dev, moved.st_ino = st_dev, st_ino
            log.info("re-attached workspace %s to %s (%s)", workspace_id, key, target_id)
            return _to_workspace(moved)

    def set_memory_enabled(self, workspace_id: str, enabled: bool) -> Workspace:
        """Turn memory (injection and refresh) on or off for a workspace.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            row = self._workspace_row(s, workspace_id)
            row.memory_enabled = bool(enabled)
            return _to_workspace(row)

    # --- the document -----------------------------------------------------------------------
    def list_documents(self) -> list[MemorySummary]:
        """Every workspace with a memory (non-empty document or any revision), most recently
        updated first, each with ``orphaned`` set when its folder is gone.

        Plain columns, with line and character counts computed by SQLite, so the content is
        never loaded: the Settings list opens with 10,000 workspaces (DESIGN.md section 8)."""
        content = func.coalesce(MemoryDocumentRow.content, "")
        newlines = func.length(content) - func.length(func.replace(content, "\n", ""))
        lines = case((content == "", 0), (func.substr(content, -1) == "\n", newlines),
                     else_=newlines + 1)
        has_revision = exists().where(MemoryRevisionRow.workspace_id == WorkspaceRow.id)
        stmt = (select(WorkspaceRow.id, WorkspaceRow.path, WorkspaceRow.created_at,
                       WorkspaceRow.last_opened_at, WorkspaceRow.memory_enabled,
                       func.coalesce(MemoryDocumentRow.version, 0), lines,
                       func.length(content), MemoryDocumentRow.updated_at,
                       MemoryDocumentRow.flags)
                .outerjoin(MemoryDocumentRow, MemoryDocumentRow.workspace_id == WorkspaceRow.id)
                .where(or_(content != "", has_revision))
                .order_by(MemoryDocumentRow.updated_at.is_(None),
                          MemoryDocumentRow.updated_at.desc(), WorkspaceRow.path))
        with self.db.session() as s:
            rows = s.connection().execute(stmt).all()  # Core rows: no ORM loading overhead
        return [MemorySummary(
            workspace=Workspace(id=ws_id, path=path, created_at=created_at,
                                last_opened_at=last_opened_at, memory_enabled=bool(enabled)),
            version=int(version), lines=int(n_lines), chars=int(n_chars), updated_at=updated_at,
            flags=tuple(flags or ()), orphaned=paths.folder_identity(path) is None)
            for (ws_id, path, created_at, last_opened_at, enabled, version, n_lines, n_chars,
                 updated_at, flags) in rows]

    def read(self, workspace_id: str) -> MemoryDocument:
        """The current document; version 0 and empty content when never written.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            row = s.get(MemoryDocumentRow, workspace_id)
            if row is None:
                self._workspace_row(s, workspace_id)
            return _to_document(workspace_id, row)

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
        text = doc_rules.prepare_hand_text(content)
        with self.db.session() as s:
            return self._apply(s, workspace_id, text, expected_version=expected_version,
                               source=RevisionSource(source), flags=tuple(flags))

    def apply_rewrite(self, workspace_id: str, content: str, *, base_version: int,
                      model: str | None, session_ids: tuple[str, ...],
                      watermarks: dict[str, str], flags: tuple[str, ...] = ()) -> MemoryDocument:
        """Apply an LLM rewrite that already passed the guards, and advance the session
        watermarks (``{session_id: last folded message id}``) in the same transaction.

        A rewrite identical to the stored document writes no revision but still advances the
        watermarks (the memory is up to date with those messages). As a last safety net the
        ceiling is checked again here; nothing is ever cut.

        Raises:
            ConflictError: the document changed since ``base_version`` (the rewrite is
                superseded); nothing written, watermarks unchanged.
            CeilingExceeded: the rewrite is over the ceiling; nothing written.
        """
        text = doc_rules.normalize_newlines(content)
        doc_rules.check_text(text)
        doc_rules.check_ceiling(text)
        with self.db.session() as s:
            result = self._apply(s, workspace_id, text, expected_version=base_version,
                                 source=RevisionSource.REFRESH, flags=tuple(flags), model=model,
                                 session_ids=tuple(session_ids))
            self._advance(s, watermarks)
            return result

    def advance_watermarks(self, watermarks: dict[str, str]) -> None:
        """Advance session watermarks without a write (the memory was already up to date).
        A watermark never moves backwards."""
        if not watermarks:
            return
        with self.db.session() as s:
            self._advance(s, watermarks)

    @staticmethod
    def _advance(s: Session, watermarks: dict[str, str]) -> None:
        # ULIDs of one length sort as text in creation order, so a string compare is enough.
        for session_id, message_id in watermarks.items():
            s.execute(update(ChatSessionRow)
                      .where(ChatSessionRow.id == session_id,
                             or_(ChatSessionRow.folded_through.is_(None),
                                 ChatSessionRow.folded_through < message_id))
                      .values(folded_through=message_id))

    @staticmethod
    def _ensure_document(s: Session, workspace_id: str) -> None:
        """Make sure the document row exists. Being a write, it also takes SQLite's write lock
        first thing in the transaction, so what is read next is what the update will see."""
        s.execute(sqlite_insert(MemoryDocumentRow).values(
            workspace_id=workspace_id, content="", version=0, flags=[], updated_at=None,
        ).on_conflict_do_nothing())

    def _apply(self, s: Session, workspace_id: str, text: str, *, expected_version: int | None,
               source: RevisionSource, flags: tuple[str, ...] = (), model: str | None = None,
               session_ids: tuple[str, ...] = (), restored_from: str | None = None
               ) -> MemoryDocument:
        """Write ``text`` as the next version inside transaction ``s`` (checked text only)."""
        if expected_version is not None and int(expected_version) < 0:
            raise UsageError("The expected version must be 0 or more; nothing was saved.")
        self._workspace_row(s, workspace_id)
        self._ensure_document(s, workspace_id)
        current = s.execute(select(MemoryDocumentRow.content, MemoryDocumentRow.version)
                            .where(MemoryDocumentRow.workspace_id == workspace_id)).one()
        expected = current.version if expected_version is None else int(expected_version)
        if current.version != expected:
            raise _conflict(expected, current.version)
        if current.content == text:
            return self._read_in(s, workspace_id)
        now = _now()
        result = s.execute(update(MemoryDocumentRow)
                           .where(MemoryDocumentRow.workspace_id == workspace_id,
                                  MemoryDocumentRow.version == expected)
                           .values(content=text, version=expected + 1, flags=list(flags),
                                   updated_at=now)
                           .execution_options(synchronize_session=False))
        if result.rowcount != 1:  # another writer won between the read and the update
            version = s.scalar(select(MemoryDocumentRow.version)
                               .where(MemoryDocumentRow.workspace_id == workspace_id))
            raise _conflict(expected, int(version or 0))
        s.add(MemoryRevisionRow(id=new_id(), workspace_id=workspace_id, version=expected + 1,
                                source=str(source), content=text, lines=count_lines(text),
                                chars=len(text), flags=list(flags), model=model,
                                session_ids=list(session_ids), restored_from=restored_from,
                                created_at=now))
        s.flush()
        return MemoryDocument(workspace_id=workspace_id, content=text, version=expected + 1,
                              updated_at=now, flags=tuple(flags))

    @staticmethod
    def _read_in(s: Session, workspace_id: str) -> MemoryDocument:
        row = s.execute(select(MemoryDocumentRow)
                        .where(MemoryDocumentRow.workspace_id == workspace_id)
                        .execution_options(populate_existing=True)).scalar_one_or_none()
        return _to_document(workspace_id, row)

    def history(self, workspace_id: str) -> list[Revision]:
        """Revisions newest first."""
        with self.db.session() as s:
            rows = s.scalars(select(MemoryRevisionRow)
                             .where(MemoryRevisionRow.workspace_id == workspace_id)
                             .order_by(MemoryRevisionRow.version.desc(),
                                       MemoryRevisionRow.id.desc()))
            return [_to_revision(r) for r in rows]

    def get_revision(self, workspace_id: str, revision_id: str) -> Revision:
        """Accepts a full id, a unique prefix (at least 6 characters) of one, or a version
        number (``"3"``: the revision that produced version 3). Raises ``RevisionNotFound``."""
        with self.db.session() as s:
            return _to_revision(self._revision_row(s, workspace_id, revision_id))

    @staticmethod
    def _revision_row(s: Session, workspace_id: str, revision_id: str) -> MemoryRevisionRow:
        wanted = (revision_id or "").strip().upper()
        if wanted.isascii() and wanted.isdigit():
            # A version number. Ids are Crockford base32 and could in theory be all digits, so
            # a long enough number that is no version is still tried as an id prefix.
            by_version = list(s.scalars(select(MemoryRevisionRow)
                                        .where(MemoryRevisionRow.workspace_id == workspace_id,
                                               MemoryRevisionRow.version == int(wanted))
                                        .limit(2)))
            if len(by_version) == 1:
                return by_version[0]
            if len(by_version) > 1:  # two histories merged by a re-attach
                raise RevisionNotFound(f"Several revisions produced version {int(wanted)}; "
                                       "give the revision id (see history).")
            if len(wanted) < MIN_REVISION_PREFIX:
                raise RevisionNotFound(f"This workspace has no version {int(wanted)} "
                                       "(see history for the versions and ids).")
        if len(wanted) < MIN_REVISION_PREFIX:
            raise RevisionNotFound(f"Give at least {MIN_REVISION_PREFIX} characters of a "
                                   f"revision id (see history); {revision_id!r} is too short.")
        rows = list(s.scalars(select(MemoryRevisionRow)
                              .where(MemoryRevisionRow.workspace_id == workspace_id,
                                     func.substr(MemoryRevisionRow.id, 1, len(wanted)) == wanted)
                              .limit(2)))
        if not rows:
            raise RevisionNotFound(f"This workspace has no revision {revision_id!r} "
                                   "(see history for the ids).")
        if len(rows) > 1:
            raise RevisionNotFound(f"{revision_id!r} matches several revisions; give more "
                                   "characters of the id.")
        return rows[0]

    def restore(self, workspace_id: str, revision_id: str, *,
                expected_version: int | None = None) -> MemoryDocument:
        """Make a revision's content current again, as a new ``restore`` revision.
        ``revision_id`` is what ``get_revision`` takes (an id, a prefix, a version number).
        ``expected_version`` None means "whatever is current" (CLI). Restoring the content that
        is already current writes nothing. Raises ``RevisionNotFound``, ``ConflictError``."""
        with self.db.session() as s:
            revision = self._revision_row(s, workspace_id, revision_id)
            return self._apply(s, workspace_id, revision.content,
                               expected_version=expected_version, source=RevisionSource.RESTORE,
                               restored_from=revision.id)

    def clear(self, workspace_id: str, *, expected_version: int | None = None) -> MemoryDocument:
        """Empty the document as a new ``clear`` revision (restorable from history). An already
        empty document is returned unchanged."""
        with self.db.session() as s:
            return self._apply(s, workspace_id, "", expected_version=expected_version,
                               source=RevisionSource.CLEAR)

    def import_bytes(self, workspace_id: str, data: bytes, *,
                     expected_version: int | None = None,
                     source_name: str | None = None) -> MemoryDocument:
        """Import a file's bytes (UTF-8/16/32 with or without BOM, CRLF) as an ``import``
        revision, through the ceiling check. A file Yak exported is unwrapped: a JSON export
        (``"format": "yak-memory/1"``) imports its document, a Markdown export (``source_name``
        ending in ``.md``/``.markdown``, a ``# `` title line then a blank line) what follows its
        title. ``source_name`` (a file name) also names the input in error messages.

        Raises ``UsageError`` for bytes that are not text or an empty (or whitespace-only)
        document, ``CeilingExceeded``, ``ConflictError``."""
        text = doc_rules.decode_import(data, what=source_name or "The file")
        doc_rules.check_not_empty(text)
        text = doc_rules.unwrap_export(text, source_name)
        doc_rules.check_not_empty(text)
        doc_rules.check_ceiling(text)
        with self.db.session() as s:
            return self._apply(s, workspace_id, text, expected_version=expected_version,
                               source=RevisionSource.IMPORT)

    def export_bytes(self, workspace_id: str, fmt: str = "text") -> bytes:
        """``text``: exactly the document, UTF-8 without BOM, LF. ``markdown``: a ``# <folder>``
        title line, a blank line, then the document. ``json``: workspace, metadata, the document
        and the history (revisions newest first). Raises ``UsageError`` for another format."""
        if fmt not in doc_rules.EXPORT_FORMATS:
            raise UsageError(f"Unknown export format {fmt!r}; use one of: "
                             f"{', '.join(doc_rules.EXPORT_FORMATS)}.")
        workspace = self.get_workspace(workspace_id)
        document = self.read(workspace_id)
        history = self.history(workspace_id) if fmt == "json" else []
        return doc_rules.export_document(workspace, document, history, fmt, exported_at=_now())

    # --- refresh attempts -------------------------------------------------------------------
    def record_attempt(self, outcome: RefreshOutcome, *, base_version: int,
                       rebuild: bool = False) -> RefreshAttempt:
        """Store a refresh attempt (every one, applied or not).

        ``result_version`` is the version the attempt produced (``applied`` only; ``None``
        otherwise). The attempt keeps ``outcome.attempt_id`` when set, else gets a new id.
        """
        row = RefreshAttemptRow(
            id=outcome.attempt_id or new_id(), workspace_id=outcome.workspace_id,
            status=str(outcome.status), reason=outcome.reason or "", base_version=base_version,
            result_version=outcome.version if outcome.status is RefreshStatus.APPLIED else None,
            model=outcome.model, reply=outcome.reply,
            input_tokens=outcome.usage.input_tokens, output_tokens=outcome.usage.output_tokens,
            duration_s=float(outcome.duration_s), session_ids=list(outcome.session_ids),
            flags=list(outcome.flags), rebuild=bool(rebuild), created_at=_now())
        with self.db.session() as s:
            self._workspace_row(s, outcome.workspace_id)
            s.add(row)
            s.flush()
            return _to_attempt(row)

    def attempts(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
        stmt = (select(RefreshAttemptRow)
                .where(RefreshAttemptRow.workspace_id == workspace_id)
                .order_by(RefreshAttemptRow.created_at.desc(), RefreshAttemptRow.id.desc()))
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.db.session() as s:
            return [_to_attempt(r) for r in s.scalars(stmt)]

    def get_attempt(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One refresh attempt of the workspace, by full id or a unique prefix (at least 6
        characters) of one.

        Raises:
            UsageError: no attempt of this workspace matches, several do, or the prefix is
                too short.
        """
        wanted = (attempt_id or "").strip().upper()
        if len(wanted) < MIN_REVISION_PREFIX:
            raise UsageError(f"Give at least {MIN_REVISION_PREFIX} characters of a refresh "
                             f"attempt id (see history --refreshes); {attempt_id!r} is too "
                             "short.")
        with self.db.session() as s:
            rows = list(s.scalars(select(RefreshAttemptRow)
                                  .where(RefreshAttemptRow.workspace_id == workspace_id,
                                         func.substr(RefreshAttemptRow.id, 1, len(wanted))
                                         == wanted)
                                  .limit(2)))
            if not rows:
                raise UsageError(f"This workspace has no refresh attempt {attempt_id!r} (see "
                                 "history --refreshes for the ids).")
            if len(rows) > 1:
                raise UsageError(f"{attempt_id!r} matches several refresh attempts; give more "
                                 "characters of the id.")
            return _to_attempt(rows[0])

    def last_attempt(self, workspace_id: str) -> RefreshAttempt | None:
        """The newest refresh attempt of the workspace, or ``None``."""
        found = self.attempts(workspace_id, limit=1)
        return found[0] if found else None

    def latest_attempts(self) -> dict[str, RefreshAttempt]:
        """The newest refresh attempt of every workspace that has one, without its reply
        (``reply`` is ``None``), by workspace id: the memory list's Status column.

        The newest time per workspace comes from the ``(workspace_id, created_at)`` index
        alone; only those rows are then read, because the table holds every reply and scanning
        it is what is slow (about 0.1 s for 10,000 workspaces with 50,000 attempts).
        """
        attempt = RefreshAttemptRow
        newest = (select(attempt.workspace_id.label("workspace_id"),
                         func.max(attempt.created_at).label("created_at"))
                  .group_by(attempt.workspace_id).subquery())
        columns = [c for c in attempt.__table__.columns if c.name != "reply"]
        stmt = (select(*columns)
                .join(newest, and_(attempt.workspace_id == newest.c.workspace_id,
                                   attempt.created_at == newest.c.created_at))
                .order_by(attempt.id))  # two attempts in the same instant: the later id wins
        with self.db.session() as s:
            return {row.workspace_id: _to_attempt(row) for row in s.execute(stmt)}

    def document_versions(self) -> dict[str, int]:
        """Every stored document's version by workspace id (one light query, no content)."""
        with self.db.session() as s:
            rows = s.execute(select(MemoryDocumentRow.workspace_id, MemoryDocumentRow.version))
            return {workspace_id: int(version) for workspace_id, version in rows}
