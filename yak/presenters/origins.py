"""Why a line is there and who wrote a version when, in words (the hover, ``blame``, History)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from yak.domain import (
    DEFAULT_SESSION_TITLE,
)
from yak.evidence import EVIDENCE_QUOTE_CHARS, Evidence, Speaker
from yak.memory.freshness.age import LineAge
from yak.memory.freshness.stale import StaleReason
from yak.text import one_line

# --- why a line is there ---------------------------------------------------------------------
NO_EVIDENCE = "no evidence recorded"


TYPED_BY_YOU = "typed by you"


SHORT_ID_CHARS = 8  # a conversation named by its id shows this many characters of it


_SAID = {
    Speaker.USER: "you said",
    Speaker.ASSISTANT: "the assistant said",
    Speaker.TOOL_CALL: "seen in a tool call",
    Speaker.WORKSPACE: "found in the workspace",
}


def evidence_words(
    evidence: Evidence | None,
    *,
    by_person: bool = False,
    titles: Mapping[str, str] | None = None,
) -> str:
    """A memory line's answer to "why is this here?" ("Evidence" in docs/memory.md), the
    same in blame, the panel's hover, the editor's line status, the review dialog and MCP:

    - with evidence: ``you said in "Set up CI": "we moved from Poetry to uv"`` (``the
      assistant said in …``, ``seen in a tool call in …``); the conversation by its title
      in ``titles`` (``{session_id: title}``), else ``conversation 01JDX3K8`` (its id's first
      eight characters: deleted, or never titled); the quote on one line, at most
      ``EVIDENCE_QUOTE_CHARS`` characters; for the workspace: ``found in the workspace:
      pyproject.toml``;
    - else, a line a person wrote (``by_person``): ``typed by you``;
    - else (a refresh or a proposal wrote it before evidence was kept, or found none):
      ``no evidence recorded``.
    """
    if evidence is not None and evidence.speaker is Speaker.WORKSPACE:
        return f"{_SAID[Speaker.WORKSPACE]}: {one_line(evidence.quote, EVIDENCE_QUOTE_CHARS)}"
    if evidence is not None:
        title = (titles or {}).get(evidence.session_id, "")
        if title and title != DEFAULT_SESSION_TITLE:
            where = f'"{one_line(title, 60)}"'
        else:
            where = f"conversation {evidence.session_id[:SHORT_ID_CHARS]}"
        quote = one_line(evidence.quote, EVIDENCE_QUOTE_CHARS)
        return f'{_SAID[evidence.speaker]} in {where}: "{quote}"'
    return TYPED_BY_YOU if by_person else NO_EVIDENCE


# --- who wrote a version ------------------------------------------------------------------
# A revision's source (``RevisionSource``, or ``MemoryChanged.source``, which adds "external":
# another process wrote it) as a label, inside a sentence, and after "Memory updated to …".
_SOURCE_WORDS = {
    # source: (label, in a sentence, after a change)
    "refresh": ("refresh", "a memory refresh", "memory refresh"),
    "hand": ("hand edit", "a hand edit", "hand edit"),
    "import": ("import", "an import", "import"),
    "restore": ("restore", "a restore", "restore"),
    "clear": ("cleared", "a delete", "cleared"),
    "copy": (
        "copy",
        "a copy of the enclosing workspace's memory",
        "copied from the enclosing workspace",
    ),
    "external": (
        "external",
        "another program (such as the yak command)",
        "changed by another program",
    ),
}


def source_label(source: str) -> str:
    """A revision's source as a table cell: ``"hand"`` → ``"hand edit"``; an unknown one with
    its underscores as spaces."""
    words = _SOURCE_WORDS.get(source)
    return words[0] if words else source.replace("_", " ")


def source_text(source: str) -> str:
    """Who wrote a memory version, for a sentence: ``"a memory refresh"``, ``"a hand edit"``…
    (``source`` is ``MemoryChanged.source``)."""
    words = _SOURCE_WORDS.get(source)
    return words[1] if words else source


def change_words(source: str) -> str:
    """What a change was, after ``Memory updated to version N``: ``"hand edit"``,
    ``"changed by another program"``…"""
    words = _SOURCE_WORDS.get(source)
    return words[2] if words else source


# --- a line's age ----------------------------------------------------------------------------


def stale_reason_words(reason: StaleReason) -> str:
    """Why a line is stale, in a few words (``blame``, ``stale``, the panel)."""
    return {StaleReason.AGED: "aged", StaleReason.GONE: "gone"}.get(reason, str(reason))


def age_words(age: LineAge) -> str:
    """A line's age for the hover and the editor: ``first said 2026-08-09 · last confirmed
    2026-11-02`` (local dates)."""
    first = age.first_said.astimezone().date().isoformat()
    last = age.last_confirmed.astimezone().date().isoformat()
    return f"first said {first} · last confirmed {last}"


def local_time(moment: datetime | None, *, missing: str = "") -> str:
    """``moment`` in the local time zone as ``YYYY-MM-DD HH:MM`` (a naive time is taken as UTC,
    as Yak stores times); ``missing`` for ``None`` (the command line's tables show ``-``)."""
    if moment is None:
        return missing
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
