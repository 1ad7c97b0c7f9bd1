"""What both ways of reading the database share without SQLAlchemy: the file's name, the busy
timeout, the newest migration's revision read from the migration files as text, and the
decoding of stored values (naive-UTC time text, review modes, document bytes, evidence, held
lines).

``yak.db.engine`` (SQLAlchemy and Alembic), ``yak.db.reads`` (the hot reads' SQL) and
``yak.db.sqlite_read`` (plain ``sqlite3``, the fast path of commands that only read) import
from here.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from yak.domain import ReviewMode
from yak.errors import StoreError, UnreadableDocument
from yak.evidence import Evidence, Speaker
from yak.held import HeldKind, HeldLine

DB_FILE = "yak.db"
BUSY_TIMEOUT_MS = 5000

# A line of a migration file naming its revision or its parents, e.g. ``revision = "0002"``,
# ``revision: str = "0002"`` or ``down_revision = ("0003a", "0003b")`` (a merge).
_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=(.*)$", re.MULTILINE)
_QUOTED = re.compile(r"""["']([^"'\s]+)["']""")


@functools.cache
def head_revision() -> str | None:
    """The newest migration's revision id, read as text from the ``revision`` and
    ``down_revision`` lines of ``yak/db/migrations/versions/*.py`` (neither the files nor
    Alembic are imported): the one revision no other file names as its parent.

    Returns ``None`` when that is not clear (a file without one ``revision`` line, or several
    heads); the caller then asks Alembic, so a surprise costs time, never correctness.
    """
    # The folder beside this module, as Alembic finds it (``importlib.resources`` would load
    # its readers and ``zipfile`` on every run of a reading command).
    versions = Path(__file__).parent / "migrations" / "versions"
    revisions: set[str] = set()
    parents: set[str] = set()
    for entry in versions.iterdir():
        if not entry.name.endswith(".py"):
            continue
        names: dict[str, list[str]] = {"revision": [], "down_revision": []}
        for kind, value in _REVISION_LINE.findall(entry.read_text(encoding="utf-8")):
            names[kind].append(value)
        if len(names["revision"]) != 1 or len(names["down_revision"]) != 1:
            return None
        ids = _QUOTED.findall(names["revision"][0])
        if len(ids) != 1:
            return None
        revisions.add(ids[0])
        parents.update(_QUOTED.findall(names["down_revision"][0]))
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


_REVIEW_MODES = {mode.value: mode for mode in ReviewMode}


def review_mode(value: str | None) -> ReviewMode:
    """A stored review mode; anything unknown reads as ``auto``.

    A dictionary lookup: the memory list decodes one per workspace, and calling the enum
    class costs several times more."""
    return _REVIEW_MODES.get(value or "auto", ReviewMode.AUTO)


def utc_time(text: str | None) -> datetime | None:
    """A stored time (naive UTC text, ``YYYY-MM-DD HH:MM:SS[.ffffff]``, as
    ``yak.db.models.UTCDateTime`` writes it) as an aware UTC ``datetime``; ``None`` for
    ``None`` or ``""``. One ``fromisoformat`` with the offset appended (``replace`` afterwards
    costs four times more)."""
    return datetime.fromisoformat(text + "+00:00") if text else None


def decode_document(workspace_id: str, version: int, raw: bytes | None) -> str:
    """A stored document's bytes as text.

    Raises:
        UnreadableDocument: they are not UTF-8.
    """
    data = bytes(raw or b"")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableDocument(
            f"The memory document (version {version}) is not valid UTF-8 text (byte "
            f"{exc.start + 1:,} of {len(data):,}; written by another program?). See its bytes "
            "with 'yak memory show --raw', then restore a revision ('yak memory history', "
            "'yak memory restore N') or save a new text ('yak memory set').",
            workspace_id=workspace_id,
            version=version,
            raw=data,
        ) from None


_EVIDENCE_KEYS = ("line", "session_id", "message_id", "speaker", "quote")


def _json_list(items: Iterable[dict[str, Any]]) -> str | None:
    """A JSON column holding a list of objects: the list's text, or ``None`` (SQL ``NULL``)
    for no object."""
    listed = list(items)
    return json.dumps(listed, ensure_ascii=False) if listed else None


def _stored_objects(text: str | None) -> list[dict[str, Any]]:
    """The objects of a JSON list column; ``[]`` for ``NULL`` or text that is no JSON list,
    and an entry that is no object left out (another program may have written it)."""
    if not text:
        return []
    try:
        items = json.loads(text)
    except ValueError:
        return []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def evidence_text(evidence: Iterable[Evidence]) -> str | None:
    """Evidence as it is stored in a revision's or a proposal's ``evidence`` column: a JSON
    list of ``{"line", "session_id", "message_id", "speaker", "quote"}`` objects, or ``None``
    (SQL ``NULL``) when there is none ("Evidence" in docs/memory.md)."""
    return _json_list(
        {
            "line": e.line,
            "session_id": e.session_id,
            "message_id": e.message_id,
            "speaker": str(e.speaker),
            "quote": e.quote,
            **({"verified": True} if e.verified else {}),
        }
        for e in evidence
    )


_SPEAKERS = {speaker.value: speaker for speaker in Speaker}


def stored_evidence(text: str | None) -> tuple[Evidence, ...]:
    """The evidence of an ``evidence`` column (``()`` for ``NULL``). An entry that is not
    an object of five strings with a known speaker (written by another program) is left
    out: it backs nothing, and the line then reads "no evidence recorded"."""
    found = []
    for item in _stored_objects(text):
        values = [item.get(key) for key in _EVIDENCE_KEYS]
        if not all(isinstance(value, str) for value in values):
            continue
        line, session_id, message_id, speaker, quote = map(str, values)
        if speaker not in _SPEAKERS:
            continue
        verified = item.get("verified") is True
        found.append(
            Evidence(line, session_id, message_id, _SPEAKERS[speaker], quote, verified=verified)
        )
    return tuple(found)


def held_lines_text(held: Iterable[HeldLine]) -> str | None:
    """Why a proposal waits, as it is stored in its ``held_lines`` column: a JSON list of
    ``{"kind", "line"}`` objects, with ``"detail"`` and ``"lines"`` when they have any, or
    ``None`` (SQL ``NULL``) when there is none ("The inbox" in docs/memory.md)."""
    return _json_list(
        {
            "kind": str(h.kind),
            "line": h.line,
            **({"detail": h.detail} if h.detail else {}),
            **({"lines": list(h.lines)} if h.lines else {}),
        }
        for h in held
    )


_KINDS = {kind.value: kind for kind in HeldKind}


def stored_held_lines(text: str | None) -> tuple[HeldLine, ...]:
    """The held lines of a ``held_lines`` column (``()`` for ``NULL``). An entry of an unknown
    kind or not of strings (written by another program) is left out: the proposal's stored
    reasons still say why it waits."""
    found = []
    for item in _stored_objects(text):
        if item.get("kind") not in _KINDS:
            continue
        line, detail, lines = item.get("line", ""), item.get("detail", ""), item.get("lines", [])
        if not (isinstance(line, str) and isinstance(detail, str) and isinstance(lines, list)):
            continue
        if not all(isinstance(named, str) for named in lines):
            continue
        found.append(HeldLine(line, _KINDS[item["kind"]], detail, tuple(lines)))
    return tuple(found)


class SchemaBehind(StoreError):
    """A read-only database whose schema needs a migration (which needs writing)."""
