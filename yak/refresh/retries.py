"""The retries one refresh attempt may make, each at most once ("One refresh" in
docs/refresh.md): edits that do not apply ask for the whole document; edits that restate a line
of the document ask for edits again, naming it; a document over the ceiling asks to condense.
Pure: builds the next request from the judged reply (``yak.memory.prompt``)."""

from __future__ import annotations

from dataclasses import replace

from yak.domain import RefreshStatus
from yak.memory import prompt
from yak.memory.judging import Judgement
from yak.memory.per_line import Decision

# The flags of the retries a reply may earn (each at most once per attempt).
EDITS_RETRY = "edits_retry"
CONDENSE_RETRY = "condense_retry"
DUPLICATE_RETRY = "duplicate_retry"


def asks_for_edits(retried: tuple[str, ...]) -> bool:
    """Whether the next call asks for edits (in the edit form): the first call and the
    duplicates retry do; the other retries ask for the whole document."""
    return retried[-1:] in ((), (DUPLICATE_RETRY,))


def next_retry(
    messages: list[dict],
    reply: Judgement,
    retried: tuple[str, ...],
    decision: Decision | None,
) -> tuple[list[dict], str] | None:
    """The request of the one retry a reply earns, and its flag, or ``None``: edits that do
    not apply ask for the whole document; edits that restate lines of the document (the
    ``decision`` of an edits reply) ask for edits again, naming each line that already says
    it; a document over the ceiling asks to condense it, stating its size and the limit. Each
    retry happens at most once per attempt."""
    if reply.edit_error is not None and EDITS_RETRY not in retried:
        request = prompt.whole_document_request(messages, reply=reply.raw, reason=reply.edit_error)
        return request, EDITS_RETRY
    if decision is not None and decision.duplicates and DUPLICATE_RETRY not in retried:
        request = prompt.duplicate_request(
            messages, reply=reply.raw, duplicates=decision.duplicates
        )
        return request, DUPLICATE_RETRY
    if reply.verdict.status is RefreshStatus.REFUSED_CEILING and CONDENSE_RETRY not in retried:
        request = prompt.condense_request(
            messages,
            reply=reply.text or reply.raw,
            lines=reply.verdict.lines,
            chars=reply.verdict.chars,
        )
        return request, CONDENSE_RETRY
    return None


def after_condense(reply: Judgement, before_lines: int) -> Judgement:
    """A reply to the condense retry that is still over the ceiling says so."""
    if reply.verdict.status is not RefreshStatus.REFUSED_CEILING:
        return reply
    reason = (
        f"{reply.verdict.reason} after one condense retry "
        f"(the first reply had {before_lines} lines)"
    )
    return replace(reply, verdict=replace(reply.verdict, reason=reason))


def settle(
    reply: Judgement, decision: Decision | None, passed: tuple[Judgement, Decision] | None
) -> tuple[Judgement, Decision | None]:
    """The reply an attempt is decided by once no retry is left: the last one, unless it was
    refused and an earlier one had passed the guards (``passed``: the reply the duplicates
    retry was asked about). A retry never loses what an earlier reply got right: that one's
    supported lines are applied and its restatements wait."""
    if passed is not None and not reply.unchanged and not reply.verdict.ok:
        return passed
    return reply, decision
