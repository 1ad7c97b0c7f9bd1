"""The model conversation of a refresh attempt (``docs/refresh.md``, "The refresh"): the form
chosen for the endpoint, the request checked against its context window, the call and its
retries, and each reply judged and decided per line (blocking work on worker threads).

:class:`RewriteAsker` keeps the model client between attempts (``yak.refresh.client``) and
remembers per endpoint and model whether the tool form was answered with a tool call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable
from dataclasses import replace

from yak.config import Settings
from yak.domain import RefreshStatus, RewriteForm, TokenUsage, estimate_tokens
from yak.errors import MissingApiKey, ProviderError
from yak.memory.document import merge_flags
from yak.memory.forms.profiles import (
    EDITS_MAX_TOKENS_SMALL,
    TOOL_MAX_TOKENS_SMALL,
    Habit,
    profile_for,
)
from yak.memory.judging.kinds import is_structure
from yak.memory.judging.per_line import Decision, decide_lines
from yak.memory.judging.pipeline import REWRITE_MAX_TOKENS, Judgement, judge_reply
from yak.memory.judging.quotes import with_quotes
from yak.ports import Completion, EndpointForms, ModelClient, ModelClientFactory
from yak.refresh import context, retries
from yak.refresh.attempt import Attempt, Store
from yak.refresh.client import KeptModelClient

log = logging.getLogger(__name__)


class RewriteAsker:
    """Asks the memory model for an attempt's rewrite and judges the replies.

    Args:
        model_client: builds the model client (kept while what it is built from is unchanged:
            ``yak.refresh.client.KeptModelClient``).
        form: how the model is asked to answer, whatever the settings say; ``None``: the
            settings' ``memory_form``, where ``auto`` asks for the tool unless
            ``endpoint_forms`` remembers that this endpoint and model answer in text.
        endpoint_forms: the form that worked per endpoint and model, remembered across runs.
    """

    def __init__(
        self,
        model_client: ModelClientFactory,
        *,
        form: RewriteForm | None = None,
        endpoint_forms: EndpointForms | None = None,
    ) -> None:
        self._clients = KeptModelClient(model_client)
        self._form = form
        self._endpoint_forms = endpoint_forms

    def built_from(self) -> Hashable:
        """What the model client would be built from now (blocking: it may read the keyring)."""
        return self._clients.built_from()

    async def aclose(self) -> None:
        """Close the kept model client's connections."""
        await self._clients.aclose()

    async def ask(self, attempt: Attempt) -> None:
        """Ask the memory model for the rewrite (:meth:`_call`) on a kept or new client, in the
        form chosen for its endpoint (:meth:`_form_for`)."""
        data = attempt.data
        request = {
            "current": data.document.content,
            "transcript": data.transcript.text,
            "workspace_name": data.workspace.name,
            "rebuild": attempt.rebuild,
            "hand_lines": [o.text for o in data.origins if o.by_person and o.text.strip()],
            "removed_lines": list(data.tombstones.values()),
            "stale_lines": list(data.stale),
        }
        provider: ModelClient | None = None
        answered = False
        try:
            provider = await self._clients.take(data.client_from)
            form, auto = await self._form_for(provider, attempt.settings)
            first = retries.first_request(form, **request)
            fallback = first
            if form is RewriteForm.TOOL:
                fallback = retries.first_request(RewriteForm.EDITS, **request)
            too_large = await context.check_fit(
                provider,
                settings=attempt.settings,
                system=first.system,
                messages=first.messages,
                reserve=REWRITE_MAX_TOKENS,
            )
            if too_large is not None:  # not sent to be cut by the server; nothing is folded
                attempt.decide(
                    Store.NOTHING,
                    status=RefreshStatus.FAILED,
                    reason=too_large,
                    model=attempt.settings.memory_model,
                    flags=merge_flags(attempt.outcome.flags, ("context_window",)),
                )
                return
            answered = await self._call(provider, attempt, first, fallback=fallback)
            if answered and auto:
                await self._remember(provider, attempt)
        finally:
            if provider is not None:
                await self._clients.give_back(provider, healthy=answered)

    async def _form_for(
        self, provider: ModelClient, settings: Settings
    ) -> tuple[RewriteForm, bool]:
        """The form to ask in, and whether it was chosen automatically (then what the endpoint
        does with it is remembered): the refresher's own form, else the settings'
        ``memory_form``; ``auto`` is the tool unless this endpoint and model were found to
        answer in text (then edits)."""
        if self._form is not None:
            return self._form, False
        if settings.memory_form != "auto":
            return RewriteForm(settings.memory_form), False
        if self._endpoint_forms is None:
            return RewriteForm.TOOL, True
        remembered = await asyncio.to_thread(
            self._endpoint_forms.remembered, provider.base_url, settings.memory_model
        )
        return remembered or RewriteForm.TOOL, True

    async def _remember(self, provider: ModelClient, attempt: Attempt) -> None:
        """Remember what the endpoint did with the tool: it called it (tool), or rejected the
        tools or answered the forced call in text (edits). A tool call that could not be read
        says nothing about the endpoint."""
        flags, forms = attempt.outcome.flags, self._endpoint_forms
        if forms is None:
            return
        if "tool_rejected" in flags or "tool_text_reply" in flags:
            form = RewriteForm.EDITS
        elif RewriteForm.TOOL.flag in flags:
            form = RewriteForm.TOOL
        else:
            return
        model = attempt.settings.memory_model
        await asyncio.to_thread(forms.remember, provider.base_url, model, form)

    async def _call(
        self,
        provider: ModelClient,
        attempt: Attempt,
        first: retries.Request,
        *,
        fallback: retries.Request,
    ) -> bool:
        """The model call and its judged reply (kept on the attempt), in one retry loop
        (``yak.refresh.retries``: which retry, and which reply decides); every reply is judged
        again. A tool form the endpoint rejects (a 400 answer) is asked once more in the edits
        form (``fallback``). A failed call decides the attempt (``failed``, nothing stored):
        then ``False``."""
        base = attempt.outcome
        model, floor_ratio = attempt.settings.memory_model, attempt.settings.floor_ratio
        request, usage, flags = first, TokenUsage(), base.flags
        retried: tuple[str, ...] = ()  # the retries' flags, in order
        before: Judgement | None = None  # the reply the last retry was asked about
        passed: tuple[Judgement, Decision] | None = None  # the last reply that passed the guards
        while True:
            try:
                completion = await provider.complete(
                    model=model,
                    system=request.system,
                    messages=request.messages,
                    max_tokens=_max_tokens(request.form, attempt),
                    tools=request.tools,
                    tool_choice=request.tool_choice,
                )
            except ProviderError as exc:  # an earlier call's tokens were spent all the same
                if (
                    exc.reason == "bad_request"
                    and request.form is RewriteForm.TOOL
                    and "tool_rejected" not in flags
                ):
                    log.info("memory endpoint rejected the tool form (%s); asking for edits", exc)
                    flags = merge_flags(flags, ("tool_rejected",))
                    request = fallback
                    continue
                failed = merge_flags(flags, (f"provider:{exc.reason}",))
                attempt.decide(
                    Store.NOTHING,
                    status=RefreshStatus.FAILED,
                    reason=str(exc),
                    model=model,
                    usage=usage,
                    flags=failed,
                    missing_key=isinstance(exc, MissingApiKey),
                )
                return False
            usage += completion.usage
            reply, decision = await asyncio.to_thread(
                self._judge, attempt, completion, floor_ratio, request
            )
            flags = merge_flags(flags, (reply.read_as.flag,), reply.flags, retried[-1:])
            if retried[-1:] == (retries.CONDENSE_RETRY,) and before is not None:
                reply = retries.after_condense(reply, before)
                if reply is before:
                    decision = None  # the reply over the ceiling stands: refused
            retry = retries.next_retry(request, reply, retried, decision, fallback=fallback)
            if retry is None:
                reply, decision = retries.settle(reply, decision, passed)
                attempt.decision = decision
                break
            if decision is not None and reply.verdict.ok:
                passed = (reply, decision)
            request, flag = retry
            retried += (flag,)
            before = reply
            why = reply.form_error or reply.verdict.reason or "it repeats lines of the document"
            log.info("memory rewrite of %s: %s; one %s", attempt.workspace_id, why, flag)
        attempt.answered(reply, model=completion.model or model, usage=usage, flags=flags)
        return True

    def _judge(
        self,
        attempt: Attempt,
        completion: Completion,
        floor_ratio: float,
        request: retries.Request,
    ) -> tuple[Judgement, Decision | None]:
        """A reply to ``request`` judged (blocking: on a worker thread) in the form it asked
        for and, when it passed the guards, decided per line (``yak.memory.judging.per_line``); a
        tool-form reply's quotes that Yak finds in the conversations they name become their
        lines' evidence (``yak.memory.judging.quotes``)."""
        data = attempt.data
        reply = judge_reply(
            data.document.content,
            completion,
            floor_ratio,
            form=request.form,
            condensing=request.condensing,
            said=data.passages,
            sessions=data.transcript.session_ids,
            titles=data.transcript.titles,
            profile=profile_for(attempt.settings.memory_profile, attempt.settings.memory_model),
        )
        if reply.unchanged or not reply.verdict.ok:
            return reply, None
        decision = decide_lines(
            data.document.content,
            reply.text,
            origins=data.origins,
            tombstones=data.tombstones.keys(),
            passages=data.passages,
            mode=data.workspace.review_mode,
            known=f"Project folder: {data.workspace.name}",
            workspace=data.facts,
        )
        if reply.quotes:
            before = set(data.document.content.splitlines())
            quotes = [q for q in reply.quotes if q.line not in before]
            evidence = with_quotes(
                decision.evidence,
                quotes,
                session_ids=data.transcript.session_ids,
                passages=data.passages,
            )
            decision = replace(decision, evidence=evidence)
            verified = _verified_flag(data.document.content, decision)
            reply = replace(reply, flags=merge_flags(reply.flags, verified))
        return reply, decision


def _max_tokens(form: RewriteForm, attempt: Attempt) -> int:
    """The output limit of a memory call (tokens): ``REWRITE_MAX_TOKENS``; for a model whose
    replies run away (:attr:`Habit.RUNAWAY_CALL`) ``TOOL_MAX_TOKENS_SMALL`` for a tool call, and
    for edits or a whole document ``EDITS_MAX_TOKENS_SMALL``, or twice the document's estimated
    tokens (``estimate_tokens``) when that is more (a document past the ceiling is written out
    whole all the same), never above ``REWRITE_MAX_TOKENS``."""
    profile = profile_for(attempt.settings.memory_profile, attempt.settings.memory_model)
    if not profile.tolerates(Habit.RUNAWAY_CALL):
        return REWRITE_MAX_TOKENS
    if form is RewriteForm.TOOL:
        return TOOL_MAX_TOKENS_SMALL
    document = estimate_tokens(attempt.data.document.content)
    return min(REWRITE_MAX_TOKENS, max(EDITS_MAX_TOKENS_SMALL, 2 * document))


def _verified_flag(previous: str, decision: Decision) -> tuple[str, ...]:
    """``evidence_verified:K/N``: of the N lines the decision applies that ``previous`` did
    not have, K have a quote the model named and Yak found (the evaluation's "evidence
    verified" row)."""
    verified = {e.line for e in decision.evidence if e.verified}
    before = set(previous.splitlines())
    applied = [
        line
        for line in decision.applied.splitlines()
        if line not in before and not is_structure(line)
    ]
    if not applied:
        return ()
    return (f"evidence_verified:{sum(line in verified for line in applied)}/{len(applied)}",)
