"""Finding text in memory documents ("Search" in docs/memory.md).

The database's full-text index (SQLite FTS5, see ``yak.db.search``) names the documents that
contain the text; only those are read and matched line by line, case-insensitively (Unicode case
folding). Where no index answers (a SQLite without FTS5, a text under three characters) every
document is read instead: a plain scan, and the results say so.
"""

from __future__ import annotations

from dataclasses import dataclass

from yak.domain import Workspace
from yak.errors import UsageError
from yak.memory.reading import MemoryReader


@dataclass(frozen=True)
class SearchHit:
    """A line of a document that contains the query: ``line`` counts from 1, ``text`` is the
    whole line without its newline."""

    workspace: Workspace
    line: int
    text: str


@dataclass(frozen=True)
class SearchResults:
    """What :func:`search_documents` found: ``hits`` in order, and how: ``method`` is
    ``"fts5"`` (the index chose the documents) or ``"plain scan"`` (every document was read),
    ``why_scan`` says why a scan ran (``""`` for the index)."""

    hits: list[SearchHit]
    method: str
    why_scan: str = ""


def matching_lines(content: str, query: str) -> list[tuple[int, str]]:
    """The ``(line number from 1, line text)`` pairs of ``content`` that contain ``query``,
    case aside (``str.casefold``); ``[]`` for a blank query."""
    needle = query.casefold()
    if not needle.strip():
        return []
    return [
        (number, line)
        for number, line in enumerate(content.split("\n"), start=1)
        if needle in line.casefold()
    ]


async def search_documents(memory: MemoryReader, query: str) -> SearchResults:
    """Every line of every workspace's document that contains ``query`` (case-insensitive),
    workspaces most recently updated first, lines in order. A document whose stored bytes
    cannot be read is skipped.

    Raises:
        UsageError: a blank query, or one that is not UTF-8 text (bytes that are not UTF-8
            arrive from a command line as surrogates). StoreError: the database failed.
    """
    if not query.strip():
        raise UsageError("the search text is empty; give a word or phrase to find")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"the search text is not UTF-8 text (invalid byte at offset {exc.start})"
        ) from None
    found = await memory.search_candidates(query)
    hits = [
        SearchHit(workspace, number, text)
        for workspace, content in found.documents
        for number, text in matching_lines(content, query)
    ]
    return SearchResults(hits, found.method, found.why_scan)
