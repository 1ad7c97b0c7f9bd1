"""The memory document and its history: the document as stored, its revisions, the
origin of each line, tombstones, and the ceiling and floor of the memory rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from yak.evidence import Evidence

# The ceiling ("The memory document" in docs/memory.md): a document has at most this many
# lines and characters.
MAX_LINES = 200
MAX_CHARS = 25_000
# The floor: a rewrite below FLOOR_MIN_CHARS when the previous document had at least that many,
# or keeping under FLOOR_RATIO of its non-blank lines or characters, is a collapse.
FLOOR_MIN_CHARS = 100
FLOOR_RATIO = 0.5


class RevisionSource(StrEnum):
    """Where an applied write came from (stored in every revision)."""

    REFRESH = "refresh"  # an LLM rewrite
    HAND = "hand"  # typed in the editor or ``yak memory set`` / ``edit``
    IMPORT = "import"
    RESTORE = "restore"
    CLEAR = "clear"  # ``yak memory delete`` or Delete… in Settings; restorable
    PROPOSAL = "proposal"  # a reviewed rewrite the person accepted (flag ``edited``: edited)
    COPY = (
        "copy"  # the enclosing workspace's document, copied by the person (flag ``copied_from:``)
    )


def count_lines(text: str) -> int:
    """Lines in a document as a user counts them: ``""`` is 0, ``"a"`` and ``"a\\n"`` are 1."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True)
class MemoryDocument:
    """A workspace's memory document as stored now. ``version`` 0 means never written."""

    workspace_id: str
    content: str
    version: int
    updated_at: datetime | None
    flags: tuple[str, ...] = ()

    @classmethod
    def never_written(cls, workspace_id: str) -> MemoryDocument:
        """The empty document, version 0, of a workspace whose memory was never written."""
        return cls(workspace_id=workspace_id, content="", version=0, updated_at=None)

    @property
    def lines(self) -> int:
        """Line count (see :func:`count_lines`)."""
        return count_lines(self.content)

    @property
    def chars(self) -> int:
        """Character count (Unicode code points)."""
        return len(self.content)

    @property
    def tokens(self) -> int:
        """About how many tokens the document adds to every chat request it is injected into
        (:func:`estimate_tokens`: an estimate, shown with "≈")."""
        return estimate_tokens(self.content)


CHARS_PER_TOKEN = 4
"""The estimate's characters per token: what Anthropic's documentation gives for English text;
code and other languages run higher, so the figure is an order of magnitude, not a bill (no
tokenizer is available offline). See "Cost" in docs/memory.md."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: its characters / :data:`CHARS_PER_TOKEN`, rounded
    up (0 for ""). An estimate; no tokenizer is consulted."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Revision:
    """An applied write to a memory document: append-only history."""

    id: str
    workspace_id: str
    version: int
    source: RevisionSource
    content: str
    lines: int
    chars: int
    flags: tuple[str, ...]
    created_at: datetime
    model: str | None = None
    session_ids: tuple[str, ...] = ()
    restored_from: str | None = None  # revision id, for RESTORE
    added: int = 0  # lines added against the version it was based on
    removed: int = 0  # lines removed against it
    evidence: tuple[Evidence, ...] = ()  # for the lines a refresh added or changed

    @property
    def document(self) -> MemoryDocument:
        """The document as this revision wrote it (``updated_at``: when it was written)."""
        return MemoryDocument(
            workspace_id=self.workspace_id,
            content=self.content,
            version=self.version,
            updated_at=self.created_at,
            flags=self.flags,
        )


@dataclass(frozen=True)
class Tombstone:
    """A line a person removed on purpose; rewrites must not bring it back silently.

    Attributes:
        key: the line folded (case, spacing, end punctuation), what a returning line is
            matched on.
        text: the line as it was written.
        source: ``hand`` (deleted by hand) or ``rejected`` (added by a rejected proposal).
        created_at: when it was removed (UTC).
    """

    key: str
    text: str
    source: str
    created_at: datetime


@dataclass(frozen=True)
class WriteEffects:
    """What a write does besides replacing the text, computed from the text it replaces (the
    memory rules decide; the repository stores it in the write's transaction).

    Attributes:
        added: lines added against the replaced text (stored with the revision).
        removed: lines removed.
        bury: ``(key, text)`` of lines that become tombstones.
        lift: keys of tombstones to lift (the person typed those lines again).
    """

    added: int = 0
    removed: int = 0
    bury: tuple[tuple[str, str], ...] = ()
    lift: tuple[str, ...] = ()


@dataclass(frozen=True)
class LineOrigin:
    """Where one line of the current document came from ("Provenance" in
    docs/memory.md).

    Attributes:
        line: its 1-based line number in the current document.
        text: the line.
        version: the version whose write introduced it in this exact form.
        source: that write's source (hand, import, refresh, restore, proposal, clear).
        created_at: when that write happened (UTC).
        revision_id: that write's revision.
        sessions: for a refresh or proposal, the conversations behind it.
        model: the model that wrote it, for a refresh or proposal.
        by_person: a person wrote it (hand, import, an edited proposal): a rewrite may not
            remove or alter it without review.
        evidence: the passage that backed it when a refresh wrote it, or ``None`` (typed by a
            person, or written before evidence was recorded).
    """

    line: int
    text: str
    version: int
    source: RevisionSource
    created_at: datetime
    revision_id: str
    sessions: tuple[str, ...] = ()
    model: str | None = None
    by_person: bool = False
    evidence: Evidence | None = None
