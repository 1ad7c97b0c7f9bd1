"""The free-text rewrite forms: ``edits`` against the numbered document and the ``whole``
document ("The rewrite forms" in docs/refresh.md). Pure.

Their readers hold every rule about a free-text reply's shape: the ``<edits>`` block and its
commands (``yak.memory.forms.edits``), the wrapping a model puts around a whole document (an outer
fence, a tag, chatter: ``guards.clean_reply``), the request's own blocks or retry message sent
back, and lines that are Yak's own request text or edit syntax. A model's habits that only
one model needs are read back only where its profile asks (``yak.memory.forms.profiles``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from yak.domain import RewriteForm
from yak.memory.document import merge_flags
from yak.memory.forms import Candidate, FormError
from yak.memory.forms.edits import (
    EditError,
    apply_edits,
    continued_document,
    holds_edits,
    is_edit_syntax,
    is_numbered,
    parse_edits,
    shown_line,
)
from yak.memory.forms.profiles import PLAIN, Habit, Profile
from yak.memory.history.provenance import fold_line
from yak.memory.judging import grounding, guards
from yak.memory.judging.guards import ECHO_TAGS
from yak.memory.judging.said import Passage
from yak.memory.lines import FENCE
from yak.memory.prompts.rewrite import copies_retry_message, echoes_request
from yak.text import plural

NUMBERED_ECHO = "the reply is the numbered document sent back, with its line numbers"


def read_text(
    form: RewriteForm,
    raw: str,
    previous: str,
    *,
    said: Sequence[Passage] = (),
    declined: bool = False,
    profile: Profile = PLAIN,
) -> Candidate | FormError:
    """Read a free-text reply (already redacted) in ``form``.

    Args:
        form: ``edits`` (a reply holding an ``<edits>`` block is applied to ``previous``; any
            other is read as the whole document, flag ``whole_reply``) or ``whole``.
        raw: the reply's text.
        previous: the document the request showed.
        said: the folded conversations: a line of Yak's own request they back is kept.
        declined: the model declined (stop reason ``refusal``): read as a whole document,
            never as edits.
        profile: the memory model's habits read back (``yak.memory.forms.profiles``).

    Returns:
        The candidate, or a :class:`FormError` when edits do not apply (a line number below
        1, overlapping edits, …) or the reply is the numbered document sent back as it was.
    """
    flags: tuple[str, ...] = ()
    if form is RewriteForm.EDITS and not declined and holds_edits(raw):
        try:
            parsed = parse_edits(raw)
            applied = apply_edits(previous, parsed)
        except EditError as exc:
            return FormError(str(exc), record=raw)
        if not parsed:
            return Candidate(text=previous, unchanged=True, record=raw)
        text = guards.normalize_document(applied)
    elif (
        form is RewriteForm.EDITS
        and is_numbered(raw)
        and not (
            profile.tolerates(Habit.DOCUMENT_WRITTEN_ON)
            and continued_document(raw.splitlines(), previous.splitlines())
        )
    ):
        return FormError(NUMBERED_ECHO, record=raw)
    else:
        text = guards.normalize_document(clean_reply(raw))
        if form is RewriteForm.EDITS and raw.strip():
            flags = ("whole_reply",)
    return _without_echoes(text, raw, previous, flags, said, profile)


def _without_echoes(
    text: str,
    raw: str,
    previous: str,
    flags: tuple[str, ...],
    said: Sequence[Passage],
    profile: Profile,
) -> Candidate:
    """The reply's document once what is Yak's own request is taken out: a reply that repeats
    a request block or a retry message is not a document; lines that are request text or
    edit syntax are dropped (:func:`without_request_lines`)."""
    echo = find_echoed_block(text)
    copied = [line for line in text.splitlines() if copies_retry_message(line)]
    if echo is None and copied:
        echo = (
            f"the reply repeats Yak's own request text (its retry message, "
            f'"{copied[0].strip()[:40]}…") instead of being the document'
        )
    if echo is not None:
        return Candidate(text=text, flags=flags, not_document=echo, record=raw)
    text, dropped = without_request_lines(previous, text, said, profile=profile)
    not_document = None
    if dropped:
        text = guards.normalize_document(text)
        flags = merge_flags(flags, ("request_text_dropped",))
        if not text.strip():
            not_document = (
                f"the reply was only Yak's own request text ({plural(len(dropped), 'line')} "
                f"of its rules, example edits or retry message, first "
                f'"{dropped[0].strip()[:60]}")'
            )
    talk = raw if _has_words(raw) else ""
    return Candidate(
        text=text,
        flags=flags,
        dropped=dropped,
        not_document=not_document,
        talk=talk,
        record=raw,
    )


def without_request_lines(
    previous: str, text: str, passages: Sequence[Passage] = (), *, profile: Profile = PLAIN
) -> tuple[str, tuple[str, ...]]:
    """``text`` without its lines that are edit syntax, or Yak's own request text that the
    conversations (``passages``) do not back, and are not in ``previous`` (a line the document
    already had is the document's business); and those lines, in order. A line of the edits
    example that a person really said ("We moved to Python 3.13.") stays. Two small models'
    habits are read back only where the ``profile`` tolerates them
    (``yak.memory.forms.profiles``): when ``text`` also holds new lines, a numbered line
    showing ``previous``'s own line under its number (``3| - Go 1.22.``) is read as that line
    kept, not dropped (the numbered document sent back with its new facts below it; a
    numbered echo alone, with nothing new, is still dropped whole); and a numbered reply that
    is the whole document under its numbers, then new lines numbered on after it
    (:func:`yak.memory.forms.edits.continued_document`), is read as that document with those
    lines, their numbers taken off, the new lines then checked like any other. The result keeps
    ``text``'s line endings; blank runs left behind are not folded."""
    previous_lines = previous.splitlines()
    before = {fold_line(line) for line in previous_lines}
    lines = text.splitlines(keepends=True)
    written_on = (
        continued_document([line.rstrip("\n") for line in lines], previous_lines)
        if profile.tolerates(Habit.DOCUMENT_WRITTEN_ON)
        else {}
    )
    for i, line in written_on.items():
        lines[i] = line + "\n"  # the numbered document written on: its lines, numbers off
    syntax = {i for i, line in enumerate(lines) if is_edit_syntax(line.rstrip("\n"))}
    echoes = {
        i: line.rstrip("\n")
        for i, line in enumerate(lines)
        if i not in syntax and echoes_request(line.rstrip("\n"))
    }
    if passages and echoes:
        checks = grounding.check_lines(
            list(echoes.values()), document=previous, kept={}, passages=passages
        )
        backed = {c.line for c in checks if c.evidence is not None and c.reason is None}
        echoes = {i: line for i, line in echoes.items() if line not in backed}
    if profile.tolerates(Habit.NUMBERED_LINES_KEPT) and any(
        # new lines beside the numbered document: its numbered lines are its own lines
        line.strip() and i not in syntax | echoes.keys() and fold_line(line) not in before
        for i, line in enumerate(lines)
    ):
        for i in sorted(syntax):
            own = shown_line(lines[i], previous_lines)
            if own is not None:
                lines[i] = own + "\n"
                syntax.discard(i)
    gone = {i for i in syntax | echoes.keys() if fold_line(lines[i].rstrip("\n")) not in before}
    kept = "".join(line for i, line in enumerate(lines) if i not in gone)
    return kept, tuple(lines[i].rstrip("\n") for i in sorted(gone))


# --- a reply's wrapping ------------------------------------------------------------------

_BOM = "\ufeff"
# The request's blocks that are never the document (``guards.ECHO_TAGS``).
_ECHO_BLOCK = re.compile(r"<\s*(" + "|".join(ECHO_TAGS) + r")\s*>", re.IGNORECASE)

_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$")
# A first line that introduces the document rather than belonging to it.
_LEADING_CHATTER = re.compile(
    r"^\s*(?:"
    r"(?:sure|okay|ok|certainly|of course|absolutely|great|done)\b[^\n]*"
    r"|here(?:'s| is| are)\b[^\n]*"
    r"|below is\b[^\n]*"
    r"|i(?:'ve| have)\s+(?:updated|rewritten|revised|merged|folded|incorporated)\b[^\n]*"
    r"|(?:the\s+)?(?:updated|revised|new|rewritten|full)\s+(?:memory|document|brief)\b[^\n]*"
    r")$",
    re.IGNORECASE,
)
# The first line of a closing paragraph that talks to the user rather than describing the project.
_TRAILING_CHATTER = re.compile(
    r"^\s*(?:"
    r"let me know\b|i hope\b|feel free\b|hope this helps\b"
    r"|if you(?:'d| would)? (?:like|want|need)\b"
    r"|i(?:'ve| have) (?:updated|added|removed|kept|made|merged|replaced|folded|incorporated)\b"
    r"|i (?:added|updated|removed|kept|merged|replaced|changed|folded|incorporated|included)\b"
    r"|(?:summary of )?changes(?: made)?\s*:"
    r"|(?:note|notes)\s*:\s*i\b"
    r"|this (?:updated|revised|new) (?:memory|document|version)\b"
    r")",
    re.IGNORECASE,
)
_MAX_CHATTER_CHARS = 300  # a leading chatter line longer than this is probably content
# An XML-like tag on a line of its own wrapping the whole reply (the prompt's own tag echoed).
_OPEN_TAG = re.compile(r"^\s*<(current-memory|memory|document)(?:\s[^<>]*)?>\s*$", re.IGNORECASE)


def clean_reply(text: str) -> str:
    """Strip what surrounds the document in a model's reply.

    Removes, in this order: a leading byte-order mark, one outer code fence (when the text
    outside it is only chatter or blank) and an outer ``<current-memory>``, ``<memory>`` or
    ``<document>`` tag pair on lines of their own, a leading chatter line such as "Here is the
    updated memory:" (at most two), and a closing paragraph that talks to the user ("Let me know
    if you want changes.", "Changes made: …"). Inner content is never touched; a fence that does
    not wrap the whole document is kept.

    Args:
        text: the reply as the model sent it.

    Returns:
        The document part of the reply, without leading or trailing blank lines (may be ``""``).
    """
    text = text.removeprefix(_BOM).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    lines = _strip_wrappers(lines)
    for _ in range(2):
        if lines and len(lines[0]) <= _MAX_CHATTER_CHARS and _LEADING_CHATTER.match(lines[0]):
            lines = _strip_wrappers(_trim_blank(lines[1:]))
    lines = _strip_trailing_chatter(lines)
    return "\n".join(_trim_blank(lines))


def _strip_wrappers(lines: list[str]) -> list[str]:
    """Strip an outer code fence and an outer ``<memory>``-style tag, in either nesting order."""
    for _ in range(2):
        lines = _trim_blank(_strip_outer_fence(_trim_blank(lines)))
        lines = _trim_blank(_strip_outer_tag(lines))
    return lines


def _strip_outer_tag(lines: list[str]) -> list[str]:
    """Drop a ``<current-memory>``/``<memory>``/``<document>`` line and its closing line when
    they are the first and last lines; otherwise the lines are returned as they are."""
    if len(lines) < 2:
        return lines
    opening = _OPEN_TAG.match(lines[0])
    if opening and lines[-1].strip().lower() == f"</{opening.group(1).lower()}>":
        return lines[1:-1]
    return lines


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _is_chatter(lines: list[str], *, leading: bool) -> bool:
    """Whether the lines outside a fence are only blank lines or remarks to the user."""
    content = [line for line in lines if line.strip()]
    if not content:
        return True
    if leading:
        if any(_HEADING.match(line) for line in content):
            return False  # "# Project:" above a fence is the document's title, not a remark
        return (
            len(content) <= 2
            and sum(len(line) for line in content) <= _MAX_CHATTER_CHARS
            and (
                _LEADING_CHATTER.match(content[0]) is not None or content[-1].rstrip().endswith(":")
            )
        )
    return _TRAILING_CHATTER.match(content[0]) is not None


def _strip_outer_fence(lines: list[str]) -> list[str]:
    fences = [i for i, line in enumerate(lines) if FENCE.match(line)]
    if len(fences) < 2:
        return lines
    first, last = fences[0], fences[-1]
    if _is_chatter(lines[:first], leading=True) and _is_chatter(lines[last + 1 :], leading=False):
        return lines[first + 1 : last]
    return lines


def _strip_trailing_chatter(lines: list[str]) -> list[str]:
    """Drop the last paragraph when it opens with a remark to the user; only the last one."""
    lines = _trim_blank(lines)
    if not lines:
        return lines
    start = len(lines) - 1
    while start > 0 and lines[start - 1].strip():
        start -= 1
    if start == 0:
        # A one-paragraph reply: drop only trailing lines that are remarks, never the paragraph.
        end = len(lines)
        while end > 1 and _TRAILING_CHATTER.match(lines[end - 1]):
            end -= 1
        return lines[:end]
    if _TRAILING_CHATTER.match(lines[start]):
        return _trim_blank(lines[:start])
    return lines


def find_echoed_block(text: str) -> str | None:
    """Why a reply repeats one of the request's blocks that are never the document
    (``<conversations>``, ``<lines-you-wrote>``, ``<removed-lines>``), or ``None``. Judged
    before the request's own lines are dropped from a reply: once its tags are gone, the
    echo of ``<lines-you-wrote>`` reads as a document that deletes every other line (a 0.5B
    model answered so seven refreshes in a row, and each waited for review)."""
    tag = _ECHO_BLOCK.search(text)
    if tag is None:
        return None
    block = tag.group(1).lower()
    return f"the reply repeats the request's <{block}> block instead of being the document"


def _has_words(reply: str) -> bool:
    """Whether a reply says anything outside code-fence lines (an empty fence says nothing)."""
    return any(
        char.isalnum()
        for line in reply.splitlines()
        if not line.lstrip().startswith(("```", "~~~"))
        for char in line
    )
