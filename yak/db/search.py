"""The search index over the current memory documents ("Search" in docs/architecture.md).

On SQLite it is the FTS5 table ``memory_search`` (trigram tokenizer: any run of three or more
characters matches, case aside), made by the ``memory_search`` migration together with the
triggers that keep it in step with ``memory_documents`` in the writing transaction itself
(every revision saved, a re-attach, a delete). The migration makes none where this SQLite has
no FTS5 or no trigram tokenizer; :meth:`SqlSearchIndex.candidates` then hands over every
document (a plain scan, in plain SQL any database runs). On PostgreSQL (a team database) the
server matches the text itself (``ILIKE``), so only the documents holding it are read.
"""

from __future__ import annotations

import logging

from sqlalchemy import ColumnElement, String, select, text
from sqlalchemy.exc import DBAPIError

from yak.db.engine import Database
from yak.db.models import MemoryDocumentRow, WorkspaceRow
from yak.db.portable import utf8_bytes
from yak.db.rows import to_workspace
from yak.domain import Workspace
from yak.ports import SearchCandidates

log = logging.getLogger(__name__)

INDEX_TABLE = "memory_search"
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
            phrase = '"' + query.replace('"', '""') + '"'
            matching = (
                text(f"SELECT workspace_id FROM {INDEX_TABLE} WHERE {INDEX_TABLE} MATCH :q")
                .bindparams(q=phrase)
                .columns(workspace_id=String)
            )
            return SearchCandidates(self._documents(WorkspaceRow.id.in_(matching)), "fts5")
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
        except DBAPIError as exc:  # no table (no FTS5 when migrated), or FTS5 missing now
            log.info("memory search uses a plain scan: %s", exc.orig)
            return False
        return True
