"""The memory's cost and the rewrite forms, in words ("Cost" in docs/memory.md, "The rewrite forms"
in docs/refresh.md)."""

from __future__ import annotations

from collections.abc import Sequence

from yak.domain import (
    RewriteForm,
    UpkeepFigures,
    forms_in,
)
from yak.presenters.outcomes import outcome_label
from yak.text import plural


# --- the memory's cost ("Cost" in docs/memory.md) ----------------------------------------------
def token_count(count: int) -> str:
    """A token count, short: ``300``, ``12.4k``, ``1.2M`` (a ``.0`` dropped)."""
    if count < 1000:
        return str(count)
    value, unit = (count / 1000, "k") if count < 999_950 else (count / 1_000_000, "M")
    return f"{value:.1f}".removesuffix(".0") + unit


def token_size(tokens: int) -> str:
    """A document's estimated size in tokens, as the memory panel shows it beside its lines:
    ``"≈3.2k tokens"`` (an estimate, hence the ``≈``)."""
    return f"≈{token_count(tokens)} {'token' if tokens == 1 else 'tokens'}"


def upkeep_line(figures: UpkeepFigures) -> str:
    """One window of a workspace's upkeep in one line: ``"3 refreshes, 3 model calls ·
    26.8k tokens in (44% from cache), 140 out · 2 applied, 1 up to date"``; ``"no
    refreshes"`` when there were none."""
    if not figures.refreshes:
        return "no refreshes"
    usage = figures.usage
    text = (
        f"{plural(figures.refreshes, 'refresh', 'refreshes')}, "
        f"{plural(figures.calls, 'model call')}"
    )
    if figures.calls:
        text += f" · {token_count(usage.total_input_tokens)} tokens in"
        if usage.total_input_tokens:
            text += (
                f" ({100 * usage.cache_read_input_tokens // usage.total_input_tokens}% from cache)"
            )
        text += f", {token_count(usage.output_tokens)} out"
    outcomes = ", ".join(f"{count} {outcome_label(status)}" for status, count in figures.outcomes)
    return f"{text} · {outcomes}"


# --- the rewrite forms ("The rewrite forms" in docs/refresh.md) --------------------------------
# What the refresher's flags say happened to a tool call that was asked for, short for a cell.
_TOOL_NOTES = (("tool_rejected", "tool rejected"), ("tool_text_reply", "tool answered in text"))


def forms_words(flags: Sequence[str]) -> str:
    """The rewrite forms an attempt's replies were read in, from its flags, for a table cell:
    ``tool``, ``tool → edits`` (a tool call that could not be read, then the edits form),
    ``edits (tool rejected)``, ``edits (tool answered in text)``, ``edits → whole`` (edits
    that did not apply, then the whole document); ``-`` when no model call was made."""
    words = " → ".join(str(form) for form in forms_in(flags)) or "-"
    notes = [note for flag, note in _TOOL_NOTES if flag in flags]
    return f"{words} ({', '.join(notes)})" if notes else words


def form_counts(figures: UpkeepFigures) -> str:
    """A window's attempts per rewrite form, for ``yak memory stats``: ``"reply forms: tool 3,
    edits 1"`` (an attempt that fell back from the tool to edits counts in both); ``""`` when
    no reply was read."""
    if not figures.forms:
        return ""
    return "reply forms: " + ", ".join(f"{form} {count}" for form, count in figures.forms)


def found_form_words(form: RewriteForm | None) -> str:
    """What the automatic memory reply form found for an endpoint and model (Settings ›
    Provider): the form remembered for it, or ``None`` when no refresh has asked it yet."""
    if form is None:
        return "Not found out yet: the first refresh tries the tool."
    if form is RewriteForm.TOOL:
        return "This endpoint answered with the tool."
    if form is RewriteForm.EDITS:
        return "This endpoint answers in text: edits are used."
    return "This endpoint answers in text: the whole document is asked for."
