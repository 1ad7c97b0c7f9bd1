"""The search index over the current memory documents ("Search" in docs/memory.md).

On SQLite it is the FTS5 table ``memory_search`` (trigram tokenizer: any run of three or more
characters matches, case aside), made by the ``memory_search`` migration, with the table
``memory_search_indexed`` (``search_on_demand`` migration) recording which document version
each workspace's entry holds. Writes do not touch the index (re-indexing a whole document cost
more than the rest of a save); a search first brings the stale entries up to date in one write
transaction, then asks the index. Where it cannot write (a read-only database) the stale
documents are handed over as well, so a search never misses a document because its entry is
old. The migration makes no index where this SQLite has no FTS5 or no trigram tokenizer;
:meth:`SqlSearchIndex.candidates` then hands over every document (a plain scan, in plain SQL
any database runs). On PostgreSQL (a team database) the server matches the text itself
(``ILIKE``), so only the documents holding it are read.
"""

from __future__ import annotations

import logging

from sqlalchemy import ColumnElement, String, or_, select, text
from sqlalchemy.exc import DBAPIError

from yak.db.engine import Database
from yak.db.models import MemoryDocumentRow, WorkspaceRow
from yak.db.portable import utf8_bytes
from yak.db.rows import to_workspace
from yak.domain import Workspace
from yak.errors import StoreError
from yak.ports import SearchCandidates

log = logging.getLogger(__name__)

INDEX_TABLE = "memory_search"
INDEXED_TABLE = "memory_search_indexed"  # workspace_id -> (version indexed, entry rowid)
MIN_INDEXED_CHARS = 3  # the trigram tokenizer matches nothing shorter


class SqlSearchIndex:
    """The documents that may contain a text (implements ``yak.ports.SearchIndex``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._usable: bool | None = None  # checked once, at the first search

    def candidates(self, query: str) -> SearchCandidates:
        """The current documents that may contain ``query``, in one query: those the index
        names when it can answer, else every non-empty document (a plain scan, with the
        reason). Documents stored as bytes that are not text are left out.

        Raises:
            StoreError: the database failed.
        """
        if self.db.engine.dialect.name == "postgresql":
            # The team database matches on the server: only the documents holding the text
            # come back (case aside, as the trigram index matches on SQLite).
            pattern = (
                "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            )
            found = self._documents(MemoryDocumentRow.content.ilike(pattern, escape="\\"))
            return SearchCandidates(found, "postgresql")
        if not self._index_usable():
            why = "this database has no full-text index (FTS5)"
        elif len(query) < MIN_INDEXED_CHARS:
            why = f"the text is shorter than the index's {MIN_INDEXED_CHARS} characters"
        else:
            self._catch_up()
            phrase = '"' + query.replace('"', '""') + '"'
            matching = text(_MATCHING).bindparams(q=phrase).columns(workspace_id=String)
            stale = text(_STALE).columns(workspace_id=String)
            found = self._documents(or_(WorkspaceRow.id.in_(matching), WorkspaceRow.id.in_(stale)))
            return SearchCandidates(found, "fts5")
        every = self._documents(MemoryDocumentRow.content != "")
        return SearchCandidates(every, "plain scan", why)

    def _documents(self, condition: ColumnElement[bool]) -> list[tuple[Workspace, str]]:
        """The workspaces meeting ``condition`` with their current document, in the memory
        list's order; a document stored as bytes that are not text is left out."""
        stmt = (
            # as bytes: one document stored as bytes that are not UTF-8 (written by another
            # program) must not fail the search of every other one
            select(WorkspaceRow, utf8_bytes(MemoryDocumentRow.content))
            .join(MemoryDocumentRow, MemoryDocumentRow.workspace_id == WorkspaceRow.id)
            .where(condition, MemoryDocumentRow.content != "")
            .order_by(
                MemoryDocumentRow.updated_at.is_(None),
                MemoryDocumentRow.updated_at.desc(),
                WorkspaceRow.path,
            )
        )
        found: list[tuple[Workspace, str]] = []
        with self.db.session() as s:
            for row, raw in s.execute(stmt):
                try:
                    found.append((to_workspace(row), bytes(raw).decode("utf-8")))
                except UnicodeDecodeError:
                    log.warning("search leaves out the memory of %s: not UTF-8 text", row.path)
        return found

    def _index_usable(self) -> bool:
        if self._usable is None:
            self._usable = self._check()
        return self._usable

    def _check(self) -> bool:
        if self.db.engine.dialect.name != "sqlite":
            return False
        try:
            with self.db.engine.connect() as conn:
                conn.execute(text(f"SELECT rowid FROM {INDEX_TABLE} LIMIT 0")).all()
                conn.execute(text(f"SELECT entry FROM {INDEXED_TABLE} LIMIT 0")).all()
        except DBAPIError as exc:  # no table (no FTS5 when migrated), or FTS5 missing now
            log.info("memory search uses a plain scan: %s", exc.orig)
            return False
        return True

    def _catch_up(self) -> int:
        """Bring every stale entry of the index up to date, in one write transaction: the
        entries of deleted documents go, changed and new documents are (re-)indexed. Where the
        database cannot be written this does nothing (the stale documents are then candidates
        as they are). Returns how many documents were (re-)indexed."""
        try:
            with self.db.session() as s:
                conn = s.connection()
                # The first statement writes, so SQLite's write lock is taken before the stale
                # entries are read: two searches at once do not index the same document twice.
                for statement in _DROP_ORPHANS:
                    conn.execute(text(statement))
                stale = conn.execute(text(_STALE_ENTRIES)).all()
                for workspace_id, entry in stale:
                    if entry is not None:
                        conn.execute(
                            text(f"DELETE FROM {INDEX_TABLE} WHERE rowid = :entry"),
                            {"entry": entry},
                        )
                    added = conn.execute(
                        text(
                            f"INSERT INTO {INDEX_TABLE}(workspace_id, content) "
                            "SELECT workspace_id, content FROM memory_documents "
                            "WHERE workspace_id = :ws"
                        ),
                        {"ws": workspace_id},
                    ).lastrowid
                    conn.execute(
                        text(
                            f"INSERT INTO {INDEXED_TABLE}(workspace_id, version, entry) "
                            "SELECT workspace_id, version, :entry FROM memory_documents "
                            "WHERE workspace_id = :ws "
                            "ON CONFLICT(workspace_id) DO UPDATE "
                            "SET version = excluded.version, entry = excluded.entry"
                        ),
                        {"ws": workspace_id, "entry": added},
                    )
                return len(stale)
        except StoreError as exc:  # a read-only database: search reads the stale ones too
            log.info("the search index cannot catch up here: %s", exc)
            return 0


# The workspaces whose current document the index names as holding the phrase :q (an entry
# holding an older version is ignored: that document is a candidate through _STALE instead).
_MATCHING = (
    f"SELECT i.workspace_id FROM {INDEXED_TABLE} AS i "
    "JOIN memory_documents AS d ON d.workspace_id = i.workspace_id AND d.version = i.version "
    f"WHERE i.entry IN (SELECT rowid FROM {INDEX_TABLE} WHERE {INDEX_TABLE} MATCH :q)"
)
# The documents the index does not hold as they are now: the workspace and its old entry, if any.
_STALE_FROM = (
    f"FROM memory_documents AS d LEFT JOIN {INDEXED_TABLE} AS i "
    "ON i.workspace_id = d.workspace_id WHERE i.workspace_id IS NULL OR i.version != d.version"
)
_STALE = f"SELECT d.workspace_id {_STALE_FROM}"
_STALE_ENTRIES = f"SELECT d.workspace_id, i.entry {_STALE_FROM}"
_DROP_ORPHANS = (
    f"DELETE FROM {INDEX_TABLE} WHERE rowid IN (SELECT entry FROM {INDEXED_TABLE} "
    "WHERE workspace_id NOT IN (SELECT workspace_id FROM memory_documents))",
    f"DELETE FROM {INDEXED_TABLE} WHERE workspace_id NOT IN "
    "(SELECT workspace_id FROM memory_documents)",
)
