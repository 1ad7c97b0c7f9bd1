"""The requests of one refresh attempt and the retries it may make, each at most once ("One
refresh" and "The rewrite forms" in docs/refresh.md): a tool call that cannot be read gets one
retry that names the problem, then the edits form; edits that do not apply ask for the whole
document; edits that restate a line of the document ask for edits again, naming it; a document
over the ceiling asks to condense. Pure: builds the next request from the judged reply
(``yak.memory.prompts.rewrite``, ``yak.memory.forms``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from yak.domain import RefreshStatus, RewriteForm
from yak.memory.forms import tool
from yak.memory.judging import guards
from yak.memory.judging.per_line import Decision
from yak.memory.judging.pipeline import Judgement
from yak.memory.prompts import rewrite as prompt
from yak.ports import SystemPrompt

# The flags of the retries a reply may earn (each at most once per attempt).
TOOL_RETRY = "tool_retry"
TOOL_FALLBACK = "tool_fallback"  # the tool form gave up: the edits form asked instead
EDITS_RETRY = "edits_retry"
CONDENSE_RETRY = "condense_retry"
DUPLICATE_RETRY = "duplicate_retry"


@dataclass(frozen=True)
class Request:
    """One call's request: the form its reply is read in, and what is sent; for the condense
    retry, ``condensing``: the reply over the ceiling it asks to shorten (a block of edits in
    the answer applies to it, ``yak.memory.judging.pipeline.judge_reply``)."""

    form: RewriteForm
    system: SystemPrompt
    messages: list[dict[str, Any]]
    condensing: str | None = None

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tool form's one tool; none for the free-text forms."""
        return [tool.TOOL] if self.form is RewriteForm.TOOL else None

    @property
    def tool_choice(self) -> dict[str, Any] | None:
        """The tool form forces its tool (``tool_choice``)."""
        return dict(tool.TOOL_CHOICE) if self.form is RewriteForm.TOOL else None


def first_request(form: RewriteForm, **request: Any) -> Request:
    """The first call of an attempt in ``form``
    (:func:`yak.memory.prompts.rewrite.build_rewrite_request`'s keyword arguments)."""
    system, messages = prompt.build_rewrite_request(form=form, **request)
    return Request(form, system, messages)


def next_retry(
    request: Request,
    reply: Judgement,
    retried: tuple[str, ...],
    decision: Decision | None,
    *,
    fallback: Request,
) -> tuple[Request, str] | None:
    """The request of the one retry a reply earns, and its flag, or ``None``.

    Args:
        request: the request the reply answered.
        reply: the judged reply.
        retried: the flags of the retries made so far, in order.
        decision: the per-line decision of a reply that passed the guards, else ``None``.
        fallback: the edits form's first request, for a tool form that gave up.

    A tool call that cannot be read gets its error back as the tool's result, once; a second
    one falls back to the edits form. Edits that do not apply (or a text answer to the tool
    form whose edits do not apply) ask for the whole document; edits that restate lines of
    the document ask for edits again, naming each line that already says it; a document over
    the ceiling asks to condense it, stating its size and the limit.
    """
    error = reply.form_error
    if error is not None and reply.read_as is RewriteForm.TOOL:
        if TOOL_RETRY not in retried and reply.call is not None:
            messages = tool.retry_request(request.messages, call=reply.call, reason=error)
            return replace(request, messages=messages), TOOL_RETRY
        if TOOL_FALLBACK not in retried:
            return fallback, TOOL_FALLBACK
        return None
    if error is not None and reply.read_as is RewriteForm.EDITS and EDITS_RETRY not in retried:
        messages = prompt.whole_document_request(request.messages, reply=reply.raw, reason=error)
        return Request(RewriteForm.WHOLE, _text_system(request), messages), EDITS_RETRY
    if (
        decision is not None
        and decision.duplicates
        and request.form is RewriteForm.EDITS
        and DUPLICATE_RETRY not in retried
    ):
        messages = prompt.duplicate_request(
            request.messages, reply=reply.raw, duplicates=decision.duplicates
        )
        return replace(request, messages=messages), DUPLICATE_RETRY
    if reply.verdict.status is RefreshStatus.REFUSED_CEILING and CONDENSE_RETRY not in retried:
        long_reply = reply.text or reply.raw
        messages = prompt.condense_request(
            _without_tool_turns(request.messages),
            reply=long_reply,
            lines=reply.verdict.lines,
            chars=reply.verdict.chars,
        )
        condense = Request(RewriteForm.WHOLE, _text_system(request), messages, long_reply)
        return condense, CONDENSE_RETRY
    return None


def after_condense(reply: Judgement, before: Judgement) -> Judgement:
    """The reply an attempt keeps after the condense retry (``reply``: its judged answer;
    ``before``: the reply over the ceiling it asked to shorten). An answer still over the
    ceiling says so, naming what of the first reply was over (its lines, its characters). An
    answer that cannot be used (it cannot be read, or a guard other than the ceiling refuses
    it: the floor, a placeholder) leaves the first reply's ceiling outcome standing, with that
    reply kept for the person to trim, and says why the answer was not used."""
    first = guards.over_ceiling(before.verdict.lines, before.verdict.chars)
    if reply.verdict.status is RefreshStatus.REFUSED_CEILING:
        reason = f"{reply.verdict.reason} after one condense retry (the first reply had {first})"
        return replace(reply, verdict=replace(reply.verdict, reason=reason))
    if reply.unchanged or (reply.form_error is None and reply.verdict.ok):
        return reply
    why = reply.form_error or reply.verdict.reason
    reason = f"{before.verdict.reason}; the answer to one condense retry was not used ({why})"
    return replace(before, verdict=replace(before.verdict, reason=reason))


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


def _text_system(request: Request) -> SystemPrompt:
    """The system prompt of a retry asked in text: the request's own, unless it asked for the
    tool (then the whole form's rules: a text answer is wanted now)."""
    if request.form is RewriteForm.TOOL:
        return [prompt.cached_block(prompt.system_prompt(RewriteForm.WHOLE))]
    return request.system


def _without_tool_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first user turn only when the conversation holds tool turns (a condense retry is
    asked in text: a ``tool_use`` turn would need its ``tool_result``)."""
    has_tools = any(
        isinstance(m.get("content"), list)
        and any(b.get("type") in ("tool_use", "tool_result") for b in m["content"])
        for m in messages
    )
    return messages[:1] if has_tools else messages
