"""Guards for an LLM rewrite of a memory document ("The memory document" in
docs/memory.md). Pure functions, no I/O.

A model's reply goes through three steps before it may replace the document:

1. :func:`clean_reply` strips what surrounds the document: one outer code fence, an outer
   ``<memory>``-style tag, a leading "Here is the updated memory:" line, a trailing "Let me
   know if…" or "I added…" paragraph.
2. :func:`normalize_document` makes it the way Yak stores text: LF line endings, no trailing
   whitespace, no control characters, no blank lines at either end, one final newline. It
   never edits a content line's characters, keeps the blank lines between lines and never cuts
   anything.
3. :func:`check_rewrite` compares it with the previous document and refuses an empty reply, a
   reply that is not a document (an echo of the request, a transcript, code listings),
   placeholder lines ("rest unchanged", a lone ``...``, ``[Rest of the existing content remains
   unchanged]``), a reply over the ceiling (``MAX_LINES``
   lines, ``MAX_CHARS`` characters) or one that collapses the document (the floor). Each refusal
   carries one sentence with the numbers.

A reply that talks about the document instead of being the document ("I added the ruff
decision.") is short, so it trips the floor on any real document; no separate check is needed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from yak.domain import (
    FLOOR_MIN_CHARS,
    FLOOR_RATIO,
    MAX_CHARS,
    MAX_LINES,
    RefreshStatus,
    count_lines,
)
from yak.text import plural

# --- cleaning ---------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```+|~~~+)[\w+.-]*\s*$")
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
_BOM = "\ufeff"


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
    fences = [i for i, line in enumerate(lines) if _FENCE.match(line)]
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


# --- normalization ----------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize_document(text: str) -> str:
    """Make a rewrite plain text the way Yak stores documents; never edits a content line.

    Only what is not content changes: LF line endings; trailing whitespace removed on every
    line; control characters other than tab and newline removed; a leading byte-order mark
    (U+FEFF) removed; blank lines before the first line and after the last removed; one final
    newline when not empty. Blank lines between lines are kept as they are, runs included: they
    are the person's layout (a hand save keeps them), and a refresh that adds one line must not
    fold them (docs/memory.md, "The reply is content"). A line's characters are otherwise kept
    as the model wrote them: ``**Never** force-push``, ``# of workers: 4`` and ``+ 1 retry on 502``
    stay byte for byte (Markdown markers are the model's to avoid, not Yak's to rewrite).

    Args:
        text: a cleaned reply.

    Returns:
        The normalized document (``""`` for a blank reply).
    """
    text = text.removeprefix(_BOM).replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    joined = "\n".join(line.rstrip() for line in text.split("\n"))
    joined = joined.strip("\n")
    return joined + "\n" if joined else ""


# --- not a document ---------------------------------------------------------------------------

# The request's own block tags (see ``yak.memory.prompt``) and the injection block's tag: a
# reply holding one echoes the request instead of being the document.
# Of those, the blocks that are never the document (what was said, the lines the user wrote, the
# lines the user removed): a reply holding one of their tags repeats that block. The document's
# own tags (``current-memory``, ``workspace-memory``) may wrap a real document; those tag lines
# are dropped as request text (``yak.memory.forms.text.without_request_lines``).
ECHO_TAGS = ("conversations", "lines-you-wrote", "removed-lines")
REQUEST_TAGS = ("current-memory", *ECHO_TAGS, "workspace-memory")
_REQUEST_TAG = re.compile(r"</?\s*(?:" + "|".join(REQUEST_TAGS) + r")\s*>", re.IGNORECASE)
_ECHO_BLOCK = re.compile(r"<\s*(" + "|".join(ECHO_TAGS) + r")\s*>", re.IGNORECASE)
# Sentences only the request says (matched case-insensitively, as plain text: one pass of
# ``in`` over the lowered reply is a fraction of what an alternation regex costs on 40 KB).
_REQUEST_PHRASES = (
    "here is the current memory document",
    "here are the conversations since it was last updated",
    "write the complete updated memory document now",
    "you maintain the memory document of",
    "write the edits to the memory document now",
    "(empty: this project has no memory yet)",
    "the user wrote these lines of the document themselves",
    "the user removed these lines from the document on purpose",
)
# A transcript's lines: "user: …", "assistant: …", "--- conversation 2: "Title" ---",
# "[tool: read_file a.py]".
_ROLE_LINE = re.compile(r"^\s*(?:user|assistant|human)\s*:\s", re.IGNORECASE)
_SESSION_LABEL = re.compile(r"^\s*---\s*conversation\s+\d+\b.*---\s*$", re.IGNORECASE)
_TOOL_LINE = re.compile(r"^\s*\[tool:\s")
CODE_SHARE = 0.5  # a reply with more than this share of its non-blank lines in fences is code


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


def find_not_document(text: str) -> str | None:
    """Why a reply is not a memory document, or ``None`` when it may be one.

    A reply is not a document when it echoes the request (its block tags such as
    ``<conversations>``, or its own sentences), when it is a transcript of the conversation
    (two or more ``user:``/``assistant:`` lines, a ``--- conversation N ---`` label, or two or
    more ``[tool: …]`` lines), or when it is mostly code listings (more than ``CODE_SHARE`` of
    its non-blank lines inside code fences).

    Args:
        text: a cleaned, normalized reply.

    Returns:
        One phrase for the refusal's reason (``"the reply echoes the request (<conversations>)"``),
        or ``None``.
    """
    tag = _REQUEST_TAG.search(text)
    if tag:
        return f"the reply echoes the request ({tag.group(0)}) instead of being the document"
    lowered = text.lower()
    found = [(lowered.find(p), p) for p in _REQUEST_PHRASES if p in lowered]
    if found:
        phrase = min(found)[1]
        return f'the reply echoes the request ("{phrase}") instead of being the document'
    lines = [line for line in text.split("\n") if line.strip()]
    roles = sum(1 for line in lines if _ROLE_LINE.match(line))
    tools = sum(1 for line in lines if _TOOL_LINE.match(line))
    if roles >= 2 or tools >= 2 or any(_SESSION_LABEL.match(line) for line in lines):
        return "the reply is a transcript of the conversation, not the document"
    inside, fenced = False, 0
    for line in lines:
        if _FENCE.match(line):
            inside = not inside
            fenced += 1
        elif inside:
            fenced += 1
    if fenced and fenced > CODE_SHARE * len(lines):
        return (
            f"the reply is mostly code listings ({fenced} of {len(lines)} lines in code "
            "fences), not the document"
        )
    return None


# --- placeholders -----------------------------------------------------------------------------

_BULLET = re.compile(r"^\s*(?:[-*+•>]|\d+[.)])\s+")
_WRAPPERS = "[](){}<>\"'`*_#/ \t"
_TRIM = _WRAPPERS + ".:;,!-\u2013\u2014"  # and en/em dashes
_ELLIPSIS_ONLY = re.compile(r"^[\s.…·]*(?:\.{2,}|…)[\s.…·]*$")
_DOC_NOUNS = (
    r"(?:document|memory|file|content|contents|notes|sections?|text|lines|items|"
    r"entries|points|details|brief|parts?)"
)
_STATE = (
    r"(?:unchanged|the same|as before|as is|omitted|not shown|preserved|retained|"
    r"same as before|kept|elided|truncated)"
)
_ADJECTIVES = r"(?:existing|previous|original|current|other|remaining|old|earlier|prior)"
_PLACEHOLDER_CORE = re.compile(
    r"^(?:"
    # "(unchanged)", "omitted", "same as before", "no changes"
    rf"{_STATE}|no changes?|same as above|etc|and so on|snip"
    # "rest unchanged", "the rest of the document remains unchanged", "other sections as before"
    rf"|(?:the )?(?:rest|remainder|remaining|other|all other|previous|existing|earlier|original|"
    rf"prior)(?: of)?(?: the)?(?: {_ADJECTIVES})?(?: {_DOC_NOUNS})?(?: (?:is|are))?"
    rf"(?: (?:remains?|stays?|left|kept))? {_STATE}"
    # "previous content", "[existing notes]"
    rf"|(?:the )?(?:previous|existing|original|prior|earlier|old|current|remaining) {_DOC_NOUNS}"
    rf"|{_DOC_NOUNS} (?:omitted|unchanged|elided|truncated)(?: for brevity)?"
    r")$",
    re.IGNORECASE,
)
_PLACEHOLDER_ANYWHERE = re.compile(
    r"same as (?:before|above|previously|the previous(?: version)?)"
    r"|unchanged from (?:the )?(?:previous|prior|earlier|original|current) "
    r"(?:version|document|memory)"
    r"|\[previous content\]",
    re.IGNORECASE,
)
_ELLIPSIS_WORDS = re.compile(
    r"\b(?:omitted|unchanged|rest|same|previous|existing|remaining|continued|continues|etc|"
    r"cut|dropped|truncated|elided|snip)\b",
    re.IGNORECASE,
)


# A line wholly in brackets that says content is elsewhere: an editor's note, never a fact.
_BRACKETED = re.compile(r"^[\[(<{].*[\])>}][.:;!]?$", re.DOTALL)
_BRACKETED_WORDS = re.compile(
    r"\b(?:unchanged|omitted|elided|truncated|not shown|as before|same as|remains?|rest of|"
    r"remaining|continue[sd]?|previous (?:content|sections?|notes|lines|items|entries))\b",
    re.IGNORECASE,
)


def find_placeholder(text: str, *, known: str = "") -> tuple[int, str] | None:
    """Find the first line that stands for content instead of containing it.

    Placeholders are lines such as ``rest unchanged``, ``… omitted …``, ``(unchanged)``, a lone
    ``...`` or ``…``, ``[previous content]``, ``same as before``. A line that merely uses such a
    word inside a real sentence ("the public API stays unchanged after the refactor") is not one.

    A line that is also in ``known`` (the document the rewrite replaces) is not looked at: it
    was accepted before, perhaps typed by hand (a lone ``...`` between two lists), and keeping it
    is not standing in for anything. It also makes the check proportional to what changed.

    Args:
        text: a cleaned, normalized document.
        known: the document ``text`` replaces ("" when none).

    Returns:
        ``(line_number, line)`` with a 1-based line number, or ``None``.
    """
    kept = set(known.split("\n")) if known else set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line in kept:
            continue
        if _is_placeholder(line):
            return number, line.strip()
    return None


def _is_placeholder(line: str) -> bool:
    body = _BULLET.sub("", line).strip()
    if not body:
        return False
    if _ELLIPSIS_ONLY.match(body):
        return True
    if _PLACEHOLDER_ANYWHERE.search(body):
        return True
    if _BRACKETED.match(body) and _BRACKETED_WORDS.search(body):
        return True  # "[Rest of the existing content remains unchanged]", "(sections omitted)"
    has_ellipsis = "..." in body or "…" in body
    core = body.replace("…", " ").replace("...", " ").strip(_TRIM)
    core = re.sub(r"\s+", " ", core).strip(_TRIM)
    if len(core) <= 80 and _PLACEHOLDER_CORE.match(core):
        return True
    return has_ellipsis and len(core) <= 80 and _ELLIPSIS_WORDS.search(core) is not None


# --- the verdict ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Whether a rewrite may replace the document.

    Attributes:
        status: ``None`` when the rewrite may be applied, else the refusal
            (``REFUSED_EMPTY``, ``REFUSED_NOT_DOCUMENT``, ``REFUSED_PLACEHOLDER``,
            ``REFUSED_CEILING``, ``REFUSED_FLOOR``).
        reason: one sentence with the numbers, for the user ("" when ok).
        lines: the rewrite's line count.
        chars: the rewrite's character count.
    """

    status: RefreshStatus | None
    reason: str
    lines: int
    chars: int

    @property
    def ok(self) -> bool:
        """True when no guard refused the rewrite."""
        return self.status is None


def non_blank_lines(text: str) -> int:
    """Lines with something other than whitespace on them."""
    return sum(1 for line in text.split("\n") if line.strip())


def check_rewrite(previous: str, new: str, *, floor_ratio: float = FLOOR_RATIO) -> Verdict:
    """Decide whether ``new`` may replace ``previous`` as the memory document.

    Checks, in this order: empty; not a document (:func:`find_not_document`); placeholder
    lines that ``previous`` did not have (:func:`find_placeholder`); the ceiling (over
    ``MAX_LINES`` lines or ``MAX_CHARS`` characters); the floor (``previous`` has at least
    ``FLOOR_MIN_CHARS`` characters and ``new`` fewer, or ``new`` keeps under ``floor_ratio`` of
    ``previous``'s non-blank lines or characters). There is no floor when ``previous`` is
    empty. Nothing is truncated here or anywhere.

    Args:
        previous: the stored document the rewrite was based on.
        new: the cleaned, normalized rewrite.
        floor_ratio: the share (0-1) of non-blank lines and characters a rewrite must keep.

    Returns:
        A :class:`Verdict`; its ``reason`` states the numbers, e.g. "the reply kept 12 of 150
        lines (8%)".
    """
    lines, chars = count_lines(new), len(new)
    if not new.strip():
        return Verdict(RefreshStatus.REFUSED_EMPTY, "the reply was empty", lines, chars)
    not_document = find_not_document(new)
    if not_document is not None:
        return Verdict(RefreshStatus.REFUSED_NOT_DOCUMENT, not_document, lines, chars)
    placeholder = find_placeholder(new, known=previous)
    if placeholder is not None:
        number, text = placeholder
        shown = text if len(text) <= 60 else text[:57] + "..."
        return Verdict(
            RefreshStatus.REFUSED_PLACEHOLDER,
            f'the reply has a placeholder instead of content on line {number}: "{shown}"',
            lines,
            chars,
        )
    if lines > MAX_LINES or chars > MAX_CHARS:
        return Verdict(RefreshStatus.REFUSED_CEILING, ceiling_reason(lines, chars), lines, chars)
    if previous.strip():
        reason = _floor_reason(previous, new, floor_ratio)
        if reason:
            return Verdict(RefreshStatus.REFUSED_FLOOR, reason, lines, chars)
    return Verdict(None, "", lines, chars)


def ceiling_reason(lines: int, chars: int) -> str:
    """The sentence for a document over the ceiling, naming what is over and the limit."""
    over = []
    if lines > MAX_LINES:
        over.append(f"{lines} lines (limit {MAX_LINES})")
    if chars > MAX_CHARS:
        over.append(f"{chars:,} characters (limit {MAX_CHARS:,})")
    return "the reply has " + " and ".join(over or [f"{lines} lines"])


def _floor_reason(previous: str, new: str, ratio: float) -> str:
    prev_chars, new_chars = len(previous), len(new)
    if prev_chars >= FLOOR_MIN_CHARS and new_chars < FLOOR_MIN_CHARS:
        return (
            f"the reply has {new_chars} characters where the document had {prev_chars:,} "
            f"(minimum {FLOOR_MIN_CHARS})"
        )
    prev_lines, new_lines = non_blank_lines(previous), non_blank_lines(new)
    if prev_lines and new_lines < ratio * prev_lines:
        return (
            f"the reply kept {new_lines} of {prev_lines} lines "
            f"({_percent(new_lines, prev_lines)}; minimum {_percent(ratio, 1)})"
        )
    if prev_chars and new_chars < ratio * prev_chars:
        return (
            f"the reply kept {new_chars:,} of {prev_chars:,} characters "
            f"({_percent(new_chars, prev_chars)}; minimum {_percent(ratio, 1)})"
        )
    return ""


def _percent(part: float, whole: float) -> str:
    return f"{int(100 * part / whole)}%"


def shrink_question(previous: str, new: str) -> str | None:
    """The question to ask before a hand save of ``new`` over ``previous`` when it makes the
    document much shorter, or empties it.

    A human may shrink the memory on purpose, so this never refuses; it only says how much goes.
    "Shorter" is measured in characters, the floor rule's character half ("The memory document"
    in docs/memory.md): under ``FLOOR_MIN_CHARS`` characters where the document had at least
    that many, or under ``FLOOR_RATIO`` of its characters. The floor's line count guards a
    model's rewrite, not a person's: pasting one long line over many short ones, or joining
    lines, loses no text and asks nothing. Rewording a very short document (under
    ``FLOOR_MIN_CHARS`` characters) is a normal edit and asks nothing; emptying any document
    asks.

    Args:
        previous: the stored document the edits are based on.
        new: the text about to be saved.

    Returns:
        E.g. ``"This replaces 36 lines (1,404 characters) with 1 line (61 characters; it keeps
        under half of the document). Save anyway?"``, or ``None`` when the save needs no
        question.
    """
    if not previous.strip():
        return None
    before = plural(count_lines(previous), "line")
    if not new.strip():
        return f"This replaces {before} with nothing (it empties the document). Save anyway?"
    had, has = len(previous), len(new)
    if had < FLOOR_MIN_CHARS or (has >= FLOOR_MIN_CHARS and has >= FLOOR_RATIO * had):
        return None
    how = (
        "it keeps under half of the document"
        if FLOOR_RATIO == 0.5
        else f"it keeps under {FLOOR_RATIO:.0%} of the document"
    )
    return (
        f"This replaces {before} ({plural(had, 'character')}) with "
        f"{plural(count_lines(new), 'line')} ({plural(has, 'character')}; {how}). Save anyway?"
    )
