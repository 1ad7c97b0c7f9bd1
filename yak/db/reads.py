"""The hot reads, each one SQL text and one decoding, for both ways of reading the database.

``yak memory show``, ``list``, ``history`` and ``export`` read through the plain ``sqlite3``
reader (``yak.db.sqlite_read``) when the local database is current, and everything else through
the SQLAlchemy repositories. Both call the functions here with their own :class:`Query` (the
reader's connection, or a session's connection running the text with ``text()``), so the two
paths run the same statement and build the same domain objects: they cannot diverge. The texts
read the same on SQLite and PostgreSQL: times and JSON are read as their stored text (``CAST(…
AS VARCHAR)``, a no-op on SQLite), and the one spelling that differs, a document's bytes, is
chosen by the query's dialect. No SQLAlchemy here: a reading command must not import it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from yak import paths
from yak.db.schema import (
    decode_document,
    review_mode,
    stored_evidence,
    stored_held_lines,
    utc_time,
)
from yak.domain import (
    MemoryDocument,
    MemorySummary,
    Proposal,
    ProposalOrigin,
    ProposalStatus,
    Revision,
    RevisionSource,
    Workspace,
    count_lines,
)
from yak.errors import RevisionNotFound, WorkspaceNotFound
from yak.evidence import Evidence
from yak.ids import MIN_ID_PREFIX, REVISION_IDS, id_prefix, only_match

Row = Sequence[Any]
"""One result row: a tuple from ``sqlite3``, a ``Row`` from SQLAlchemy (the columns in order)."""


class Query(Protocol):
    """A connection that runs one SQL text with named parameters (``:name``)."""

    dialect: str
    """``"sqlite"`` or ``"postgresql"``."""

    def rows(self, sql: str, parameters: Mapping[str, object]) -> Sequence[Row]:
        """Every row of ``sql``. Raises ``StoreError`` when the database fails."""
        ...


def strings(stored: str | None) -> tuple[str, ...]:
    """A stored JSON list of strings as a tuple (``()`` for ``NULL``)."""
    return () if stored in (None, "[]") else tuple(json.loads(stored))


def stored_at(text: str | None) -> datetime:
    """A time from a column that is never empty."""
    moment = utc_time(text)
    assert moment is not None  # NOT NULL in the schema
    return moment


def workspace_key(path: str) -> str:
    """``normalize_workspace_path(path)``; a path that cannot be one is ``WorkspaceNotFound``."""
    try:
        return paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise WorkspaceNotFound(str(exc)) from None


def no_workspace(workspace_id: str) -> WorkspaceNotFound:
    """The error for an unknown workspace id, with its sentence."""
    return WorkspaceNotFound(f"No workspace has the id {workspace_id}.")


def by_prefix(query: Query, select: str, workspace_id: str, wanted: str) -> Sequence[Row]:
    """At most two rows of ``select`` (``SELECT … FROM table``) of the workspace whose id
    starts with ``wanted``."""
    return query.rows(
        f"{select} WHERE workspace_id = :workspace AND substr(id, 1, :length) = :prefix LIMIT 2",
        {"workspace": workspace_id, "length": len(wanted), "prefix": wanted},
    )


# --- workspaces -------------------------------------------------------------------------------
_WORKSPACE = (
    "SELECT w.id, w.path, CAST(w.created_at AS VARCHAR), CAST(w.last_opened_at AS VARCHAR), "
    "w.memory_enabled, w.review_mode, w.synced_file FROM workspaces AS w"
)


def workspace_of(row: Row) -> Workspace:
    """A workspace from the columns of ``_WORKSPACE``."""
    ws_id, path, created_at, last_opened_at, enabled, mode, synced_file = row
    return Workspace(
        id=ws_id,
        path=path,
        created_at=stored_at(created_at),
        last_opened_at=utc_time(last_opened_at),
        memory_enabled=bool(enabled),
        review_mode=review_mode(mode),
        synced_file=synced_file,
    )


def workspace(query: Query, workspace_id: str) -> Workspace | None:
    """The stored workspace with this id, or ``None``."""
    found = query.rows(_WORKSPACE + " WHERE w.id = :workspace", {"workspace": workspace_id})
    return workspace_of(found[0]) if found else None


def existing_workspace(query: Query, workspace_id: str) -> Workspace:
    """Raises ``WorkspaceNotFound`` for an unknown id."""
    found = workspace(query, workspace_id)
    if found is None:
        raise no_workspace(workspace_id)
    return found


def find_workspace(
    query: Query, key: str, workspace_id: str, *, by_folder: bool
) -> Workspace | None:
    """The workspace ``workspace_id`` (derived from ``key``), else, with ``by_folder``, a
    stored workspace with another key whose folder is, right now, the folder at ``key`` (an
    alias: the same ``(st_dev, st_ino)``; a row whose folder is gone or is now another folder
    is none)."""
    found = workspace(query, workspace_id)
    if found is not None or not by_folder:
        return found
    identity = paths.folder_identity(key)
    if identity is None:
        return None
    candidates = query.rows(
        _WORKSPACE + " WHERE w.st_dev = :dev AND w.st_ino = :ino AND w.id != :workspace",
        {"dev": str(identity[0]), "ino": str(identity[1]), "workspace": workspace_id},
    )
    for row in candidates:
        if paths.folder_identity(row[1]) == identity:
            return workspace_of(row)
    return None


def linked_to(query: Query, workspace_id: str) -> Workspace | None:
    """The workspace whose document ``workspace_id`` uses, or ``None``."""
    found = query.rows(
        _WORKSPACE
        + " WHERE w.id = (SELECT target_id FROM workspace_links WHERE workspace_id = :workspace)",
        {"workspace": workspace_id},
    )
    return workspace_of(found[0]) if found else None


_WITH_DOCUMENT = (
    "SELECT w.id, w.path, CAST(w.created_at AS VARCHAR), CAST(w.last_opened_at AS VARCHAR), "
    "w.memory_enabled, w.review_mode, w.synced_file, d.version, d.content, "
    "CAST(d.updated_at AS VARCHAR), CAST(d.flags AS VARCHAR) "
    "FROM workspaces AS w JOIN memory_documents AS d ON d.workspace_id = w.id"
)


def _summary(row: Row) -> MemorySummary:
    version, content, updated_at, flags = row[7:]
    return MemorySummary(
        workspace=workspace_of(row[:7]),
        version=int(version),
        lines=count_lines(content),
        chars=len(content),
        updated_at=utc_time(updated_at),
        flags=strings(flags),
        orphaned=not os.path.isdir(row[1]),
    )


def memories_at(query: Query, keys: Sequence[str]) -> dict[str, MemorySummary]:
    """The stored workspaces at exactly these keys whose document is not empty, by key."""
    if not keys:
        return {}
    names = {f"key{i}": key for i, key in enumerate(keys)}
    marks = ", ".join(f":{name}" for name in names)
    rows = query.rows(f"{_WITH_DOCUMENT} WHERE w.path IN ({marks}) AND d.content != ''", names)
    return {summary.workspace.path: summary for summary in map(_summary, rows)}


def orphans_named(query: Query, name: str) -> list[MemorySummary]:
    """The workspaces whose folder is gone, whose folder's name is exactly ``name`` and whose
    document is not empty, most recently updated first."""
    ending = os.sep + name
    rows = query.rows(
        f"{_WITH_DOCUMENT} WHERE substr(w.path, length(w.path) - :length + 1) = :ending "
        "AND d.content != '' ORDER BY d.updated_at DESC",
        {"length": len(ending), "ending": ending},
    )
    return [summary for summary in map(_summary, rows) if summary.orphaned]


def orphans_beside(query: Query, folder: str) -> list[tuple[MemorySummary, str]]:
    """The workspaces whose folder is gone, in the same parent folder as the key ``folder``,
    with a non-empty document, most recently updated first: each with its document's text."""
    parent = os.path.dirname(folder)
    prefix = parent.rstrip(os.sep) + os.sep
    rows = query.rows(
        f"{_WITH_DOCUMENT} WHERE substr(w.path, 1, :length) = :prefix "
        "AND d.content != '' ORDER BY d.updated_at DESC",
        {"length": len(prefix), "prefix": prefix},
    )
    found = []
    for row in rows:
        summary = _summary(row)
        if summary.orphaned and os.path.dirname(summary.workspace.path) == parent:
            found.append((summary, row[8]))
    return found


def declined_renames(query: Query, folder: str) -> set[str]:
    """The ids of the orphaned workspaces declined as the predecessor of ``folder``."""
    rows = query.rows(
        "SELECT workspace_id FROM declined_renames WHERE folder = :folder", {"folder": folder}
    )
    return {row[0] for row in rows}


# --- documents and revisions ------------------------------------------------------------------
# The workspace whose document a workspace uses: the one it is linked to (a worktree sharing
# its main checkout's, "Scopes" in docs/workspaces.md), else itself.
OWNER = (
    "coalesce((SELECT target_id FROM workspace_links WHERE workspace_id = :workspace), :workspace)"
)
# A document's bytes exactly: on SQLite a text column may hold bytes that are not UTF-8
# (written by another program); PostgreSQL's text is always valid.
_BYTES = {"sqlite": "CAST(content AS BLOB)", "postgresql": "convert_to(content, 'UTF8')"}


def _document_row(query: Query, workspace_id: str) -> Row | None:
    found = query.rows(
        f"SELECT {_BYTES[query.dialect]}, version, CAST(flags AS VARCHAR), "
        f"CAST(updated_at AS VARCHAR) FROM memory_documents WHERE workspace_id = {OWNER}",
        {"workspace": workspace_id},
    )
    if found:
        return found[0]
    existing_workspace(query, workspace_id)  # unknown: raises
    return None


def read_document(query: Query, workspace_id: str) -> MemoryDocument:
    """The current document (of the workspace it is linked to, if any), under
    ``workspace_id``; version 0 and empty content when never written.

    Raises:
        WorkspaceNotFound: unknown id. UnreadableDocument: the bytes are not UTF-8.
    """
    row = _document_row(query, workspace_id)
    if row is None:
        return MemoryDocument.never_written(workspace_id)
    raw, version, flags, updated_at = row
    return MemoryDocument(
        workspace_id=workspace_id,
        content=decode_document(workspace_id, int(version), raw),
        version=int(version),
        updated_at=utc_time(updated_at),
        flags=strings(flags),
    )


def read_raw(query: Query, workspace_id: str) -> bytes:
    """The stored document's bytes exactly, readable or not (``b""`` when never written).

    Raises:
        WorkspaceNotFound: unknown id.
    """
    row = _document_row(query, workspace_id)
    return b"" if row is None else bytes(row[0] or b"")


REVISION = (
    "SELECT id, workspace_id, version, source, content, lines, chars, CAST(flags AS VARCHAR), "
    "CAST(created_at AS VARCHAR), model, CAST(session_ids AS VARCHAR), restored_from, added, "
    "removed, evidence FROM memory_revisions"
)


def revision_of(row: Row) -> Revision:
    """A revision from the columns of :data:`REVISION`."""
    (r_id, ws_id, version, source, content, n_lines, n_chars, flags, created_at) = row[:9]
    model, session_ids, restored_from, added, removed, evidence = row[9:]
    return Revision(
        id=r_id,
        workspace_id=ws_id,
        version=int(version),
        source=RevisionSource(source),
        content=content,
        lines=int(n_lines),
        chars=int(n_chars),
        flags=strings(flags),
        created_at=stored_at(created_at),
        model=model,
        session_ids=strings(session_ids),
        restored_from=restored_from,
        added=added or 0,
        removed=removed or 0,
        evidence=stored_evidence(evidence),
    )


def history(query: Query, workspace_id: str) -> list[Revision]:
    """The revisions of the document the workspace uses, newest first."""
    rows = query.rows(
        f"{REVISION} WHERE workspace_id = {OWNER} ORDER BY version DESC, id DESC",
        {"workspace": workspace_id},
    )
    return [revision_of(row) for row in rows]


def evidence_history(
    query: Query, workspace_id: str
) -> list[tuple[datetime, tuple[Evidence, ...]]]:
    """When each revision that kept evidence was stored, with that evidence, oldest first (no
    content read: a line's age needs only these, ``yak.memory.freshness.age``)."""
    rows = query.rows(
        "SELECT CAST(created_at AS VARCHAR), evidence FROM memory_revisions "
        f"WHERE workspace_id = {OWNER} AND evidence IS NOT NULL ORDER BY version, id",
        {"workspace": workspace_id},
    )
    return [(stored_at(created_at), stored_evidence(evidence)) for created_at, evidence in rows]


def revisions_since(query: Query, workspace_id: str, version: int) -> list[Revision]:
    """The revisions whose version is ``version`` or newer, oldest first (ties by id)."""
    rows = query.rows(
        f"{REVISION} WHERE workspace_id = {OWNER} AND version >= :version ORDER BY version, id",
        {"workspace": workspace_id, "version": version},
    )
    return [revision_of(row) for row in rows]


def revision(query: Query, workspace_id: str, given: str) -> Revision:
    """A revision of the document the workspace uses by full id, unique id prefix (at least
    ``MIN_ID_PREFIX`` characters) or version number (``"3"``: the revision that produced
    version 3).

    Raises:
        RevisionNotFound: none matches, several do, or the prefix is too short.
    """
    owned = query.rows(f"SELECT {OWNER}", {"workspace": workspace_id})[0][0]
    wanted = (given or "").strip().upper()
    if wanted.isascii() and wanted.isdigit():
        # A version number. Ids are Crockford base32 and could in theory be all digits, so a
        # long enough number that is no version is still tried as an id prefix.
        by_version = query.rows(
            f"{REVISION} WHERE workspace_id = :owner AND version = :version LIMIT 2",
            {"owner": owned, "version": int(wanted)},
        )
        if len(by_version) == 1:
            return revision_of(by_version[0])
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
    rows = by_prefix(query, REVISION, owned, id_prefix(given, REVISION_IDS))
    return revision_of(only_match(rows, given, REVISION_IDS))


# Every workspace with a memory (a non-empty document or any revision), most recently updated
# first: plain columns, the line and character counts computed by the database so no content is
# loaded, the times and flags as their stored text (decoded by :func:`summaries_of`), and how
# many proposals wait for review, counted once for all workspaces (a grouped join, not a
# query per row: the Settings list holds 10,000 of them).
SUMMARIES_SQL = """
SELECT w.id, w.path, CAST(w.created_at AS VARCHAR), CAST(w.last_opened_at AS VARCHAR),
       w.memory_enabled, w.review_mode,
       coalesce(d.version, 0),
       CASE WHEN coalesce(d.content, '') = '' THEN 0
            ELSE length(d.content) - length(replace(d.content, :newline, ''))
                 + CASE WHEN substr(d.content, length(d.content), 1) = :newline THEN 0 ELSE 1 END
       END,
       length(coalesce(d.content, '')),
       CAST(d.updated_at AS VARCHAR), CAST(d.flags AS VARCHAR), w.shared_key,
       coalesce(p.waiting, 0)
FROM workspaces AS w LEFT OUTER JOIN memory_documents AS d ON d.workspace_id = w.id
LEFT OUTER JOIN (SELECT workspace_id, count(*) AS waiting FROM memory_proposals
                 WHERE status = :pending GROUP BY workspace_id) AS p ON p.workspace_id = w.id
WHERE coalesce(d.content, '') != ''
   OR EXISTS (SELECT 1 FROM memory_revisions AS r WHERE r.workspace_id = w.id)
ORDER BY d.updated_at IS NULL, d.updated_at DESC, w.path
"""


# SQLite stores whatever bytes another program wrote into a text column, and counts them as it
# guesses; only the documents with a byte outside ASCII can be other than UTF-8, so only their
# bytes are read (PostgreSQL's text is always valid UTF-8).
NOT_ASCII_SQL = """
SELECT workspace_id, CAST(content AS BLOB) FROM memory_documents WHERE content GLOB :pattern
"""
_NOT_ASCII = "*[^\x01-\x7f]*"


def summaries(query: Query) -> list[MemorySummary]:
    """Every workspace with a memory, most recently updated first, with its count of waiting
    proposals (:data:`SUMMARIES_SQL`); on
    SQLite a document whose bytes are not UTF-8 is marked (``valid_utf8`` false) and counted
    from its bytes (each byte that is not UTF-8 one character), not as SQLite guesses."""
    found = summaries_of(
        query.rows(SUMMARIES_SQL, {"newline": "\n", "pending": str(ProposalStatus.PENDING)})
    )
    if query.dialect != "sqlite":
        return found
    unreadable: dict[str, str] = {}
    for workspace_id, raw in query.rows(NOT_ASCII_SQL, {"pattern": _NOT_ASCII}):
        data = bytes(raw or b"")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            unreadable[workspace_id] = data.decode("utf-8", "replace")
    if not unreadable:
        return found
    return [
        s
        if s.workspace.id not in unreadable
        else replace(
            s,
            lines=count_lines(unreadable[s.workspace.id]),
            chars=len(unreadable[s.workspace.id]),
            valid_utf8=False,
        )
        for s in found
    ]


def summaries_of(rows: Sequence[Row]) -> list[MemorySummary]:
    """The memory list from the rows of :data:`SUMMARIES_SQL`, each marked ``orphaned`` when
    its folder is gone (:func:`yak.paths.missing_folders`: a call per parent folder, not a
    ``stat`` per workspace) and it has no shared key (a shared workspace's folder is on other
    machines too).

    One pass with local names: at 10,000 rows each attribute look-up and call counts."""
    parse, mode_of = datetime.fromisoformat, review_mode
    missing = paths.missing_folders(row[1] for row in rows)
    found: list[MemorySummary] = []
    append = found.append
    for (
        ws_id,
        path,
        created_at,
        last_opened_at,
        enabled,
        mode,
        version,
        n_lines,
        n_chars,
        updated_at,
        flags,
        shared_key,
        waiting,
    ) in rows:
        workspace = Workspace(
            id=ws_id,
            path=path,
            created_at=parse(created_at + "+00:00"),
            last_opened_at=parse(last_opened_at + "+00:00") if last_opened_at else None,
            memory_enabled=bool(enabled),
            review_mode=mode_of(mode),
        )
        append(
            MemorySummary(
                workspace=workspace,
                version=int(version),
                lines=int(n_lines),
                chars=int(n_chars),
                updated_at=parse(updated_at + "+00:00") if updated_at else None,
                flags=() if flags in (None, "[]") else tuple(json.loads(flags)),
                orphaned=shared_key is None and path in missing,
                proposals=int(waiting),
            )
        )
    return found


# --- proposals --------------------------------------------------------------------------------
PROPOSAL = (
    "SELECT id, workspace_id, base_version, content, CAST(reasons AS VARCHAR), added, removed, "
    "status, CAST(created_at AS VARCHAR), model, CAST(session_ids AS VARCHAR), "
    "CAST(watermarks AS VARCHAR), CAST(flags AS VARCHAR), CAST(decided_at AS VARCHAR), "
    "origin, client, result_version, superseded_by, conflicts_with, evidence, held_lines, owner "
    "FROM memory_proposals"
)


def proposal_of(row: Row) -> Proposal:
    """A proposal from the columns of :data:`PROPOSAL`."""
    (p_id, ws_id, base, content, reasons, added, removed, status, created_at) = row[:9]
    model, session_ids, watermarks, flags, decided_at = row[9:14]
    origin, client, result_version, superseded_by, conflicts_with, evidence, held, owner = row[14:]
    return Proposal(
        id=p_id,
        workspace_id=ws_id,
        base_version=int(base),
        content=content,
        reasons=strings(reasons),
        added=added or 0,
        removed=removed or 0,
        status=ProposalStatus(status),
        created_at=stored_at(created_at),
        model=model,
        session_ids=strings(session_ids),
        watermarks=dict(json.loads(watermarks)) if watermarks else {},
        flags=strings(flags),
        decided_at=utc_time(decided_at),
        origin=ProposalOrigin(origin or ProposalOrigin.REFRESH),
        client=client,
        result_version=result_version,
        superseded_by=superseded_by,
        conflicts_with=conflicts_with,
        evidence=stored_evidence(evidence),
        held_lines=stored_held_lines(held),
        owner=owner,
    )


def proposals(query: Query, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
    """The proposals of the document the workspace uses, oldest first (only the pending ones
    by default)."""
    sql = f"{PROPOSAL} WHERE workspace_id = {OWNER}"
    parameters: dict[str, object] = {"workspace": workspace_id}
    if pending_only:
        sql += " AND status = :status"
        parameters["status"] = str(ProposalStatus.PENDING)
    return [proposal_of(row) for row in query.rows(sql + " ORDER BY id", parameters)]
