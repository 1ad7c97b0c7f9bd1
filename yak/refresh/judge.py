"""Judging a memory model's reply: redacted, turned into a document (its edits applied, or the
whole document cleaned), normalized, then checked by the guards (pure, run on a worker thread;
"The refresh" and "The rewrite form" in docs/architecture.md)."""

from __future__ import annotations

from dataclasses import dataclass

from yak.domain import RefreshStatus, count_lines
from yak.memory import guards
from yak.memory.edits import EditError, apply_edits, holds_edits, is_numbered, parse_edits
from yak.memory.redact import redact
from yak.ports import Completion

REWRITE_MAX_TOKENS = 8192  # about 25,000 characters of English: room for a full document


@dataclass(frozen=True)
class Reply:
    """A model reply after redaction, cleaning (or its edits applied) and normalization, with its
    verdict.

    Attributes:
        text: the document that would be stored.
        raw: the redacted reply as sent, for the record when nothing is left after cleaning.
        verdict: the guards' verdict on ``text``.
        flags: ``redacted_reply:<kind>`` per redaction.
        unchanged: the reply was an empty block of edits: nothing to change (``up_to_date``).
        edit_error: why the reply's edits do not apply (then ``text`` is ``""`` and the
            refresher asks for the whole document), else ``None``.
    """

    text: str
    raw: str
    verdict: guards.Verdict
    flags: tuple[str, ...]
    unchanged: bool = False
    edit_error: str | None = None


def judge_reply(
    previous: str, completion: Completion, floor_ratio: float, *, edits: bool = False
) -> Reply:
    """Redact, clean or apply, normalize and check one reply (worker thread).

    Args:
        previous: the document the request showed.
        completion: the model's reply.
        floor_ratio: the floor's share (0-1).
        edits: the request asked for edits; a reply holding an ``<edits>`` block is applied to
            ``previous`` (``yak.memory.edits``), any other reply is judged as a whole document.
    """
    raw, found = redact(completion.text)
    flags = tuple(flag.replace("redacted:", "redacted_reply:", 1) for flag in found)
    # A refusal is judged as one, whatever its text holds.
    if edits and completion.stop_reason != "refusal" and holds_edits(raw):
        try:
            parsed = parse_edits(raw)
            applied = apply_edits(previous, parsed)
        except EditError as exc:
            failed = guards.Verdict(
                RefreshStatus.FAILED, f"the model's edits do not apply: {exc}", 0, 0
            )
            return Reply(text="", raw=raw, verdict=failed, flags=flags, edit_error=str(exc))
        if not parsed:
            kept = guards.Verdict(None, "", count_lines(previous), len(previous))
            return Reply(text=previous, raw=raw, verdict=kept, flags=flags, unchanged=True)
        text = guards.normalize_document(applied)
    elif edits and is_numbered(raw):
        why = "the reply is the numbered document sent back, with its line numbers"
        failed = guards.Verdict(
            RefreshStatus.FAILED, f"the model's edits do not apply: {why}", 0, 0
        )
        return Reply(text="", raw=raw, verdict=failed, flags=flags, edit_error=why)
    else:
        text = guards.normalize_document(guards.clean_reply(raw))
    verdict = guards.check_rewrite(previous, text, floor_ratio=floor_ratio)
    if verdict.status is RefreshStatus.REFUSED_EMPTY and _has_words(raw):
        verdict = _judge_remarks(previous, raw, floor_ratio)
    if completion.stop_reason == "refusal":
        # Whatever text came with a refusal is not a rewrite of the document.
        verdict = guards.Verdict(
            RefreshStatus.REFUSED_EMPTY,
            "the model declined to rewrite the document (stop reason: refusal)",
            verdict.lines,
            verdict.chars,
        )
    elif completion.stop_reason == "max_tokens" and verdict.status in (
        None,
        RefreshStatus.REFUSED_FLOOR,
        RefreshStatus.REFUSED_CEILING,
        RefreshStatus.REFUSED_PLACEHOLDER,
    ):
        # A reply cut at the output limit is incomplete, however it looks: never stored. Over
        # the ceiling, the condense retry may fit it; otherwise it is a failed call that says so.
        if verdict.status is RefreshStatus.REFUSED_CEILING:
            verdict = guards.Verdict(
                RefreshStatus.REFUSED_CEILING,
                f"{verdict.reason}, and the reply was cut off at the model's output limit "
                f"({REWRITE_MAX_TOKENS:,} tokens, stop reason max_tokens)",
                verdict.lines,
                verdict.chars,
            )
        else:
            verdict = guards.Verdict(
                RefreshStatus.FAILED,
                f"the model's reply was cut off at its output limit (stop reason max_tokens) "
                f"after {verdict.lines} lines, so it is incomplete; nothing was stored",
                verdict.lines,
                verdict.chars,
            )
    return Reply(text=text, raw=raw, verdict=verdict, flags=flags)


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
    pretends to be, it trips the floor; with no document yet to protect,
    it is empty. Either way the reason quotes it."""
    talk = guards.normalize_document(raw)
    first = talk.splitlines()[0] if talk else ""
    quoted = first if len(first) <= 60 else first[:57] + "..."
    as_document = guards.check_rewrite(previous, talk, floor_ratio=floor_ratio)
    if as_document.status is RefreshStatus.REFUSED_FLOOR:
        return guards.Verdict(
            RefreshStatus.REFUSED_FLOOR,
            f"the reply talks about the document instead of being it "
            f'("{quoted}"): {as_document.reason}',
            as_document.lines,
            as_document.chars,
        )
    return guards.Verdict(
        RefreshStatus.REFUSED_EMPTY,
        f'the reply held no document, only remarks ("{quoted}")',
        as_document.lines,
        as_document.chars,
    )
