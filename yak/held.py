"""Why a line of a rewrite waits for review, as data, and the one place it is worded ("What a
rewrite may add" and "What a rewrite may remove" in docs/memory.md). Plain values, no I/O.

The rules (``yak.memory.judging.grounding``, ``yak.memory.judging.per_line``,
``yak.memory.history.provenance``) give each reason a :class:`HeldKind` and its details;
:func:`held_line_words` words it. The core stores the sentence with a refresh attempt and a
proposal, so the wording sits here, below the core, rather than in ``yak.presenters`` (which the
core may not import); the presenters hand the same function to the window, the command line and the
MCP server.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

# A rewrite removing more than this share of the previous non-blank lines waits for review.
REMOVAL_SHARE = 0.25
_LINE_CHARS = 60  # of a held line, in its reason
_INSTRUCTION_CHARS = 80  # of an instruction an agent's proposal adds, in its reason
_QUOTED_LINES = 3  # the lines a reason about several quotes


class HeldKind(StrEnum):
    """Why a line (or a whole rewrite) waits for review; the value is what is stored.

    A line the rewrite adds: ``duplicate`` (detail: the number of the line it restates),
    ``not_said`` (detail: the token no one said), ``nothing_says``, ``only_asked``,
    ``not_typed``, ``tombstoned``, ``superseded_unclear`` (detail: what the conversations say
    is gone; ``lines``: the kept lines that name it, any of which it may replace),
    ``dangerous`` (detail: the :class:`Capability` it gives the agent; any rewrite or
    proposal, whoever typed the line); an agent's proposal: ``instruction``. A line the rewrite
    removes: ``without_cause`` (the line stays; its removal waits). Several lines (in
    ``lines``): ``touched`` (lines a person wrote, changed or removed), ``returning`` (lines
    a person deleted or rejected, brought back). The whole rewrite: ``review_mode``,
    ``removes_share`` (``lines``: the lines removed; detail: the previous non-blank lines).
    """

    DUPLICATE = "duplicate"
    NOT_SAID = "not_said"
    NOTHING_SAYS = "nothing_says"
    ONLY_ASKED = "only_asked"
    NOT_TYPED = "not_typed"
    TOMBSTONED = "tombstoned"
    SUPERSEDED_UNCLEAR = "superseded_unclear"
    INSTRUCTION = "instruction"
    DANGEROUS = "dangerous"
    WITHOUT_CAUSE = "without_cause"
    TOUCHED = "touched"
    RETURNING = "returning"
    REVIEW_MODE = "review_mode"
    REMOVES_SHARE = "removes_share"


class Capability(StrEnum):
    """The dangerous capability a line gives the agent (``yak.memory.judging.dangerous``: "Dangerous
    lines always wait" in docs/memory.md); the value is a ``dangerous`` held line's detail."""

    DOWNLOADED_SCRIPT = "downloaded_script"
    UNKNOWN_SOURCE = "unknown_source"
    ROOT = "root"
    NO_SANDBOX = "no_sandbox"
    CREDENTIALS = "credentials"


@dataclass(frozen=True)
class HeldLine:
    """One reason a rewrite waits for review, as data (worded by :func:`held_line_words`).

    Attributes:
        line: the line held, as written (``""`` for a reason about several lines or the whole
            rewrite).
        kind: why it waits.
        detail: what the kind needs besides the line (:class:`HeldKind`): the token not
            said, the number of the line restated, the previous document's non-blank lines.
        lines: the lines a reason about several names, in order.
    """

    line: str
    kind: HeldKind
    detail: str = ""
    lines: tuple[str, ...] = ()

    def names(self, line: str) -> bool:
        """Whether this reason is about ``line``, a line the rewrite adds (spacing at the ends
        aside): the line it holds, or one of the lines it brings back."""
        text = line.strip()
        if self.kind is HeldKind.RETURNING:
            return any(text == named.strip() for named in self.lines)
        return bool(self.line.strip()) and text == self.line.strip() and self.kind in _OF_A_LINE


# The reasons about one line the rewrite adds (or keeps): worded after a quote of the line.
_OF_A_LINE = frozenset(
    {
        HeldKind.DUPLICATE,
        HeldKind.NOT_SAID,
        HeldKind.NOTHING_SAYS,
        HeldKind.ONLY_ASKED,
        HeldKind.NOT_TYPED,
        HeldKind.TOMBSTONED,
        HeldKind.SUPERSEDED_UNCLEAR,
        HeldKind.INSTRUCTION,
        HeldKind.DANGEROUS,
        HeldKind.WITHOUT_CAUSE,
    }
)
# The reasons that doubt a line itself (said by no one, only asked about, an instruction no one
# typed, dangerous): the review dialog does not make Accept the default while one is taken.
DOUBTFUL = frozenset(
    {
        HeldKind.NOT_SAID,
        HeldKind.NOTHING_SAYS,
        HeldKind.ONLY_ASKED,
        HeldKind.NOT_TYPED,
        HeldKind.DANGEROUS,
    }
)
_CAPABILITY_WORDS = {
    Capability.DOWNLOADED_SCRIPT: "it has the agent run a script downloaded from the internet",
    Capability.UNKNOWN_SOURCE: (
        "it has the agent install from an index or URL the memory does not already name"
    ),
    Capability.ROOT: "it has the agent run commands as root",
    Capability.NO_SANDBOX: "it has the agent run commands without the sandbox",
    Capability.CREDENTIALS: "it has the agent print or send credentials",
}
DANGEROUS_WAITS = "such a line always waits for you, whoever typed it"
_AFTER_QUOTE = {
    HeldKind.NOTHING_SAYS: "nothing in the conversations says this",
    HeldKind.ONLY_ASKED: "only asked about, not decided",
    HeldKind.NOT_TYPED: "an instruction no one typed",
    HeldKind.TOMBSTONED: "you deleted or rejected this line before",
    HeldKind.WITHOUT_CAUSE: "removed, though nothing in the conversations says it is wrong",
}
_CAPABILITIES = {capability.value: capability for capability in Capability}
MODE_WORDS = "this workspace is in review mode: every rewrite waits for you"


def held_line_words(held: HeldLine, *, line_shown: bool = False) -> str:
    """The sentence for one reason a rewrite waits, as the review inbox, ``yak memory
    review``, the MCP server and a refresh's outcome show it: ``"- Deploy on Fridays.": you
    deleted or rejected this line before``, ``it removes 5 of 6 lines (more than 25%)``.

    Args:
        held: the reason.
        line_shown: the reader sees the line beside the reason (the review dialog's "Why
            these lines"): a reason about one line leaves out its quote of it
            (``'~/vaults/Dev' was not said in the conversations``).
    """
    kind = held.kind
    if kind is HeldKind.INSTRUCTION:
        return f'it adds an instruction for the agent: "{held.line.strip()[:_INSTRUCTION_CHARS]}"'
    if kind is HeldKind.TOUCHED:
        return f"it removes or changes {_count(held.lines)} you wrote: {quote_lines(held.lines)}"
    if kind is HeldKind.RETURNING:
        return (
            f"it brings back {_count(held.lines)} you deleted or rejected: "
            f"{quote_lines(held.lines)}"
        )
    if kind is HeldKind.REVIEW_MODE:
        return MODE_WORDS
    if kind is HeldKind.REMOVES_SHARE:
        share = int(REMOVAL_SHARE * 100)
        return f"it removes {len(held.lines)} of {held.detail} lines (more than {share}%)"
    if kind is HeldKind.DUPLICATE:
        why = f"line {held.detail} already says this"
    elif kind is HeldKind.DANGEROUS:
        why = f"{capability_words(held.detail)} ({DANGEROUS_WAITS})"
    elif kind is HeldKind.NOT_SAID:
        why = f"'{held.detail}' was not said in the conversations"
    elif kind is HeldKind.SUPERSEDED_UNCLEAR:
        why = (
            f"the conversations say {held.detail} is no longer used, but Yak cannot tell which "
            f"line this replaces ({quote_lines(held.lines)}), so none was removed"
        )
    else:
        why = _AFTER_QUOTE[kind]
    return why if line_shown else f'"{_short(held.line)}": {why}'


def capability_words(detail: str) -> str:
    """What a dangerous line gives the agent, from its held line's detail (a
    :class:`Capability` value): ``it has the agent run commands as root``."""
    capability = _CAPABILITIES.get(detail)
    return _CAPABILITY_WORDS[capability] if capability else "it is dangerous for the agent"


def quote_lines(lines: Sequence[str], limit: int = _QUOTED_LINES) -> str:
    """``"a", "b", "c" and 2 more``: the first ``limit`` lines, each cut at 60 characters."""
    shown = ", ".join(f'"{line.strip()[:_LINE_CHARS]}"' for line in lines[:limit])
    more = len(lines) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _count(lines: Sequence[str]) -> str:
    return "1 line" if len(lines) == 1 else f"{len(lines)} lines"


def _short(line: str) -> str:
    text = line.strip()
    return text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + "…"
