"""Judging a candidate memory document: a refresh's model reply and an agent's proposal go
through the same pipeline (pure; run on a worker thread; "The refresh" and "The rewrite forms"
in docs/refresh.md):

1. redacted (:func:`yak.memory.redaction.scan.redact`; each finding is a flag);
2. read by the form the request asked for (``yak.memory.forms``): a tool call's input merged, a
   block of edits applied, a whole document cleaned of its wrapping; a reply that cannot be
   read is a :class:`~yak.memory.forms.FormError` (the form's retry says why). A proposal is
   taken as it is;
3. normalized and checked by the guards (:func:`guards.check_rewrite`): not a document, empty,
   placeholders, the ceiling, the floor. Nothing here looks at a reply's shape;
4. a candidate that passed asks the review rules (:func:`review_held`) whether it must wait
   for the person.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from yak.domain import LineOrigin, RefreshStatus, ReviewMode, RewriteForm, count_lines
from yak.held import HeldLine
from yak.memory.document import merge_flags
from yak.memory.forms import Candidate, FormError, Quote
from yak.memory.forms.edits import holds_edits
from yak.memory.forms.profiles import PLAIN, Profile
from yak.memory.forms.text import read_text
from yak.memory.forms.tool import read_tool, tool_call
from yak.memory.judging import guards, review_rules
from yak.memory.judging.said import Passage
from yak.memory.redaction import redact

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
            for a proposal), and what the form's reader saw (``whole_reply`` when a reply
            asked for edits was a whole document, ``tool_text_reply`` when a forced tool call
            was answered in text).
        unchanged: the reply said nothing changes (``up_to_date``).
        dropped: the reply's lines that were Yak's own request (a rule, the edits example, a
            retry message) or edit syntax, dropped before the guards (never stored or proposed).
        form_error: why the reply cannot be read in its form (then ``text`` is ``""`` and the
            refresher retries), else ``None``.
        read_as: the form whose reader read the reply (a text answer to the tool form is read
            as edits).
        quotes: a tool-form reply's claimed support per fact line (checked later).
        call: the tool call read, for the tool form's retry.
    """

    text: str
    raw: str
    verdict: guards.Verdict
    flags: tuple[str, ...]
    unchanged: bool = False
    dropped: tuple[str, ...] = ()
    form_error: str | None = None
    read_as: RewriteForm = RewriteForm.WHOLE
    quotes: tuple[Quote, ...] = ()
    call: Mapping[str, Any] | None = None


def judge_reply(
    previous: str,
    completion: Completion,
    floor_ratio: float,
    *,
    form: RewriteForm = RewriteForm.WHOLE,
    said: Sequence[Passage] = (),
    sessions: Sequence[str] = (),
    titles: Sequence[str] = (),
    profile: Profile = PLAIN,
    condensing: str | None = None,
) -> Judgement:
    """Judge a memory model's reply to a refresh.

    Args:
        previous: the document the request showed.
        completion: the model's reply.
        floor_ratio: the floor's share (0-1).
        form: the form the request asked for; its reader reads the reply. A text answer to the
            tool form is read by the edits reader (no second request).
        said: the folded conversations: a line of Yak's own request they back is kept.
        sessions: the request's conversations in order (what a tool call's conversation
            numbers name).
        titles: those conversations' titles as the request showed them
            (``Transcript.titles``): a tool call's fact that is one of them is request text.
        profile: the memory model's habits the readers read back.
        condensing: for the condense retry, the reply over the ceiling it asked to shorten:
            an answer holding a block of edits is read as edits to it (not as a whole
            document of its few lines), then judged against ``previous`` like any reply.
    """
    call = tool_call(completion.content) if form is RewriteForm.TOOL else None
    if call is not None and completion.stop_reason == _MAX_TOKENS:
        # Cut at the output limit, the call is incomplete however it reads; asking again gets
        # the same run (the 1.5B model listed facts until the limit): nothing is stored.
        cut = guards.Verdict(
            RefreshStatus.FAILED,
            "the model's update_memory call was cut off at its output limit (stop reason "
            "max_tokens), so it is incomplete; nothing was stored",
            0,
            0,
        )
        raw = json.dumps(call.get("input"), ensure_ascii=False, sort_keys=True)
        return Judgement(
            text="", raw=redact(raw)[0], verdict=cut, flags=(), read_as=RewriteForm.TOOL
        )
    if call is not None:
        given, found = _redacted(call.get("input"))
        call = {**call, "input": given}
        flags = _reply_flags(found)
        read = read_tool(
            call, previous, said=said, sessions=sessions, titles=titles, profile=profile
        )
        return _judged(previous, read, flags, floor_ratio, form, call=call)
    raw, found = redact(completion.text)
    flags = _reply_flags(found)
    read_as = RewriteForm.EDITS if form is RewriteForm.TOOL else form
    if form is RewriteForm.TOOL:
        flags = merge_flags(flags, ("tool_text_reply",))
    declined = completion.stop_reason == _REFUSAL  # judged as one, whatever its text holds
    if condensing is not None and not declined and holds_edits(raw):
        read_as = RewriteForm.EDITS
        candidate = read_text(read_as, raw, condensing, said=said, profile=profile)
        if isinstance(candidate, Candidate) and candidate.unchanged:
            candidate = replace(candidate, text=condensing, unchanged=False)  # still as long
    else:
        candidate = read_text(read_as, raw, previous, said=said, declined=declined, profile=profile)
    judged = _judged(previous, candidate, flags, floor_ratio, read_as)
    if judged.unchanged or judged.form_error is not None:
        return judged
    return replace(judged, verdict=_after_stop(judged.verdict, completion.stop_reason))


def judge_proposal(previous: str, text: str, floor_ratio: float) -> Judgement:
    """Judge a whole document another agent proposes (already normalized to LF): redacted
    (flags ``redacted:<kind>``), normalized, guarded; a refusal's reason speaks of "the
    proposal" (``guards.PROPOSAL``)."""
    raw, found = redact(text)
    candidate = Candidate(text=guards.normalize_document(raw), record=raw)
    return _judged(
        previous, candidate, tuple(found), floor_ratio, RewriteForm.WHOLE, subject=guards.PROPOSAL
    )


def review_held(
    previous: str,
    judged: Judgement,
    origins: Sequence[LineOrigin],
    tombstones: Collection[str],
    mode: ReviewMode = ReviewMode.AUTO,
) -> tuple[HeldLine, ...]:
    """Why a candidate that passed the guards must wait for review (``()``: it may be applied):
    :func:`yak.memory.judging.review_rules.review_held` of ``previous`` (whose line ``origins``
    these are) and the judged text; ``tombstones`` are the workspace's folded keys."""
    return tuple(review_rules.review_held(previous, judged.text, origins, tombstones, mode))


def _judged(
    previous: str,
    read: Candidate | FormError,
    flags: tuple[str, ...],
    floor_ratio: float,
    read_as: RewriteForm,
    *,
    call: Mapping[str, Any] | None = None,
    subject: str = guards.REPLY,
) -> Judgement:
    """Steps 3 and 4 of the pipeline on what the form's reader made of a redacted reply (or
    a proposal: ``subject``, what the guards' reasons call it)."""
    if isinstance(read, FormError):
        failed = guards.Verdict(
            RefreshStatus.FAILED, f"the model's reply cannot be read: {read.reason}", 0, 0
        )
        return Judgement(
            text="",
            raw=read.record,
            verdict=failed,
            flags=flags,
            form_error=read.reason,
            read_as=read_as,
            call=call,
        )
    flags = merge_flags(flags, read.flags)
    common: dict[str, Any] = {
        "raw": read.record,
        "read_as": read_as,
        "quotes": read.quotes,
        "call": call,
        "dropped": read.dropped,
    }
    if read.unchanged:
        kept = guards.Verdict(None, "", count_lines(previous), len(previous))
        return Judgement(text=previous, verdict=kept, flags=flags, unchanged=True, **common)
    text = guards.normalize_document(read.text)
    if read.not_document is not None:
        lines, chars = count_lines(text), len(text)
        refused = guards.Verdict(
            RefreshStatus.REFUSED_NOT_DOCUMENT, read.not_document, lines, chars
        )
        return Judgement(text=text, verdict=refused, flags=flags, **common)
    verdict = guards.check_rewrite(previous, text, floor_ratio=floor_ratio, subject=subject)
    if verdict.status is RefreshStatus.REFUSED_EMPTY and read.talk:
        verdict = _judge_remarks(previous, read.talk, floor_ratio)
    return Judgement(text=text, verdict=verdict, flags=flags, **common)


def _reply_flags(found: Sequence[str]) -> tuple[str, ...]:
    """A reply's redaction findings as flags (``redacted_reply:<kind>``)."""
    return tuple(flag.replace("redacted:", "redacted_reply:", 1) for flag in found)


def _redacted(value: Any) -> tuple[Any, tuple[str, ...]]:
    """A tool call's input with every string in it redacted, and the findings."""
    if isinstance(value, str):
        text, found = redact(value)
        return text, tuple(found)
    if isinstance(value, list):
        items = [_redacted(item) for item in value]
        return [item for item, _ in items], merge_flags((), *(found for _, found in items))
    if isinstance(value, dict):
        pairs = {key: _redacted(item) for key, item in value.items()}
        found = merge_flags((), *(found for _, found in pairs.values()))
        return {key: item for key, (item, _) in pairs.items()}, found
    return value, ()


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
