"""Judging a candidate memory document: a refresh's model reply and an agent's proposal go
through the same pipeline (pure; run on a worker thread; "The refresh" and "The rewrite form"
in docs/refresh.md):

1. redacted (:func:`yak.memory.redact.redact`; each finding is a flag);
2. turned into a document: a reply's ``<edits>`` applied to the document it was shown
   (``yak.memory.edits``), or a reply's wrapping cleaned off (:func:`guards.clean_reply`); a
   proposal is taken as it is;
3. normalized, its lines that are Yak's own request text or edit syntax dropped
   (:func:`yak.memory.per_line.without_request_lines`), and checked by the guards
   (:func:`guards.check_rewrite`);
4. a candidate that passed asks the review rules (:func:`review_reasons`) whether it must wait
   for the person.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from yak.domain import LineOrigin, RefreshStatus, ReviewMode, count_lines
from yak.memory import guards, provenance
from yak.memory.document import merge_flags
from yak.memory.edits import (
    EditError,
    apply_edits,
    continued_document,
    holds_edits,
    is_numbered,
    parse_edits,
)
from yak.memory.per_line import without_request_lines
from yak.memory.prompt import copies_retry_message
from yak.memory.redact import redact
from yak.memory.said import Passage
from yak.text import plural

if TYPE_CHECKING:
    from yak.ports import Completion

REWRITE_MAX_TOKENS = 8192  # about 25,000 characters of English: room for a full document

# The stop reasons a cut or declined reply carries (``Completion.stop_reason``).
_REFUSAL = "refusal"
_MAX_TOKENS = "max_tokens"


@dataclass(frozen=True)
class Judgement:
    """A candidate after redaction, cleaning (or its edits applied) and normalization, with the
    guards' verdict.

    Attributes:
        text: the document that would be stored.
        raw: the redacted candidate as given, for the record when nothing is left of it.
        verdict: the guards' verdict on ``text``.
        flags: one per redaction (``redacted_reply:<kind>`` for a reply, ``redacted:<kind>``
            for a proposal), and ``whole_reply`` when a reply asked for edits was a whole
            document.
        unchanged: the reply was an empty block of edits: nothing to change (``up_to_date``).
        dropped: the reply's lines that were Yak's own request (a rule, the edits example, a
            retry message) or edit syntax, dropped before the guards (never stored or proposed).
        edit_error: why the reply's edits do not apply (then ``text`` is ``""`` and the
            refresher asks for the whole document), else ``None``.
    """

    text: str
    raw: str
    verdict: guards.Verdict
    flags: tuple[str, ...]
    unchanged: bool = False
    dropped: tuple[str, ...] = ()
    edit_error: str | None = None


def judge_reply(
    previous: str,
    completion: Completion,
    floor_ratio: float,
    *,
    edits: bool = False,
    said: Sequence[Passage] = (),
) -> Judgement:
    """Judge a memory model's reply to a refresh.

    Args:
        previous: the document the request showed.
        completion: the model's reply.
        floor_ratio: the floor's share (0-1).
        edits: the request asked for edits; a reply holding an ``<edits>`` block is applied to
            ``previous``, any other reply is judged as a whole document.
        said: the folded conversations: a line of Yak's own request they back is kept.
    """
    raw, found = redact(completion.text)
    flags = tuple(flag.replace("redacted:", "redacted_reply:", 1) for flag in found)
    refused = completion.stop_reason == _REFUSAL  # judged as one, whatever its text holds
    judged = _judge(
        previous, raw, flags, floor_ratio, edits=edits, refused=refused, clean=True, said=said
    )
    if judged.unchanged or judged.edit_error is not None:
        return judged
    return replace(judged, verdict=_after_stop(judged.verdict, completion.stop_reason))


def judge_proposal(previous: str, text: str, floor_ratio: float) -> Judgement:
    """Judge a whole document another agent proposes (already normalized to LF): redacted
    (flags ``redacted:<kind>``), normalized, guarded; a refusal's reason speaks of "the
    proposal"."""
    raw, found = redact(text)
    judged = _judge(previous, raw, tuple(found), floor_ratio, clean=False)
    reason = judged.verdict.reason.replace("the reply", "the proposal", 1)
    return replace(judged, verdict=replace(judged.verdict, reason=reason))


def review_reasons(
    previous: str,
    judged: Judgement,
    origins: Sequence[LineOrigin],
    tombstones: Collection[str],
    mode: ReviewMode = ReviewMode.AUTO,
) -> tuple[str, ...]:
    """Why a candidate that passed the guards must wait for review (``()``: it may be applied):
    :func:`yak.memory.provenance.review_reasons` of ``previous`` (whose line ``origins``
    these are) and the judged text; ``tombstones`` are the workspace's folded keys."""
    return tuple(provenance.review_reasons(previous, judged.text, origins, tombstones, mode))


def _judge(
    previous: str,
    raw: str,
    flags: tuple[str, ...],
    floor_ratio: float,
    *,
    edits: bool = False,
    refused: bool = False,
    clean: bool,
    said: Sequence[Passage] = (),
) -> Judgement:
    """Steps 2 and 3 of the pipeline on a redacted candidate."""
    if edits and not refused and holds_edits(raw):
        try:
            parsed = parse_edits(raw)
            applied = apply_edits(previous, parsed)
        except EditError as exc:
            return _edits_failed(raw, flags, str(exc))
        if not parsed:
            kept = guards.Verdict(None, "", count_lines(previous), len(previous))
            return Judgement(text=previous, raw=raw, verdict=kept, flags=flags, unchanged=True)
        text = guards.normalize_document(applied)
    elif (
        edits
        and is_numbered(raw)
        and not continued_document(raw.splitlines(), previous.splitlines())
    ):
        why = "the reply is the numbered document sent back, with its line numbers"
        return _edits_failed(raw, flags, why)
    else:
        text = guards.normalize_document(guards.clean_reply(raw) if clean else raw)
        if edits and raw.strip() and not holds_edits(raw):
            flags = merge_flags(flags, ("whole_reply",))
    echo = guards.find_echoed_block(text) if clean else None
    copied = [line for line in text.splitlines() if copies_retry_message(line)] if clean else []
    if echo is None and copied:
        echo = (
            f"the reply repeats Yak's own request text (its retry message, "
            f'"{copied[0].strip()[:40]}…") instead of being the document'
        )
    if echo is not None:
        lines, chars = count_lines(text), len(text)
        echoed = guards.Verdict(RefreshStatus.REFUSED_NOT_DOCUMENT, echo, lines, chars)
        return Judgement(text=text, raw=raw, verdict=echoed, flags=flags)
    text, dropped = without_request_lines(previous, text, said) if clean else (text, ())
    if dropped:
        text = guards.normalize_document(text)
        flags = merge_flags(flags, ("request_text_dropped",))
    verdict = guards.check_rewrite(previous, text, floor_ratio=floor_ratio)
    if verdict.status is RefreshStatus.REFUSED_EMPTY and dropped:
        echo = (
            f"the reply was only Yak's own request text ({plural(len(dropped), 'line')} of its "
            f'rules, example edits or retry message, first "{dropped[0].strip()[:60]}")'
        )
        verdict = replace(verdict, status=RefreshStatus.REFUSED_NOT_DOCUMENT, reason=echo)
    elif verdict.status is RefreshStatus.REFUSED_EMPTY and _has_words(raw):
        verdict = _judge_remarks(previous, raw, floor_ratio)
    return Judgement(text=text, raw=raw, verdict=verdict, flags=flags, dropped=dropped)


def _edits_failed(raw: str, flags: tuple[str, ...], why: str) -> Judgement:
    failed = guards.Verdict(RefreshStatus.FAILED, f"the model's edits do not apply: {why}", 0, 0)
    return Judgement(text="", raw=raw, verdict=failed, flags=flags, edit_error=why)


def _after_stop(verdict: guards.Verdict, stop_reason: str | None) -> guards.Verdict:
    """The verdict on a reply given why the model stopped: a refusal is not a rewrite of the
    document, and a reply cut at the output limit is incomplete however it looks (never
    stored; over the ceiling, the condense retry may fit it)."""
    if stop_reason == _REFUSAL:
        declined = "the model declined to rewrite the document (stop reason: refusal)"
        return replace(verdict, status=RefreshStatus.REFUSED_EMPTY, reason=declined)
    if stop_reason != _MAX_TOKENS or verdict.status not in (
        None,
        RefreshStatus.REFUSED_FLOOR,
        RefreshStatus.REFUSED_CEILING,
        RefreshStatus.REFUSED_PLACEHOLDER,
    ):
        return verdict
    if verdict.status is RefreshStatus.REFUSED_CEILING:
        return replace(
            verdict,
            reason=f"{verdict.reason}, and the reply was cut off at the model's output limit "
            f"({REWRITE_MAX_TOKENS:,} tokens, stop reason max_tokens)",
        )
    cut = (
        f"the model's reply was cut off at its output limit (stop reason max_tokens) "
        f"after {verdict.lines} lines, so it is incomplete; nothing was stored"
    )
    return replace(verdict, status=RefreshStatus.FAILED, reason=cut)


def _has_words(reply: str) -> bool:
    """Whether a reply says anything outside code-fence lines (an empty fence says nothing)."""
    return any(
        char.isalnum()
        for line in reply.splitlines()
        if not line.lstrip().startswith(("```", "~~~"))
        for char in line
    )


def _judge_remarks(previous: str, raw: str, floor_ratio: float) -> guards.Verdict:
    """A reply that cleaning emptied held only remarks to the user ("I have updated the
    memory…"): talk about the document instead of the document. Judged as the document it
    pretends to be, it trips the floor; with no document yet to protect, it is empty. Either
    way the reason quotes it."""
    talk = guards.normalize_document(raw)
    first = talk.splitlines()[0] if talk else ""
    quoted = first if len(first) <= 60 else first[:57] + "..."
    as_document = guards.check_rewrite(previous, talk, floor_ratio=floor_ratio)
    if as_document.status is RefreshStatus.REFUSED_FLOOR:
        return replace(
            as_document,
            reason=f"the reply talks about the document instead of being it "
            f'("{quoted}"): {as_document.reason}',
        )
    remarks = f'the reply held no document, only remarks ("{quoted}")'
    return replace(as_document, status=RefreshStatus.REFUSED_EMPTY, reason=remarks)
