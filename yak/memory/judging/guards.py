"""Guards for an LLM rewrite of a memory document ("The memory document" in
docs/memory.md). Pure functions, no I/O.

A model's reply goes through three steps before it may replace the document:

1. the form's reader (``yak.memory.forms.text.clean_reply``) has stripped what surrounds
   the document: an outer code fence, an outer tag, chatter before and after it.
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
from yak.memory.document import over_ceiling_words
from yak.memory.lines import FENCE, LIST_MARKER
from yak.text import plural

# --- normalization ----------------------------------------------------------------------------

_BOM = "\ufeff"
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

# The request's own block tags (see ``yak.memory.prompts.rewrite``) and the injection block's tag: a
# reply holding one echoes the request instead of being the document.
# Of those, the blocks that are never the document (what was said, the lines the user wrote, the
# lines the user removed): a reply holding one of their tags repeats that block. The document's
# own tags (``current-memory``, ``workspace-memory``) may wrap a real document; those tag lines
# are dropped as request text (``yak.memory.forms.text.without_request_lines``).
ECHO_TAGS = ("conversations", "lines-you-wrote", "removed-lines")
REQUEST_TAGS = ("current-memory", *ECHO_TAGS, "workspace-memory")
_REQUEST_TAG = re.compile(r"</?\s*(?:" + "|".join(REQUEST_TAGS) + r")\s*>", re.IGNORECASE)
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
# What a guard's reason calls the text it judged: a memory model's reply to a refresh, or a
# whole document another agent proposes.
REPLY = "the reply"
PROPOSAL = "the proposal"
CODE_SHARE = 0.5  # a reply with more than this share of its non-blank lines in fences is code


def find_not_document(text: str, *, subject: str = REPLY) -> str | None:
    """Why a reply is not a memory document, or ``None`` when it may be one.

    A reply is not a document when it echoes the request (its block tags such as
    ``<conversations>``, or its own sentences), when it is a transcript of the conversation
    (two or more ``user:``/``assistant:`` lines, a ``--- conversation N ---`` label, or two or
    more ``[tool: …]`` lines), or when it is mostly code listings (more than ``CODE_SHARE`` of
    its non-blank lines inside code fences).

    Args:
        text: a cleaned, normalized reply.
        subject: what the phrase calls the text (``REPLY`` or ``PROPOSAL``).

    Returns:
        One phrase for the refusal's reason (``"the reply echoes the request (<conversations>)"``),
        or ``None``.
    """
    tag = _REQUEST_TAG.search(text)
    if tag:
        return f"{subject} echoes the request ({tag.group(0)}) instead of being the document"
    lowered = text.lower()
    found = [(lowered.find(p), p) for p in _REQUEST_PHRASES if p in lowered]
    if found:
        phrase = min(found)[1]
        return f'{subject} echoes the request ("{phrase}") instead of being the document'
    lines = [line for line in text.split("\n") if line.strip()]
    roles = sum(1 for line in lines if _ROLE_LINE.match(line))
    tools = sum(1 for line in lines if _TOOL_LINE.match(line))
    if roles >= 2 or tools >= 2 or any(_SESSION_LABEL.match(line) for line in lines):
        return f"{subject} is a transcript of the conversation, not the document"
    inside, fenced = False, 0
    for line in lines:
        if FENCE.match(line):
            inside = not inside
            fenced += 1
        elif inside:
            fenced += 1
    if fenced and fenced > CODE_SHARE * len(lines):
        return (
            f"{subject} is mostly code listings ({fenced} of {len(lines)} lines in code "
            "fences), not the document"
        )
    return None


# --- placeholders -----------------------------------------------------------------------------

_BULLET = re.compile(rf"^\s*(?:{LIST_MARKER}|>)\s+")
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


def check_rewrite(
    previous: str, new: str, *, floor_ratio: float = FLOOR_RATIO, subject: str = REPLY
) -> Verdict:
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
        subject: what the reason calls ``new``: ``REPLY`` (a memory model's) or ``PROPOSAL``
            (another agent's).

    Returns:
        A :class:`Verdict`; its ``reason`` states the numbers, e.g. "the reply kept 12 of 150
        lines (8%)".
    """
    lines, chars = count_lines(new), len(new)
    if not new.strip():
        return Verdict(RefreshStatus.REFUSED_EMPTY, f"{subject} was empty", lines, chars)
    not_document = find_not_document(new, subject=subject)
    if not_document is not None:
        return Verdict(RefreshStatus.REFUSED_NOT_DOCUMENT, not_document, lines, chars)
    placeholder = find_placeholder(new, known=previous)
    if placeholder is not None:
        number, text = placeholder
        shown = text if len(text) <= 60 else text[:57] + "..."
        return Verdict(
            RefreshStatus.REFUSED_PLACEHOLDER,
            f'{subject} has a placeholder instead of content on line {number}: "{shown}"',
            lines,
            chars,
        )
    if lines > MAX_LINES or chars > MAX_CHARS:
        ceiling = ceiling_reason(lines, chars, subject=subject)
        return Verdict(RefreshStatus.REFUSED_CEILING, ceiling, lines, chars)
    if previous.strip():
        reason = _floor_reason(previous, new, floor_ratio, subject)
        if reason:
            return Verdict(RefreshStatus.REFUSED_FLOOR, reason, lines, chars)
    return Verdict(None, "", lines, chars)


def over_ceiling(lines: int, chars: int) -> str:
    """What of a document is over the ceiling, in its units: ``240 lines``, ``26,100
    characters``, or both joined by "and" (its lines when neither is)."""
    over = [f"{lines} lines"] if lines > MAX_LINES else []
    over += [f"{chars:,} characters"] if chars > MAX_CHARS else []
    return " and ".join(over or [f"{lines} lines"])


def ceiling_reason(lines: int, chars: int, *, subject: str = REPLY) -> str:
    """The reason a document over the ceiling is refused, naming what is over and the limit
    (:func:`yak.memory.document.over_ceiling_words`); ``subject``: what it calls the document
    (``REPLY`` or ``PROPOSAL``)."""
    return f"{subject} has {over_ceiling_words(lines, chars) or f'{lines:,} lines'}"


def _floor_reason(previous: str, new: str, ratio: float, subject: str) -> str:
    prev_chars, new_chars = len(previous), len(new)
    if prev_chars >= FLOOR_MIN_CHARS and new_chars < FLOOR_MIN_CHARS:
        return (
            f"{subject} has {new_chars} characters where the document had {prev_chars:,} "
            f"(minimum {FLOOR_MIN_CHARS})"
        )
    prev_lines, new_lines = non_blank_lines(previous), non_blank_lines(new)
    if prev_lines and new_lines < ratio * prev_lines:
        return (
            f"{subject} kept {new_lines} of {prev_lines} lines "
            f"({_percent(new_lines, prev_lines)}; minimum {_percent(ratio, 1)})"
        )
    if prev_chars and new_chars < ratio * prev_chars:
        return (
            f"{subject} kept {new_chars:,} of {prev_chars:,} characters "
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
