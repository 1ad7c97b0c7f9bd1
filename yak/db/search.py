"""The search index over the current memory documents ("Search" in docs/architecture.md).

On SQLite it is the FTS5 table ``memory_search`` (trigram tokenizer: any run of three or more
characters matches, case aside), made by the ``memory_search`` migration together with the
triggers that keep it in step with ``memory_documents`` in the writing transaction itself
(every revision saved, a re-attach, a delete). The migration makes none where this SQLite has
no FTS5 or no trigram tokenizer; :meth:`SqlSearchIndex.documents_containing` then answers
``None`` and the caller scans the documents instead. Another database brings its own index here.
"""

from __future__ import annotations

import logging

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from yak.db.engine import Database

log = logging.getLogger(__name__)

INDEX_TABLE = "memory_search"
MIN_INDEXED_CHARS = 3  # the trigram tokenizer matches nothing shorter


class SqlSearchIndex:
    """Which documents contain a text (implements ``yak.ports.SearchIndex``)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._usable: bool | None = None  # checked once, at the first search

    @property
    def method(self) -> str:
        """``"fts5"`` when the index answers searches of three characters or more, else
        ``"plain scan"`` (this SQLite has no FTS5, or another database)."""
        return "fts5" if self._index_usable() else "plain scan"

    def documents_containing(self, query: str) -> set[str] | None:
        """The ids of the workspaces whose current document contains ``query`` (case aside,
        as SQLite folds it), or ``None`` when the index cannot answer: no index here, or
        ``query`` is shorter than :data:`MIN_INDEXED_CHARS` characters.

        Raises:
            StoreError: the database failed.
        """
        if len(query) < MIN_INDEXED_CHARS or not self._index_usable():
            return None
        phrase = '"' + query.replace('"', '""') + '"'
        with self.db.session() as s:
            rows = s.execute(
                text(f"SELECT workspace_id FROM {INDEX_TABLE} WHERE {INDEX_TABLE} MATCH :phrase"),
                {"phrase": phrase},
            )
            return {str(workspace_id) for (workspace_id,) in rows}

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
