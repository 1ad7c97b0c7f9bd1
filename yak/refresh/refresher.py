"""The guarded LLM rewrite of a workspace's memory document (see ``docs/refresh.md``,
"The refresh").

One attempt of :meth:`MemoryRefresher.refresh` goes read → ask → decide → store over one record
(``Attempt``), which is then stored with its outcome, reason, reply, token usage, duration,
model, sessions and flags:

- read: the document, then the unfolded messages of every session (for a rebuild, the most
  recent ones) formatted with secrets redacted (``transcript``). Nothing to say, or memory off
  for the workspace: ``up_to_date`` without a model call;
- ask (``yak.refresh.asking``): the memory model is asked in the form chosen for its endpoint
  (a tool call, edits against the numbered document, or the whole document); each reply is
  judged in one retry loop. A provider failure is ``failed``, and nothing else is stored;
- decide: an empty block of edits is ``up_to_date``, a refused reply ``refused_*``, one the
  review rules hold ``needs_review`` (a proposal); any other is applied;
- store: on the version the attempt read; if the document changed meanwhile (a hand edit) the
  rewrite is ``superseded`` and the attempt runs once more on the new version.

Store calls, redaction and formatting run on worker threads, so a window never stalls; events
are published on the loop thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

from yak.bus import EventBus
from yak.config import Settings
from yak.domain import (
    STORE_ERROR,
    ChatMessage,
    MemoryDocument,
    ProposalOrigin,
    RefreshOutcome,
    RefreshStatus,
    RewriteForm,
)
from yak.errors import CeilingExceeded, ConflictError, YakError
from yak.events import RefreshFinished, RefreshWaiting
from yak.evidence import Evidence
from yak.linediff import line_changes
from yak.memory.freshness.workspace import gather_facts
from yak.memory.inbox.review import ReviewInbox
from yak.memory.judging.said import passages
from yak.memory.prompts.transcript import Transcript, format_transcript
from yak.memory.redaction import redact
from yak.memory.service import MemoryService
from yak.ports import (
    ConversationRepository,
    EndpointForms,
    ModelClientFactory,
    RefreshLock,
    WorkspaceRepository,
)
from yak.refresh.asking import RewriteAsker
from yak.refresh.attempt import Attempt, Input, Store
from yak.text import plural

log = logging.getLogger(__name__)

# How long a refresh waits for another process's refresh of the same workspace (seconds): two
# model calls at the provider's 120 s timeout with its retries fit well within it.
LOCK_WAIT_S = 900.0


class MemoryRefresher:
    """Runs guarded memory rewrites for workspaces.

    Args:
        memory: the memory service (documents, watermarks, attempts; it publishes
            ``MemoryChanged`` for an applied rewrite).
        review: the review inbox (a rewrite that must wait becomes a proposal there).
        workspaces: the stored workspaces (is memory on for this one?).
        conversations: the conversations (unfolded messages, session titles).
        model_client: builds the model client to call. With a ``built_from()`` method (what
            the client is built from: base URL, key, time limit; see
            ``yak.refresh.client.KeptModelClient``) the client is kept between refreshes
            while that is unchanged, and closed when it changes, after a failed or cancelled
            call, and by :meth:`aclose`. Without one it is called once per attempt and the
            client's connections are closed after the attempt (``aclose``; a later call
            reopens them), so a fresh client per call leaks nothing and a shared one stays
            usable. Do not share one with a stream running at the same time.
        settings: returns the current settings (``memory_model``, ``floor_ratio``).
        lock: keeps one refresh of a workspace in flight across processes.
        bus: where ``RefreshFinished`` is published, if given (on the event-loop thread).
        form: how the model is asked to answer, whatever the settings say (the memory
            evaluation compares the forms); ``None``: the settings' ``memory_form``, where
            ``auto`` asks for the tool unless ``endpoint_forms`` remembers that this endpoint
            and model answer in text (then edits).
        endpoint_forms: the form that worked per endpoint and model, remembered across runs.
    """

    def __init__(
        self,
        *,
        memory: MemoryService,
        review: ReviewInbox,
        workspaces: WorkspaceRepository,
        conversations: ConversationRepository,
        model_client: ModelClientFactory,
        settings: Callable[[], Settings],
        lock: RefreshLock | None = None,
        bus: EventBus | None = None,
        form: RewriteForm | None = None,
        endpoint_forms: EndpointForms | None = None,
    ) -> None:
        self._memory = memory
        self._review = review
        self._workspaces = workspaces
        self._conversations = conversations
        self._asker = RewriteAsker(model_client, form=form, endpoint_forms=endpoint_forms)
        self._settings = settings
        self._lock = lock
        self._bus = bus
        # Failed attempts the database could not take when they failed (it was busy or
        # locked), oldest first, as (outcome, base version, rebuild): recorded before the next
        # refresh and at close, so ``history --refreshes`` still lists them.
        self._unrecorded: list[tuple[RefreshOutcome, int, bool]] = []

    async def refresh(self, workspace_id: str, *, rebuild: bool = False) -> RefreshOutcome:
        """Bring the workspace's memory document up to date with its conversations.

        Args:
            workspace_id: the workspace (``ws_…``); it must be stored.
            rebuild: use the most recent messages within the budget regardless of watermarks.

        Returns:
            The outcome: ``applied``, ``up_to_date``, ``refused_*``, ``superseded`` (the
            document changed twice while the model worked) or ``failed`` (provider or storage
            failure; ``reason`` says which). Never raises for those.

        Raises:
            asyncio.CancelledError: the refresh was cancelled (nothing was written).
        """
        await self._record_unrecorded()
        lock = self._lock
        if lock is not None and not await self._take(lock, workspace_id):
            outcome = await self._busy(workspace_id, rebuild=rebuild)
        else:
            try:
                outcome = await self._attempt_safely(workspace_id, rebuild=rebuild)
                if outcome.status is RefreshStatus.SUPERSEDED:
                    log.info(
                        "memory rewrite of %s superseded; running once more on version %d",
                        workspace_id,
                        outcome.version,
                    )
                    outcome = await self._attempt_safely(workspace_id, rebuild=rebuild)
            finally:
                if lock is not None:
                    lock.release(workspace_id)
        if self._bus is not None:
            self._bus.publish(RefreshFinished(workspace_id, outcome))
        return outcome

    async def aclose(self) -> None:
        """Record the failed attempts the database could not take yet (one more try each),
        then close the kept model client's connections (one in use closes when its attempt
        ends); a refresh after this closes its client after the attempt."""
        try:
            await self._record_unrecorded()
        finally:
            await self._asker.aclose()

    async def _record_unrecorded(self) -> None:
        """Record the failed attempts kept by :meth:`_attempt_safely`, oldest first, each
        saying it was recorded late; the first that still cannot be written stops the rest
        (they are tried again next time)."""
        while self._unrecorded:
            outcome, base_version, rebuild = self._unrecorded[0]
            late = replace(
                outcome,
                reason=f"{outcome.reason} (recorded later: the database could not be written "
                "when it failed)",
            )
            try:
                await self._record(late, base_version=base_version, rebuild=rebuild)
            except YakError as exc:
                log.warning(
                    "the failed refresh of %s is still not recorded: %s", outcome.workspace_id, exc
                )
                return
            self._unrecorded.pop(0)

    async def _take(self, lock: RefreshLock, workspace_id: str) -> bool:
        """Take the workspace's refresh lock; when another refresh holds it, say so
        (``RefreshWaiting``) and wait up to ``LOCK_WAIT_S`` seconds. True when held."""
        if await lock.acquire(workspace_id, wait_s=0):
            return True
        log.info("refresh of %s waits for another refresh of it to finish", workspace_id)
        if self._bus is not None:
            self._bus.publish(RefreshWaiting(workspace_id))
        return await lock.acquire(workspace_id, wait_s=LOCK_WAIT_S)

    async def _busy(self, workspace_id: str, *, rebuild: bool) -> RefreshOutcome:
        """The outcome when another refresh of the workspace held the lock too long."""
        document = await self._memory.read(workspace_id)
        outcome = RefreshOutcome(
            status=RefreshStatus.FAILED,
            workspace_id=workspace_id,
            version=document.version,
            lines=document.lines,
            flags=("locked",),
            reason=f"another refresh of this workspace was still running after "
            f"{LOCK_WAIT_S:g} s; nothing was sent",
        )
        return await self._record(outcome, base_version=document.version, rebuild=rebuild)

    async def _attempt_safely(self, workspace_id: str, *, rebuild: bool) -> RefreshOutcome:
        """One attempt; a storage failure becomes a ``failed`` outcome (recorded if possible)."""
        started = time.monotonic()
        try:
            return await self._attempt(workspace_id, rebuild=rebuild, started=started)
        except YakError as exc:  # provider errors are outcomes inside _attempt; this is storage
            log.warning("memory refresh of %s failed: %s", workspace_id, exc)
            outcome = RefreshOutcome(
                status=RefreshStatus.FAILED,
                reason=str(exc),
                workspace_id=workspace_id,
                version=0,
                lines=0,
                duration_s=time.monotonic() - started,
                flags=(STORE_ERROR,),
            )
            base_version = 0
            try:
                document = await self._memory.read(workspace_id)
                base_version = document.version
                outcome = replace(outcome, version=document.version, lines=document.lines)
                return await self._record(outcome, base_version=base_version, rebuild=rebuild)
            except YakError:
                # Kept, and recorded once the database takes writes again (a write lock held
                # by another program fails the attempt and its record alike).
                log.warning("could not record the failed refresh of %s yet", workspace_id)
                self._unrecorded.append((outcome, base_version, rebuild))
            return outcome

    async def _attempt(self, workspace_id: str, *, rebuild: bool, started: float) -> RefreshOutcome:
        """One attempt: read → ask → decide → store, each step filling in the attempt's
        record until one decides what is stored; then the record is stored."""
        attempt = await self._read(workspace_id, rebuild=rebuild)
        if attempt.store is None:
            await self._asker.ask(attempt)
        if attempt.store is None:
            self._decide(attempt)
        await self._store(attempt)
        outcome = replace(attempt.outcome, duration_s=time.monotonic() - started)
        return await self._record(outcome, base_version=attempt.base_version, rebuild=rebuild)

    # --- steps ------------------------------------------------------------------------------
    async def _read(self, workspace_id: str, *, rebuild: bool) -> Attempt:
        """Read the document and the conversations; with nothing to send (memory off, no
        message with text), that is decided here, without a model call."""
        settings = self._settings()
        # The document first: a refresh elsewhere that folds these messages after this read
        # then moves the version, and this attempt's write is refused as superseded.
        _, data = await self._memory.read_with(
            workspace_id, lambda document: self._read_input(document, rebuild)
        )
        document, transcript = data.document, data.transcript
        attempt = Attempt(
            data,
            settings,
            rebuild,
            RefreshOutcome(
                status=RefreshStatus.UP_TO_DATE,
                reason="",
                workspace_id=workspace_id,
                version=document.version,
                lines=document.lines,
                session_ids=transcript.session_ids,
                flags=transcript.flags,
            ),
        )
        if not data.workspace.memory_enabled:
            # Memory is off here: nothing is sent and no watermark moves, so turning it back
            # on folds these conversations then.
            reason = "memory is turned off for this workspace; nothing was sent"
            attempt.decide(Store.NOTHING, reason=reason, session_ids=(), flags=())
        elif transcript.empty and data.messages:  # only tool results and the like: seen
            reason = "the new messages had no text to remember"
            attempt.decide(Store.WATERMARKS, reason=reason, session_ids=())
        elif transcript.empty:
            reason = "no conversation since the last refresh"
            attempt.decide(Store.NOTHING, reason=reason, session_ids=())
        return attempt

    def _decide(self, attempt: Attempt) -> None:
        """Decide what the judged reply becomes: nothing to change, a refusal, a proposal
        that waits for review, a rewrite to apply, or both: its supported lines applied and
        the rest proposed (``yak.memory.judging.per_line``)."""
        reply, data, decision = attempt.reply, attempt.data, attempt.decision
        assert reply is not None  # asked, and the call answered
        if reply.unchanged:
            # An empty block of edits: nothing durable was said. The conversations are folded
            # and no revision is written.
            reason = "the model found nothing new to remember"
            attempt.decide(Store.WATERMARKS, reason=reason, reply=reply.raw)
        elif not reply.verdict.ok:
            attempt.decide(Store.NOTHING, status=reply.verdict.status, reason=reply.verdict.reason)
        else:
            assert decision is not None  # every reply that passed the guards is decided
            if decision.held is None:
                attempt.decide(Store.REWRITE)
            elif decision.applied == data.document.content:
                attempt.decide(Store.PROPOSAL)
            else:
                attempt.decide(Store.SPLIT)

    async def _store(self, attempt: Attempt) -> None:
        """Store what was decided (the attempt itself is recorded after this)."""
        transcript = attempt.data.transcript
        if attempt.store is Store.WATERMARKS:
            await self._memory.advance_watermarks(transcript.watermarks)
        elif attempt.store is Store.PROPOSAL:
            # Waits for the person: the document and the watermarks stay as they are, so the
            # conversations it folds are folded only when it is accepted or rejected.
            await self._propose(attempt, base_version=attempt.base_version)
            assert attempt.decision is not None
            attempt.update(
                status=RefreshStatus.NEEDS_REVIEW,
                reason="waits for review: " + "; ".join(attempt.decision.reasons),
            )
        elif attempt.store is Store.REWRITE:
            await self._apply(attempt)
        elif attempt.store is Store.SPLIT:
            # The supported lines now; the doubtful ones wait, proposed on top of them.
            await self._apply(attempt)
            if attempt.outcome.status is RefreshStatus.APPLIED:
                assert attempt.decision is not None
                added, removed = line_changes(
                    attempt.data.document.content, attempt.decision.applied
                )
                attempt.update(added=added, removed=removed)  # what was applied, not proposed
                await self._propose(attempt, base_version=attempt.outcome.version)
                held = attempt.decision.reasons
                attempt.update(
                    reason=f"{attempt.outcome.reason}; {plural(len(held), 'line')} "
                    f"{'waits' if len(held) == 1 else 'wait'} for review: " + "; ".join(held)
                )

    async def _propose(self, attempt: Attempt, *, base_version: int) -> None:
        """The decision's held rewrite becomes a proposal on ``base_version``: a refresh
        proposal, or, when the rest was applied (its conversations folded), the held lines
        (``ProposalOrigin.HELD``: never replaced by a later refresh, only rebased)."""
        decision, transcript = attempt.decision, attempt.data.transcript
        assert decision is not None and decision.held is not None
        proposal = await self._review.propose(
            attempt.workspace_id,
            redact(decision.held)[0],
            base_version=base_version,
            reasons=decision.reasons,
            model=attempt.outcome.model,
            session_ids=transcript.session_ids,
            watermarks=transcript.watermarks,
            flags=attempt.outcome.flags,
            evidence=_redacted_evidence(decision.evidence),
            held_lines=decision.held_lines,
            origin=(
                ProposalOrigin.HELD
                if base_version != attempt.base_version
                else ProposalOrigin.REFRESH
            ),
        )
        attempt.update(proposal_id=proposal.id)

    async def _apply(self, attempt: Attempt) -> None:
        """Apply the rewrite on the version it was based on: ``applied``; ``superseded`` when
        the document changed meanwhile."""
        outcome, transcript = attempt.outcome, attempt.data.transcript
        assert attempt.decision is not None
        try:
            written = await self._memory.apply_rewrite(
                attempt.workspace_id,
                attempt.decision.applied,
                base_version=attempt.base_version,
                model=outcome.model,
                session_ids=transcript.session_ids,
                watermarks=transcript.watermarks,
                flags=outcome.flags,
                evidence=_redacted_evidence(attempt.decision.evidence),
            )
        except ConflictError as exc:
            current = await self._memory.read(attempt.workspace_id)
            attempt.update(
                status=RefreshStatus.SUPERSEDED,
                version=current.version,
                lines=current.lines,
                reason=f"the document changed (version {exc.expected_version} → "
                f"{exc.current_version}) while the model was working; the rewrite was dropped",
            )
        except CeilingExceeded as exc:  # the guards already refuse this; the store's last net
            attempt.update(status=RefreshStatus.REFUSED_CEILING, reason=str(exc))
        else:
            if written.version == attempt.base_version:
                attempt.update(reason="the model found nothing new to remember")
            else:
                attempt.update(
                    status=RefreshStatus.APPLIED,
                    version=written.version,
                    lines=written.lines,
                    reason=_applied_reason(transcript),
                )

    # --- reading ----------------------------------------------------------------------------
    def _read_input(self, document: MemoryDocument, rebuild: bool) -> Input:
        """After the document (blocking: on its worker thread, see :meth:`_read`): the
        workspace and the transcript, read and formatted, and when there is something to fold
        the line origins, the tombstones and what the model client would be built from."""
        workspace_id = document.workspace_id
        workspace = self._workspaces.get(workspace_id)
        # One redaction per text for the transcript and the passages grounding reads.
        redactor = lru_cache(maxsize=None)(redact)
        messages, transcript = self._transcript(workspace_id, rebuild, redactor)
        if transcript.empty or not workspace.memory_enabled:
            return Input(workspace, document, messages, transcript, [], {}, None)
        origins, tombstones = self._memory.origins_and_tombstones(workspace_id)
        if origins and [o.text for o in origins] != document.content.splitlines():
            origins = []  # the history does not end at this document (a write meanwhile)
        try:
            client_from = self._asker.built_from()
        except Exception:  # the factory meets it again and says what it is (a keyring error)
            log.info("could not read what the model client is built from", exc_info=True)
            client_from = None
        buried = {t.key: t.text for t in tombstones}
        said = tuple(passages(messages, redactor=redactor))
        facts = gather_facts(Path(workspace.path))  # bounded; a vanished folder shows nothing
        stale = self._memory.stale_on_thread(
            workspace_id, origins, after_days=self._settings().stale_after_days
        )
        return Input(
            workspace,
            document,
            messages,
            transcript,
            origins,
            buried,
            client_from,
            said,
            facts,
            stale,
        )

    def _transcript(
        self,
        workspace_id: str,
        rebuild: bool,
        redactor: Callable[[str], tuple[str, tuple[str, ...]]],
    ) -> tuple[list[ChatMessage], Transcript]:
        if rebuild:
            messages = self._conversations.recent_messages(workspace_id)
        else:
            messages = self._conversations.unfolded_messages(workspace_id)
        titles = self._conversations.session_titles({m.session_id for m in messages})
        return messages, format_transcript(messages, session_titles=titles, redactor=redactor)

    async def _record(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool
    ) -> RefreshOutcome:
        # What is stored is redacted as the document is, whatever step wrote it: a reason
        # quotes the lines that wait, a reply may be kept whole.
        outcome = replace(
            outcome,
            reason=redact(outcome.reason)[0],
            reply=None if outcome.reply is None else redact(outcome.reply)[0],
        )
        attempt = await self._memory.record_attempt(
            outcome, base_version=base_version, rebuild=rebuild
        )
        log.info(
            "memory refresh of %s: %s (%s)", outcome.workspace_id, outcome.status, outcome.reason
        )
        return replace(outcome, attempt_id=attempt.id)


def _redacted_evidence(evidence: Iterable[Evidence]) -> tuple[Evidence, ...]:
    """``evidence`` with each line and quote redacted as the document is (a quote is cut from
    a redacted passage, but a window of it may hold a piece of a secret no longer whole)."""
    return tuple(replace(e, line=redact(e.line)[0], quote=redact(e.quote)[0]) for e in evidence)


def _applied_reason(transcript: Transcript) -> str:
    messages = transcript.included
    sessions = len(transcript.session_ids)
    reason = f"folded {plural(messages, 'message')} from {plural(sessions, 'conversation')}"
    if transcript.dropped:
        reason += f" ({transcript.dropped} older messages dropped over the budget)"
    return reason
