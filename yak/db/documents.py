"""The document repository: memory documents, their revisions and the session watermarks.

How a write cannot lose another: the transaction starts with a write statement (so SQLite takes
its write lock before anything is read, like ``BEGIN IMMEDIATE``), and the document row is
updated with ``UPDATE … WHERE version = :expected``; a row count of 0 means another writer got
there first and the transaction is rolled back. Two processes can never both win. The text a
write receives is already checked by the document rules (the memory service does that); this
module only stores it. See ``docs/memory.md``, "The memory document".

Queries: prebuilt Core statements on the session's connection for the writes (building ORM
statements and rows each time cost more than running them), and the shared SQL texts of
``yak.db.reads`` for the reads (the command line's reader runs the same ones).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from yak.db import reads
from yak.db.engine import Database
from yak.db.models import (
    ChatMessageRow,
    MemoryConfirmationRow,
    MemoryDocumentRow,
    MemoryProposalRow,
    MemoryRevisionRow,
    MemoryTombstoneRow,
    WorkspaceLinkRow,
    WorkspaceRow,
    table_of,
)
from yak.db.portable import insert_ignoring, utf8_bytes
from yak.db.proposals import close_proposal, record_result
from yak.db.rows import (
    SessionQuery,
    advance_watermarks,
    change_tombstones,
    conflict,
    now,
    owner,
    require_workspace,
    to_tombstone,
)
from yak.db.schema import evidence_text
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    ProposalStatus,
    Revision,
    RevisionSource,
    Tombstone,
    WorkspaceStamp,
    WriteEffects,
    count_lines,
)
from yak.errors import UsageError
from yak.evidence import Evidence
from yak.ids import new_id
from yak.linediff import line_changes

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
        updated first, each with ``orphaned`` set when its folder is gone
        (:func:`yak.db.reads.summaries`: line and character counts computed by the database,
        no content loaded, so the Settings list opens fast with thousands of workspaces)."""
        with self.db.session() as s:
            return reads.summaries(SessionQuery(s))

    def read(self, workspace_id: str) -> MemoryDocument:
        """The current document; version 0 and empty content when never written.

        Raises:
            WorkspaceNotFound: unknown id. UnreadableDocument: the bytes are not UTF-8.
        """
        with self.db.session() as s:
            return reads.read_document(SessionQuery(s), workspace_id)

    def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, readable or not (``b""`` when never written).

        Raises:
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            return reads.read_raw(SessionQuery(s), workspace_id)

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
        accepted_as: ProposalStatus = ProposalStatus.ACCEPTED,
        evidence: tuple[Evidence, ...] = (),
    ) -> MemoryDocument:
        """Write ``text`` (already checked) as the next version and append its revision; with
        ``watermarks`` (``{session_id: last folded message id}``) advance them in the same
        transaction. The text already stored writes no revision (the watermarks still move).

        Args:
            expected_version: the version the write is based on; ``None``: whatever is current.
            effects: given the text being replaced, the write's line counts and tombstones
                (buried and lifted in the same transaction); default: the line counts only.
            accepts: the id of the pending proposal this write accepts (marked
                ``accepted_as`` with the version it became, in the same transaction, also when
                the text is already stored).
            accepted_as: ``accepted``, or ``edited`` (edited and accepted).
            evidence: the passages behind the lines written, stored with the revision
                (``yak.db.schema.evidence_text``).

        Raises:
            ConflictError: ``expected_version`` is not the stored version, or ``accepts`` is no
                longer pending; nothing written.
            UsageError: a negative ``expected_version``.
            WorkspaceNotFound: unknown id.
        """
        with self.db.session() as s:
            stored_under = owner(s, workspace_id)
            if accepts is not None:  # first: a decided proposal fails before anything is written
                accepted = close_proposal(s, stored_under, accepts, accepted_as)
            revision = {
                "source": str(RevisionSource(source)),
                "flags": list(flags),
                "model": model,
                "session_ids": list(session_ids),
                "restored_from": restored_from,
                "evidence": evidence_text(evidence),
            }
            result = self._apply(
                s, stored_under, text, expected_version, revision=revision, effects=effects
            )
            if accepts is not None:
                record_result(s, accepted.id, result.version)
            if watermarks:
                advance_watermarks(s, watermarks)
            return replace(result, workspace_id=workspace_id)

    def advance_watermarks(self, watermarks: Mapping[str, str]) -> None:
        """Advance session watermarks without a write (the memory was already up to date).
        A watermark never moves backwards."""
        if not watermarks:
            return
        with self.db.session() as s:
            advance_watermarks(s, watermarks)

    @staticmethod
    def _ensure_document(s: Session, workspace_id: str) -> None:
        """Make sure the document row exists. Being a write, it also takes SQLite's write lock
        first thing in the transaction, so what is read next is what the update will see;
        PostgreSQL's lock is the row's."""
        connection = s.connection()
        dialect = connection.dialect.name
        connection.execute(
            insert_ignoring(_DOCUMENTS, dialect),
            {
                "workspace_id": workspace_id,
                "content": "",
                "version": 0,
                "flags": [],
                "updated_at": None,
            },
        )
        if dialect == "postgresql":
            connection.execute(_CURRENT.with_for_update(), {"workspace": workspace_id})

    def _apply(
        self,
        s: Session,
        workspace_id: str,
        text: str,
        expected_version: int | None,
        *,
        revision: dict[str, Any],
        effects: Callable[[str], WriteEffects] | None,
    ) -> MemoryDocument:
        """:meth:`write` in its transaction; ``revision``: the revision's columns the writer
        gives (source, flags, model, session ids, restored from, evidence), as stored."""
        if expected_version is not None and int(expected_version) < 0:
            raise UsageError("The expected version must be 0 or more; nothing was saved.")
        # Prebuilt statements on the session's connection: a hand save is a handful of them, and
        # building ORM statements with their values each time cost more than running them.
        connection = s.connection()
        require_workspace(s, workspace_id)
        self._ensure_document(s, workspace_id)
        raw, version = connection.execute(_CURRENT, {"workspace": workspace_id}).one()
        expected = version if expected_version is None else int(expected_version)
        if version != expected:
            raise conflict(expected, version)
        # The text replaced, as text; bytes that are not UTF-8 (an unreadable document being
        # replaced by a restore or a new text) are read leniently, only to count lines.
        base = bytes(raw or b"").decode("utf-8", "replace")
        if bytes(raw or b"") == text.encode("utf-8"):
            return reads.read_document(SessionQuery(s), workspace_id)
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
                "flags": revision["flags"],
                "moment": moment,
            },
        )
        if result.rowcount != 1:  # another writer won between the read and the update
            stored = connection.execute(_CURRENT, {"workspace": workspace_id}).one()[1]
            raise conflict(expected, int(stored or 0))
        connection.execute(
            _INSERT_REVISION,
            {
                **revision,
                "id": new_id(),
                "workspace_id": workspace_id,
                "version": expected + 1,
                "content": text,
                "lines": count_lines(text),
                "chars": len(text),
                "created_at": moment,
                "added": change.added,
                "removed": change.removed,
            },
        )
        change_tombstones(s, workspace_id, change, source=revision["source"], moment=moment)
        return MemoryDocument(
            workspace_id=workspace_id,
            content=text,
            version=expected + 1,
            updated_at=moment,
            flags=tuple(revision["flags"]),
        )

    def tombstones(self, workspace_id: str) -> list[Tombstone]:
        """The workspace's tombstones, oldest first."""
        with self.db.session() as s:
            rows = s.connection().execute(_TOMBSTONES_OF, {"workspace": owner(s, workspace_id)})
            return [to_tombstone(r) for r in rows]

    def confirmations(self, workspace_id: str) -> dict[str, datetime]:
        """When a person last confirmed each line still holds: folded key
        (``yak.memory.provenance.fold_line``) -> time (UTC)."""
        with self.db.session() as s:
            rows = s.connection().execute(_CONFIRMATIONS_OF, {"workspace": owner(s, workspace_id)})
            return {row.key: row.confirmed_at for row in rows}

    def confirm_lines(self, workspace_id: str, keys: Collection[str]) -> datetime:
        """Record now as the last confirmation of each folded key; returns that time (UTC)."""
        moment = now()
        with self.db.session() as s:
            workspace = owner(s, workspace_id)
            connection = s.connection()
            if keys:
                connection.execute(_UNCONFIRM, {"workspace": workspace, "keys": sorted(set(keys))})
                connection.execute(
                    insert(_CONFIRMATIONS),
                    [
                        {"workspace_id": workspace, "key": k, "confirmed_at": moment}
                        for k in set(keys)
                    ],
                )
        return moment

    def evidence_history(self, workspace_id: str) -> list[tuple[datetime, tuple[Evidence, ...]]]:
        """When each revision that kept evidence was stored, with that evidence, oldest
        first."""
        with self.db.session() as s:
            return reads.evidence_history(SessionQuery(s), workspace_id)

    def passage_times(self, message_ids: Collection[str]) -> dict[str, datetime]:
        """When each stored message was written (UTC), by id; a deleted message is absent."""
        if not message_ids:
            return {}
        with self.db.session() as s:
            rows = s.connection().execute(_MESSAGE_TIMES, {"ids": sorted(set(message_ids))})
            return {row.id: row.created_at for row in rows}

    def history(self, workspace_id: str) -> list[Revision]:
        """Revisions newest first."""
        with self.db.session() as s:
            return reads.history(SessionQuery(s), workspace_id)

    def revisions_since(self, workspace_id: str, version: int) -> list[Revision]:
        """The revisions whose version is ``version`` or newer, oldest first (ties by id): what
        an origin computed up to ``version`` still has to take in."""
        with self.db.session() as s:
            return reads.revisions_since(SessionQuery(s), workspace_id, version)

    def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """A revision by full id, unique id prefix (at least ``MIN_ID_PREFIX`` characters) or
        version number (``"3"``: the revision that produced version 3).

        Raises:
            RevisionNotFound: none matches, several do, or the prefix is too short.
        """
        with self.db.session() as s:
            return reads.revision(SessionQuery(s), workspace_id, revision)

    def versions(self) -> dict[str, int]:
        """Every stored document's version by workspace id (one light query, no content); a
        workspace that uses another's document has that document's version, so a write to
        the shared document is noticed under both ids."""
        with self.db.session() as s:
            connection = s.connection()
            rows = connection.execute(_VERSIONS)
            found = {workspace_id: int(version) for workspace_id, version in rows}
            links = connection.execute(_LINKS)
            for workspace_id, target_id in links:
                found[workspace_id] = found.get(target_id, 0)
            return found

    def stamps(self) -> dict[str, WorkspaceStamp]:
        """Every workspace's :class:`~yak.domain.WorkspaceStamp` by id, in one read (three
        light queries, no content): its document's version, its settings and the proposals
        waiting. A workspace that uses another's document has that document's version and
        proposals, with its own settings."""
        with self.db.session() as s:
            connection = s.connection()
            versions = {ws: int(version) for ws, version in connection.execute(_VERSIONS)}
            waiting: dict[str, list[tuple[str, int]]] = {}
            for ws, proposal_id, base_version in connection.execute(_WAITING):
                waiting.setdefault(ws, []).append((proposal_id, int(base_version)))
            targets = dict(connection.execute(_LINKS).all())
            found = {}
            for ws, enabled, mode, synced in connection.execute(_SETTINGS):
                owner_id = targets.get(ws, ws)
                found[ws] = WorkspaceStamp(
                    version=versions.get(owner_id, 0),
                    settings=(bool(enabled), str(mode), synced),
                    proposals=tuple(waiting.get(owner_id, ())),
                )
            return found

    def data_version(self) -> int:
        """A number that moves when another connection wrote (``Database.data_version``)."""
        return self.db.data_version()


# The statements of a write, built once (see ``_apply``); parameters by name.
_DOCUMENTS = table_of(MemoryDocumentRow)
_CURRENT = select(utf8_bytes(_DOCUMENTS.c.content), _DOCUMENTS.c.version).where(
    _DOCUMENTS.c.workspace_id == bindparam("workspace")
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
_INSERT_REVISION = insert(table_of(MemoryRevisionRow))
_TOMBSTONES = table_of(MemoryTombstoneRow)
_TOMBSTONES_OF = (
    select(*_TOMBSTONES.c)
    .where(_TOMBSTONES.c.workspace_id == bindparam("workspace"))
    .order_by(_TOMBSTONES.c.created_at, _TOMBSTONES.c.key)
)
_CONFIRMATIONS = table_of(MemoryConfirmationRow)
_CONFIRMATIONS_OF = select(_CONFIRMATIONS.c.key, _CONFIRMATIONS.c.confirmed_at).where(
    _CONFIRMATIONS.c.workspace_id == bindparam("workspace")
)
_UNCONFIRM = delete(_CONFIRMATIONS).where(
    _CONFIRMATIONS.c.workspace_id == bindparam("workspace"),
    _CONFIRMATIONS.c.key.in_(bindparam("keys", expanding=True)),
)
_MESSAGES = table_of(ChatMessageRow)
_MESSAGE_TIMES = select(_MESSAGES.c.id, _MESSAGES.c.created_at).where(
    _MESSAGES.c.id.in_(bindparam("ids", expanding=True))
)
_VERSIONS = select(_DOCUMENTS.c.workspace_id, _DOCUMENTS.c.version)
_LINKS = select(table_of(WorkspaceLinkRow).c.workspace_id, table_of(WorkspaceLinkRow).c.target_id)
_WORKSPACES = table_of(WorkspaceRow)
_SETTINGS = select(
    _WORKSPACES.c.id,
    _WORKSPACES.c.memory_enabled,
    _WORKSPACES.c.review_mode,
    _WORKSPACES.c.synced_file,
)
_PROPOSALS = table_of(MemoryProposalRow)
_WAITING = (
    select(_PROPOSALS.c.workspace_id, _PROPOSALS.c.id, _PROPOSALS.c.base_version)
    .where(_PROPOSALS.c.status == ProposalStatus.PENDING.value)
    .order_by(_PROPOSALS.c.workspace_id, _PROPOSALS.c.created_at, _PROPOSALS.c.id)
)
