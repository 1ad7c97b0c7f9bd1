"""Checking the quotes a tool-form reply gives as support ("Evidence" in docs/memory.md). Pure.

The memory model may say which conversation and which words support a line. That is a claim,
never trusted: provenance a model writes can be forged. Yak looks for the quoted words in the
named conversation, as stored and redacted (case and runs of whitespace folded, a leading
speaker name such as ``user:`` and surrounding quotation marks taken off); when found, the
message that holds them, with its real speaker, is the line's evidence (``verified``). A quote
never changes who said something: a quote of the assistant's words stays the assistant's, so
it never makes an instruction "typed by a person" (that is judged from the passages
themselves, ``yak.memory.judging.grounding``). A quote that is not found proves nothing, and the
line's own grounding decides it, as for any other form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from yak.evidence import EVIDENCE_QUOTE_CHARS, Evidence, Speaker
from yak.memory.forms import Quote
from yak.memory.judging.said import Passage
from yak.memory.lines import fold

MIN_QUOTE_CHARS = 8  # a shorter quote ("yes", "ok") is found anywhere and proves nothing
_SPEAKER = re.compile(r"^\s*(?:user|assistant|human|the user|the assistant)\s*(?:said)?\s*:\s*")
_SPOKEN_BY = re.compile(_SPEAKER.pattern, re.IGNORECASE)
_MARKS = "\"'“”‘’`«» "


def fold_quote(text: str) -> str:
    """A quote or a message as compared: case folded, whitespace runs made one space, a
    leading speaker name and surrounding quotation marks taken off, end punctuation too."""
    folded = _SPEAKER.sub("", fold(text)).strip(_MARKS)
    return folded.rstrip(".!?;:, ").strip(_MARKS)


def without_speaker(text: str) -> str:
    """``text`` without a leading speaker name (``user:``, ``Assistant:``, ``the user said:``)."""
    return _SPOKEN_BY.sub("", text)


def quote_speaker(
    quote: str, conversation: object, session_ids: Sequence[str], passages: Sequence[Passage]
) -> Speaker | None:
    """Who said ``quote`` in the conversation numbered ``conversation`` (1-based, request
    order), as :func:`verify` finds it; ``None`` when it is not found there or
    ``conversation`` is not a number."""
    if not isinstance(conversation, int) or isinstance(conversation, bool):
        return None
    found = verify(Quote(quote, conversation, quote), session_ids, passages)
    return None if found is None else found.speaker


def verify(
    quote: Quote, session_ids: Sequence[str], passages: Sequence[Passage]
) -> Evidence | None:
    """The evidence a quote points at, when its words are in the conversation it names.

    Args:
        quote: the model's claim (the conversation's number is 1-based, in request order).
        session_ids: the request's conversations, in order (``Transcript.session_ids``).
        passages: the folded conversations (``yak.memory.judging.said.passages``), redacted.

    Returns:
        ``Evidence(verified=True)`` for ``quote.line`` from the first message of that
        conversation holding the words (a person's before the assistant's, the assistant's
        before a tool call), or ``None`` when the conversation does not exist, the quote is
        shorter than ``MIN_QUOTE_CHARS`` characters, or its words are not there.
    """
    if not 1 <= quote.conversation <= len(session_ids):
        return None
    wanted = fold_quote(quote.quote)
    if len(wanted) < MIN_QUOTE_CHARS:
        return None
    session_id = session_ids[quote.conversation - 1]
    found = [
        (speaker, message_id)
        for (speaker, message_id), text in _messages(passages, session_id).items()
        if wanted in text
    ]
    if not found:
        return None
    rank = {Speaker.USER: 0, Speaker.ASSISTANT: 1, Speaker.TOOL_CALL: 2, Speaker.WORKSPACE: 3}
    speaker, message_id = min(found, key=lambda item: rank[item[0]])
    shown = " ".join(quote.quote.split()).strip(_MARKS)
    if len(shown) > EVIDENCE_QUOTE_CHARS:
        shown = shown[: EVIDENCE_QUOTE_CHARS - 1] + "…"
    return Evidence(quote.line, session_id, message_id, speaker, shown, verified=True)


def with_quotes(
    evidence: Iterable[Evidence],
    quotes: Sequence[Quote],
    *,
    session_ids: Sequence[str],
    passages: Sequence[Passage],
) -> tuple[Evidence, ...]:
    """``evidence`` (Yak's own, per line) with each verified quote in place of its line's
    entry; a line whose quote is not found keeps Yak's own evidence."""
    verified: dict[str, Evidence] = {}
    for quote in quotes:
        found = verify(quote, session_ids, passages)
        if found is not None and quote.line not in verified:
            verified[quote.line] = found
    merged = [verified.get(item.line, item) for item in evidence]
    lines = {item.line for item in merged}
    merged += [item for line, item in verified.items() if line not in lines]
    return tuple(replace(item) for item in merged)


def _messages(passages: Sequence[Passage], session_id: str) -> dict[tuple[Speaker, str], str]:
    """Each message of the conversation (and each tool call) as one folded text."""
    texts: dict[tuple[Speaker, str], list[str]] = {}
    for passage in passages:
        if passage.session_id == session_id:
            texts.setdefault((passage.speaker, passage.message_id), []).append(passage.text)
    return {key: fold_quote(" ".join(parts)) for key, parts in texts.items()}
