"""The document repository: memory documents, their revisions and the session watermarks.

How a write cannot lose another: the transaction starts with a write statement (so SQLite takes
its write lock before anything is read, like ``BEGIN IMMEDIATE``), and the document row is
updated with ``UPDATE … WHERE version = :expected``; a row count of 0 means another writer got
there first and the transaction is rolled back. Two processes can never both win. The text a
write receives is already checked by the document rules (the memory service does that); this
module only stores it. See ``docs/architecture.md``, "The memory document".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from sqlalchemy import (
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from yak.db.engine import Database
from yak.db.models import (
    ChatSessionRow,
    MemoryDocumentRow,
    MemoryProposalRow,
    MemoryRevisionRow,
    MemoryTombstoneRow,
    WorkspaceLinkRow,
    WorkspaceRow,
)
from yak.db.portable import as_text, insert_ignore, insert_ignoring, utf8_bytes
from yak.db.rows import (
    conflict,
    now,
    to_document,
    to_proposal,
    to_revision,
    to_tombstone,
    workspace_row,
)
from yak.db.schema import (
    SUMMARIES_SQL,
    decode_document,
    summaries_of,
)
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    Proposal,
    ProposalStatus,
    Revision,
    RevisionSource,
    Tombstone,
    WriteEffects,
    count_lines,
    line_changes,
)
from yak.errors import ConflictError, RevisionNotFound, UsageError
from yak.ids import (
    MIN_ID_PREFIX,
    PROPOSAL_IDS,
    REVISION_IDS,
    id_prefix,
    new_id,
    only_match,
)

T = TypeVar("T")


class SqlDocumentRepository:
    """Documents and revisions in the database (implements ``yak.ports.DocumentRepository``)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def together(self, work: Callable[[], T]) -> T:
        """``work()`` in one transaction of this database (``Database.together``)."""
        return self.db.together(work)

    def summaries(self) -> list[MemorySummary]:
        """Every workspace with a memory (non-empty document or any revision), most recently
        updated first, each with ``orphaned`` set when its folder is gone.

        One plain query (:data:`yak.db.schema.SUMMARIES_SQL`: line and character counts
        computed by the database, no content loaded) decoded in one pass
        (:func:`yak.db.schema.summaries_of`): the Settings list opens fast with thousands of
        workspaces."""
        if self.db.engine.dialect.name != "sqlite":
            return self._summaries_portable()
        with self.db.session() as s:
            # The driver's own cursor: SQLAlchemy's result rows cost more than the query here.
            cursor = s.connection().connection.driver_connection.cursor()  # type: ignore[union-attr]
            try:
                rows = cursor.execute(SUMMARIES_SQL).fetchall()
            finally:
                cursor.close()
        return summaries_of(rows)

    def _summaries_portable(self) -> list[MemorySummary]:
        """``summaries`` on a team database (PostgreSQL), where a shared workspace is never
        orphaned (its folder is on other machines too).

        The columns of :data:`yak.db.schema.SUMMARIES_SQL`, spelled for the dialect (the last
        character is read differently), the times and flags as text, decoded by
        :func:`yak.db.schema.summaries_of`."""
        dialect = self.db.engine.dialect.name
        content = func.coalesce(MemoryDocumentRow.content, "")
        newlines = func.length(content) - func.length(func.replace(content, "\n", ""))
        # The last character: SQLite counts a negative start from the end, PostgreSQL does not.
        last = func.right(content, 1) if dialect == "postgresql" else func.substr(content, -1)
        lines = case(
            (content == "", 0),
            (last == "\n", newlines),
            else_=newlines + 1,
        )
        has_revision = exists().where(MemoryRevisionRow.workspace_id == WorkspaceRow.id)
        stmt = (
            select(
                WorkspaceRow.id,
                WorkspaceRow.path,
                as_text(WorkspaceRow.created_at, dialect),
                as_text(WorkspaceRow.last_opened_at, dialect),
                WorkspaceRow.memory_enabled,
                WorkspaceRow.review_mode,
                func.coalesce(MemoryDocumentRow.version, 0),
                lines,
                func.length(content),
                as_text(MemoryDocumentRow.updated_at, dialect),
                as_text(MemoryDocumentRow.flags, dialect),
                WorkspaceRow.shared_key,
            )
            .outerjoin(MemoryDocumentRow, MemoryDocumentRow.workspace_id == WorkspaceRow.id)
            .where(or_(content != "", has_revision))
            .order_by(
                MemoryDocumentRow.updated_at.is_(None),
                MemoryDocumentRow.updated_at.desc(),
                WorkspaceRow.path,
            )
        )
        with self.db.session() as s:
            rows = s.connection().execute(stmt).all()  # Core rows: no ORM loading overhead
        return summaries_of(rows)

    @staticmethod
    def _owner(s: Session, workspace_id: str) -> str:
        """The workspace whose document ``workspace_id`` uses: the one it is linked to (a
        worktree sharing its main checkout's, "Scopes" in docs/architecture.md), else itself.
        Every method below reads and writes the owner's document, revisions, tombstones and
        proposals, and answers under the id it was asked about."""
        linked = s.connection().execute(_LINK_TARGET, {"workspace": workspace_id}).scalar()
        return linked or workspace_id

    def read(self, workspace_id: str) -> MemoryDocument:
        """The current document; version 0 and empty content when never written.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            found = s.connection().execute(_READ, {"workspace": owner}).one_or_none()
            if found is None:
                workspace_row(s, workspace_id)
                return to_document(workspace_id, None)
            raw, version, flags, updated_at = found
            return MemoryDocument(
                workspace_id=workspace_id,
                content=decode_document(workspace_id, int(version), raw),
                version=int(version),
                updated_at=updated_at,
                flags=tuple(flags or ()),
            )

    def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, readable or not (``b""`` when never written).

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            raw = s.scalar(select(_RAW_CONTENT).where(MemoryDocumentRow.workspace_id == owner))
            if raw is None:
                workspace_row(s, workspace_id)
            return bytes(raw or b"")

    def write(
        self,
        workspace_id: str,
        text: str,
        *,
        expected_version: int | None,
        source: RevisionSource,
        flags: tuple[str, ...] = (),
        model: str | None = None,
        session_ids: tuple[str, ...] = (),
        restored_from: str | None = None,
        watermarks: Mapping[str, str] | None = None,
        effects: Callable[[str], WriteEffects] | None = None,
        accepts: str | None = None,
    ) -> MemoryDocument:
        """Write ``text`` (already checked) as the next version and append its revision; with
        ``watermarks`` (``{session_id: last folded message id}``) advance them in the same
        transaction. The text already stored writes no revision (the watermarks still move).

        Args:
            expected_version: the version the write is based on; ``None``: whatever is current.
            effects: given the text being replaced, the write's line counts and tombstones
                (buried and lifted in the same transaction); default: the line counts only.
            accepts: the id of the pending proposal this write accepts (marked ``accepted`` in
                the same transaction, also when the text is already stored).

        Raises:
            ConflictError: ``expected_version`` is not the stored version, or ``accepts`` is no
                longer pending; nothing written.
            UsageError: a negative ``expected_version``.
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            if accepts is not None:
                self._close_proposal(s, owner, accepts, ProposalStatus.ACCEPTED)
            result = self._apply(
                s,
                owner,
                text,
                expected_version=expected_version,
                source=RevisionSource(source),
                flags=tuple(flags),
                model=model,
                session_ids=tuple(session_ids),
                restored_from=restored_from,
                effects=effects,
            )
            if watermarks:
                self._advance(s, watermarks)
            return replace(result, workspace_id=workspace_id)

    def advance_watermarks(self, watermarks: Mapping[str, str]) -> None:
        """Advance session watermarks without a write (the memory was already up to date).
        A watermark never moves backwards."""
        if not watermarks:
            return
        with self.db.session() as s:
            self._advance(s, watermarks)

    @staticmethod
    def _advance(s: Session, watermarks: Mapping[str, str]) -> None:
        # ULIDs of one length sort as text in creation order, so a string compare is enough.
        s.connection().execute(
            _ADVANCE,
            [{"session": session, "message": message} for session, message in watermarks.items()],
        )

    @staticmethod
    def _ensure_document(s: Session, workspace_id: str) -> None:
        """Make sure the document row exists. Being a write, it also takes SQLite's write lock
        first thing in the transaction, so what is read next is what the update will see."""
        if s.get_bind().dialect.name == "sqlite":
            s.connection().execute(_ENSURE_DOCUMENT, {"workspace": workspace_id})
            return
        insert_ignore(
            s,
            MemoryDocumentRow,
            workspace_id=workspace_id,
            content="",
            version=0,
            flags=[],
            updated_at=None,
        )
        if s.get_bind().dialect.name == "postgresql":  # the row's lock, where SQLite's is global
            s.execute(
                select(MemoryDocumentRow.version)
                .where(MemoryDocumentRow.workspace_id == workspace_id)
                .with_for_update()
            )

    def _apply(
        self,
        s: Session,
        workspace_id: str,
        text: str,
        *,
        expected_version: int | None,
        source: RevisionSource,
        flags: tuple[str, ...] = (),
        model: str | None = None,
        session_ids: tuple[str, ...] = (),
        restored_from: str | None = None,
        effects: Callable[[str], WriteEffects] | None = None,
    ) -> MemoryDocument:
        if expected_version is not None and int(expected_version) < 0:
            raise UsageError("The expected version must be 0 or more; nothing was saved.")
        # Prebuilt statements on the session's connection: a hand save is a handful of them, and
        # building ORM statements with their values each time cost more than running them.
        connection = s.connection()
        if connection.execute(_WORKSPACE_ID, {"workspace": workspace_id}).first() is None:
            workspace_row(s, workspace_id)  # raises WorkspaceNotFound with its sentence
        self._ensure_document(s, workspace_id)
        raw, version = connection.execute(_CURRENT, {"workspace": workspace_id}).one()
        expected = version if expected_version is None else int(expected_version)
        if version != expected:
            raise conflict(expected, version)
        # The text replaced, as text; bytes that are not UTF-8 (an unreadable document being
        # replaced by a restore or a new text) are read leniently, only to count lines.
        base = bytes(raw or b"").decode("utf-8", "replace")
        if bytes(raw or b"") == text.encode("utf-8"):
            return self._read_in(s, workspace_id)
        if effects is not None:
            change = effects(base)
        else:
            added, removed = line_changes(base, text)
            change = WriteEffects(added=added, removed=removed)
        moment = now()
        result = connection.execute(
            _UPDATE_DOCUMENT,
            {
                "workspace": workspace_id,
                "expected": expected,
                "content": text,
                "version": expected + 1,
                "flags": list(flags),
                "moment": moment,
            },
        )
        if result.rowcount != 1:  # another writer won between the read and the update
            stored = s.scalar(
                select(MemoryDocumentRow.version).where(
                    MemoryDocumentRow.workspace_id == workspace_id
                )
            )
            raise conflict(expected, int(stored or 0))
        connection.execute(
            _INSERT_REVISION,
            {
                "id": new_id(),
                "workspace_id": workspace_id,
                "version": expected + 1,
                "source": str(source),
                "content": text,
                "lines": count_lines(text),
                "chars": len(text),
                "flags": list(flags),
                "model": model,
                "session_ids": list(session_ids),
                "restored_from": restored_from,
                "created_at": moment,
                "added": change.added,
                "removed": change.removed,
            },
        )
        self._tombstones(s, workspace_id, change, source=str(source), moment=moment)
        return MemoryDocument(
            workspace_id=workspace_id,
            content=text,
            version=expected + 1,
            updated_at=moment,
            flags=tuple(flags),
        )

    @staticmethod
    def _read_in(s: Session, workspace_id: str) -> MemoryDocument:
        row = s.execute(
            select(MemoryDocumentRow)
            .where(MemoryDocumentRow.workspace_id == workspace_id)
            .execution_options(populate_existing=True)
        ).scalar_one_or_none()
        return to_document(workspace_id, row)

    @staticmethod
    def _tombstones(
        s: Session, workspace_id: str, change: WriteEffects, *, source: str, moment: Any
    ) -> None:
        """Bury and lift tombstones as a write's effects say (lifting wins for a key in both)."""
        lifted = set(change.lift)
        buried = [
            {
                "workspace_id": workspace_id,
                "key": key,
                "text": text,
                "source": source,
                "created_at": moment,
            }
            for key, text in change.bury
            if key not in lifted
        ]
        connection = s.connection()
        if buried:
            connection.execute(insert_ignoring(_TOMBSTONES, s.get_bind().dialect.name), buried)
        if lifted:
            connection.execute(_LIFT, {"workspace": workspace_id, "keys": sorted(lifted)})

    # --- tombstones and proposals ---------------------------------------------------------------
    def tombstones(self, workspace_id: str) -> list[Tombstone]:
        """The workspace's tombstones, oldest first."""
        with self.db.session() as s:
            rows = s.connection().execute(
                _TOMBSTONES_OF, {"workspace": self._owner(s, workspace_id)}
            )
            return [to_tombstone(r) for r in rows]

    def add_proposal(self, proposal: Proposal) -> Proposal:
        """Store a pending proposal; the workspace's older pending proposals become
        ``superseded`` (the new one folds their conversations too).

        Raises:
            WorkspaceNotFound: unknown workspace.
        """
        moment = now()
        with self.db.session() as s:
            workspace_row(s, proposal.workspace_id)
            owner = self._owner(s, proposal.workspace_id)
            s.execute(
                update(MemoryProposalRow)
                .where(
                    MemoryProposalRow.workspace_id == owner,
                    MemoryProposalRow.status == str(ProposalStatus.PENDING),
                )
                .values(status=str(ProposalStatus.SUPERSEDED), decided_at=moment)
                .execution_options(synchronize_session=False)
            )
            row = MemoryProposalRow(
                id=proposal.id or new_id(),
                workspace_id=owner,
                base_version=proposal.base_version,
                content=proposal.content,
                reasons=list(proposal.reasons),
                added=proposal.added,
                removed=proposal.removed,
                status=str(ProposalStatus.PENDING),
                model=proposal.model,
                session_ids=list(proposal.session_ids),
                watermarks=dict(proposal.watermarks),
                flags=list(proposal.flags),
                created_at=moment,
            )
            s.add(row)
            s.flush()
            return to_proposal(row)

    def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only the pending ones by default)."""
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            stmt = select(MemoryProposalRow).where(MemoryProposalRow.workspace_id == owner)
            if pending_only:
                stmt = stmt.where(MemoryProposalRow.status == str(ProposalStatus.PENDING))
            rows = s.scalars(stmt.order_by(MemoryProposalRow.id))
            return [to_proposal(r) for r in rows]

    def supersede_proposals(self, workspace_id: str) -> int:
        """Mark the workspace's pending proposals ``superseded`` (an applied refresh folded
        their conversations and changed the version they were made on). Returns how many."""
        with self.db.session() as s:
            result = s.connection().execute(
                _SUPERSEDE, {"workspace": self._owner(s, workspace_id), "moment": now()}
            )
            return int(result.rowcount or 0)

    def pending_counts(self) -> dict[str, int]:
        """How many proposals wait, by workspace id (workspaces with none are left out)."""
        with self.db.session() as s:
            rows = s.execute(
                select(MemoryProposalRow.workspace_id, func.count())
                .where(MemoryProposalRow.status == str(ProposalStatus.PENDING))
                .group_by(MemoryProposalRow.workspace_id)
            )
            return {workspace_id: int(count) for workspace_id, count in rows}

    def get_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """A proposal by id or unique prefix (at least ``MIN_ID_PREFIX`` characters).

        Raises:
            UsageError: none matches, several do, or the prefix is too short.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            return to_proposal(self._proposal_row(s, owner, proposal_id))

    def reject_proposal(
        self,
        workspace_id: str,
        proposal_id: str,
        *,
        bury: tuple[tuple[str, str], ...],
        watermarks: Mapping[str, str],
    ) -> Proposal:
        """Mark a pending proposal rejected, bury ``bury`` (its added lines) and advance the
        watermarks of the conversations it folded, in one transaction.

        Raises:
            UsageError: no such proposal. ConflictError: it is no longer pending.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            row = self._close_proposal(s, owner, proposal_id, ProposalStatus.REJECTED)
            self._tombstones(s, owner, WriteEffects(bury=bury), source="rejected", moment=now())
            if watermarks:
                self._advance(s, watermarks)
            s.flush()
            return to_proposal(row)

    def _close_proposal(
        self, s: Session, workspace_id: str, proposal_id: str, status: ProposalStatus
    ) -> MemoryProposalRow:
        row = self._proposal_row(s, workspace_id, proposal_id)
        if row.status != str(ProposalStatus.PENDING):
            raise ConflictError(
                f"Proposal {row.id} is {row.status}, no longer waiting for review; "
                "nothing was changed (see yak memory review).",
                expected_version=row.base_version,
                current_version=row.base_version,
            )
        row.status = str(status)
        row.decided_at = now()
        return row

    @staticmethod
    def _proposal_row(s: Session, workspace_id: str, proposal_id: str) -> MemoryProposalRow:
        wanted = id_prefix(proposal_id, PROPOSAL_IDS)
        rows = list(
            s.scalars(
                select(MemoryProposalRow)
                .where(
                    MemoryProposalRow.workspace_id == workspace_id,
                    func.substr(MemoryProposalRow.id, 1, len(wanted)) == wanted,
                )
                .limit(2)
            )
        )
        return only_match(rows, proposal_id, PROPOSAL_IDS)

    def history(self, workspace_id: str) -> list[Revision]:
        """Revisions newest first."""
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            rows = s.scalars(
                select(MemoryRevisionRow)
                .where(MemoryRevisionRow.workspace_id == owner)
                .order_by(MemoryRevisionRow.version.desc(), MemoryRevisionRow.id.desc())
            )
            return [to_revision(r) for r in rows]

    def revisions_since(self, workspace_id: str, version: int) -> list[Revision]:
        """The revisions whose version is ``version`` or newer, oldest first (ties by id): what
        an origin computed up to ``version`` still has to take in."""
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            rows = s.connection().execute(
                _REVISIONS_SINCE, {"workspace": owner, "version": version}
            )
            return [to_revision(r) for r in rows]

    def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """A revision by full id, unique id prefix (at least ``MIN_ID_PREFIX`` characters) or
        version number (``"3"``: the revision that produced version 3).

        Raises:
            RevisionNotFound: none matches, several do, or the prefix is too short.
        """
        with self.db.session() as s:
            owner = self._owner(s, workspace_id)
            return to_revision(self._revision_row(s, owner, revision))

    @staticmethod
    def _revision_row(s: Session, workspace_id: str, revision_id: str) -> MemoryRevisionRow:
        wanted = (revision_id or "").strip().upper()
        if wanted.isascii() and wanted.isdigit():
            # A version number. Ids are Crockford base32 and could in theory be all digits, so
            # a long enough number that is no version is still tried as an id prefix.
            by_version = list(
                s.scalars(
                    select(MemoryRevisionRow)
                    .where(
                        MemoryRevisionRow.workspace_id == workspace_id,
                        MemoryRevisionRow.version == int(wanted),
                    )
                    .limit(2)
                )
            )
            if len(by_version) == 1:
                return by_version[0]
            if len(by_version) > 1:  # two histories merged by a re-attach
                raise RevisionNotFound(
                    f"Several revisions produced version {int(wanted)}; "
                    "give the revision id (see history)."
                )
            if len(wanted) < MIN_ID_PREFIX:
                raise RevisionNotFound(
                    f"This workspace has no version {int(wanted)} "
                    "(see history for the versions and ids)."
                )
        wanted = id_prefix(revision_id, REVISION_IDS)
        rows = list(
            s.scalars(
                select(MemoryRevisionRow)
                .where(
                    MemoryRevisionRow.workspace_id == workspace_id,
                    func.substr(MemoryRevisionRow.id, 1, len(wanted)) == wanted,
                )
                .limit(2)
            )
        )
        return only_match(rows, revision_id, REVISION_IDS)

    def versions(self) -> dict[str, int]:
        """Every stored document's version by workspace id (one light query, no content); a
        workspace that uses another's document has that document's version, so a write to
        the shared document is noticed under both ids."""
        with self.db.session() as s:
            rows = s.execute(select(MemoryDocumentRow.workspace_id, MemoryDocumentRow.version))
            found = {workspace_id: int(version) for workspace_id, version in rows}
            links = s.execute(select(WorkspaceLinkRow.workspace_id, WorkspaceLinkRow.target_id))
            for workspace_id, target_id in links:
                found[workspace_id] = found.get(target_id, 0)
            return found

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: moves when another connection wrote."""
        return self.db.data_version()


# The content column read as bytes: a document that is not UTF-8 is reported, not a decode crash.
_RAW_CONTENT = utf8_bytes(MemoryDocumentRow.content)


# The statements of a write and of the owner lookup every method starts with, built once (see
# ``_apply``); parameters by name.
_TABLES = MemoryDocumentRow.metadata.tables
_DOCUMENTS = _TABLES[MemoryDocumentRow.__tablename__]
_WORKSPACES = _TABLES[WorkspaceRow.__tablename__]
_WORKSPACE_ID = select(_WORKSPACES.c.id).where(_WORKSPACES.c.id == bindparam("workspace"))
_ENSURE_DOCUMENT = (
    sqlite_insert(_DOCUMENTS)
    .values(workspace_id=bindparam("workspace"), content="", version=0, flags=[], updated_at=None)
    .on_conflict_do_nothing()
)
_CURRENT = select(_RAW_CONTENT, MemoryDocumentRow.version).where(
    MemoryDocumentRow.workspace_id == bindparam("workspace")
)
_UPDATE_DOCUMENT = (
    update(_DOCUMENTS)
    .where(
        _DOCUMENTS.c.workspace_id == bindparam("workspace"),
        _DOCUMENTS.c.version == bindparam("expected"),
    )
    .values(
        content=bindparam("content"),
        version=bindparam("version"),
        flags=bindparam("flags"),
        updated_at=bindparam("moment"),
    )
)
_INSERT_REVISION = insert(_TABLES[MemoryRevisionRow.__tablename__])
_TOMBSTONES = _TABLES[MemoryTombstoneRow.__tablename__]
_TOMBSTONES_OF = (
    select(*_TOMBSTONES.c)
    .where(_TOMBSTONES.c.workspace_id == bindparam("workspace"))
    .order_by(_TOMBSTONES.c.created_at, _TOMBSTONES.c.key)
)
_LIFT = delete(_TABLES[MemoryTombstoneRow.__tablename__]).where(
    MemoryTombstoneRow.workspace_id == bindparam("workspace"),
    MemoryTombstoneRow.key.in_(bindparam("keys", expanding=True)),
)
_READ = select(
    _RAW_CONTENT, _DOCUMENTS.c.version, _DOCUMENTS.c.flags, _DOCUMENTS.c.updated_at
).where(_DOCUMENTS.c.workspace_id == bindparam("workspace"))
_REVISIONS = _TABLES[MemoryRevisionRow.__tablename__]
_REVISIONS_SINCE = (
    select(*_REVISIONS.c)
    .where(
        _REVISIONS.c.workspace_id == bindparam("workspace"),
        _REVISIONS.c.version >= bindparam("version"),
    )
    .order_by(_REVISIONS.c.version, _REVISIONS.c.id)
)
_LINK_TARGET = select(WorkspaceLinkRow.target_id).where(
    WorkspaceLinkRow.workspace_id == bindparam("workspace")
)
_SESSIONS = _TABLES[ChatSessionRow.__tablename__]
_ADVANCE = (
    update(_SESSIONS)
    .where(
        _SESSIONS.c.id == bindparam("session"),
        or_(
            _SESSIONS.c.folded_through.is_(None),
            _SESSIONS.c.folded_through < bindparam("message"),
        ),
    )
    .values(folded_through=bindparam("message"))
)
_PROPOSALS = _TABLES[MemoryProposalRow.__tablename__]
_SUPERSEDE = (
    update(_PROPOSALS)
    .where(
        _PROPOSALS.c.workspace_id == bindparam("workspace"),
        _PROPOSALS.c.status == str(ProposalStatus.PENDING),
    )
    .values(status=str(ProposalStatus.SUPERSEDED), decided_at=bindparam("moment"))
)
