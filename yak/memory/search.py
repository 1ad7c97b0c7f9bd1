"""Finding text in memory documents ("Sharing the memory" in docs/architecture.md).

A plain scan: every document is read and matched line by line, case-insensitively (Unicode case
folding), with no index. Fast enough for the documents one person keeps (each is capped by the
memory ceiling); an index is for when many documents share a database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from yak.domain import Workspace
from yak.errors import UnreadableDocument, UsageError

if TYPE_CHECKING:
    from yak.memory.service import MemoryService


@dataclass(frozen=True)
class SearchHit:
    """A line of a document that contains the query: ``line`` counts from 1, ``text`` is the
    whole line without its newline."""

    workspace: Workspace
    line: int
    text: str


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


async def search_documents(memory: MemoryService, query: str) -> list[SearchHit]:
    """Every line of every workspace's document that contains ``query`` (case-insensitive),
    workspaces most recently updated first, lines in order. A document whose stored bytes
    cannot be read is skipped.

    Raises:
        UsageError: a blank query. StoreError: the database failed.
    """
    if not query.strip():
        raise UsageError("the search text is empty; give a word or phrase to find")
    hits: list[SearchHit] = []
    for summary in await memory.list_documents():
        if not summary.chars:
            continue
        try:
            document = await memory.read(summary.workspace.id)
        except UnreadableDocument:
            continue
        hits.extend(
            SearchHit(summary.workspace, number, text)
            for number, text in matching_lines(document.content, query)
        )
    return hits
