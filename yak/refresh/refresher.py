"""The guarded LLM rewrite of a workspace's memory document (see ``docs/architecture.md``,
"The refresh").

One :meth:`MemoryRefresher.refresh`:

1. reads the document and the unfolded messages of every session of the workspace (or, for a
   rebuild, the most recent messages regardless of watermarks);
2. nothing to say → ``up_to_date`` without a model call (watermarks advance only past messages
   that had nothing to say, e.g. tool results); memory turned off for the workspace → also
   ``up_to_date`` without a call, and no watermark moves;
3. formats the conversation (``transcript``) with secrets redacted from every message, and asks
   the memory model for edits against the numbered document (or, in the whole form, for the
   full updated document; ``prompt``);
4. redacts the reply (flagged), applies its edits (``edits``; a whole document is accepted
   too, and edits that do not apply get ONE retry asking for the whole document; an empty
   block of edits is ``up_to_date`` with no revision) or cleans the whole document, normalizes
   it and runs the guards (``guards``); a result over the ceiling gets ONE condense retry
   stating its size and the limit, and goes through every guard again;
5. asks the review rules (``provenance.review_reasons``) whether it must wait: then it is
   stored as a proposal (``needs_review``) and nothing else changes;
6. otherwise applies it with the version it was based on; if the document changed meanwhile (a
   hand edit) the rewrite is ``superseded`` and runs once more on the new version.

A provider failure is ``failed`` with its reason; the document and the watermarks are untouched.
Every attempt (each run of steps 1-5, the re-run after a conflict included) is recorded with its
outcome, reason, reply, token usage, duration, model, sessions and flags. Store calls run in a
worker thread (``asyncio.to_thread``) and so do redaction and formatting (CPU work on up to
48,000 characters), so a GUI loop never stalls; events are published on the loop thread.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

from yak.bus import EventBus
from yak.config import Settings
from yak.domain import (
    STORE_ERROR,
    ChatMessage,
    LineOrigin,
    MemoryDocument,
    RefreshOutcome,
    RefreshStatus,
    RewriteForm,
    TokenUsage,
    Tombstone,
    Workspace,
    line_changes,
)
from yak.errors import CeilingExceeded, ConflictError, MissingApiKey, ProviderError, YakError
from yak.events import RefreshFinished, RefreshWaiting
from yak.memory import prompt, provenance
from yak.memory.edits import holds_edits
from yak.memory.redact import redact
from yak.memory.service import MemoryService
from yak.memory.transcript import Transcript, format_transcript
from yak.ports import (
    Completion,
    ConversationRepository,
    ModelClient,
    ModelClientFactory,
    RefreshLock,
    WorkspaceRepository,
)
from yak.refresh.client import KeptModelClient
from yak.refresh.judge import REWRITE_MAX_TOKENS, Reply, judge_reply
from yak.text import plural

log = logging.getLogger(__name__)

# How long a refresh waits for another process's refresh of the same workspace (seconds): two
# model calls at the provider's 120 s timeout with its retries fit well within it.
LOCK_WAIT_S = 900.0


@dataclass(frozen=True)
class _Input:
    """What one attempt works from, read in one worker-thread call."""

    workspace: Workspace
    document: MemoryDocument
    messages: list[ChatMessage]
    transcript: Transcript
    origins: list[LineOrigin]  # of the document's lines
    tombstones: dict[str, str]  # folded key -> the line as the person had it
    client_from: Hashable  # what the model client would be built from now (KeptModelClient)


@dataclass(frozen=True)
class _Read:
    """What :meth:`MemoryRefresher._load` reads after the document, on the same worker thread."""

    workspace: Workspace
    messages: list[ChatMessage]
    transcript: Transcript
    origins: list[LineOrigin]
    tombstones: list[Tombstone]
    client_from: Hashable


class _CallFailed(Exception):
    """A model call failed; carries the provider's error and the tokens already spent."""

    def __init__(self, error: ProviderError, usage: TokenUsage) -> None:
        super().__init__(str(error))
        self.error = error
        self.usage = usage


class MemoryRefresher:
    """Runs guarded memory rewrites for workspaces.

    Args:
        memory: the memory service (documents, watermarks, attempts; it publishes
            ``MemoryChanged`` for an applied rewrite).
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
        form: how the model is asked to answer: ``edits`` against the numbered document (the
            default), or the ``whole`` document (the memory evaluation compares the two).
    """

    def __init__(
        self,
        *,
        memory: MemoryService,
        workspaces: WorkspaceRepository,
        conversations: ConversationRepository,
        model_client: ModelClientFactory,
        settings: Callable[[], Settings],
        lock: RefreshLock | None = None,
        bus: EventBus | None = None,
        form: RewriteForm = RewriteForm.EDITS,
    ) -> None:
        self._memory = memory
        self._form = form
        self._workspaces = workspaces
        self._conversations = conversations
        self._clients = KeptModelClient(model_client)
        self._settings = settings
        self._lock = lock
        self._bus = bus

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
        """Close the kept model client's connections (one in use closes when its attempt
        ends); a refresh after this closes its client after the attempt."""
        await self._clients.aclose()

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
            try:
                document = await self._memory.read(workspace_id)
                outcome = replace(outcome, version=document.version, lines=document.lines)
                await self._record(outcome, base_version=document.version, rebuild=rebuild)
            except YakError:
                log.warning("could not record the failed refresh of %s", workspace_id)
            return outcome

    async def _attempt(self, workspace_id: str, *, rebuild: bool, started: float) -> RefreshOutcome:
        settings = self._settings()
        data = await self._load(workspace_id, rebuild)
        document, transcript = data.document, data.transcript
        base = RefreshOutcome(
            status=RefreshStatus.UP_TO_DATE,
            reason="",
            workspace_id=workspace_id,
            version=document.version,
            lines=document.lines,
            session_ids=transcript.session_ids,
            flags=transcript.flags,
        )

        if not data.workspace.memory_enabled:
            # Memory is off here: nothing is sent and no watermark moves, so turning it back
            # on folds these conversations then.
            return await self._finish(
                replace(
                    base,
                    reason="memory is turned off for this workspace; nothing was sent",
                    session_ids=(),
                    flags=(),
                ),
                started,
                base_version=document.version,
                rebuild=rebuild,
            )
        if transcript.empty:
            if data.messages:  # only tool results and the like: nothing to fold, but seen
                await self._memory.advance_watermarks(transcript.watermarks)
                reason = "the new messages had no text to remember"
            else:
                reason = "no conversation since the last refresh"
            return await self._finish(
                replace(base, reason=reason, session_ids=()),
                started,
                base_version=document.version,
                rebuild=rebuild,
            )

        system, messages = prompt.build_rewrite_request(
            current=document.content,
            transcript=transcript.text,
            workspace_name=data.workspace.name,
            rebuild=rebuild,
            hand_lines=[o.text for o in data.origins if o.by_person and o.text.strip()],
            removed_lines=list(data.tombstones.values()),
            form=self._form,
        )
        model = settings.memory_model
        provider: ModelClient | None = None
        answered = False
        try:
            provider = await self._clients.take(data.client_from)
            completion, reply, usage, flags = await self._ask(
                provider,
                model=model,
                system=system,
                messages=messages,
                previous=document.content,
                floor_ratio=settings.floor_ratio,
                transcript_flags=transcript.flags,
                workspace_id=workspace_id,
            )
            answered = True
        except _CallFailed as failed:
            exc = failed.error
            outcome = replace(
                base,
                status=RefreshStatus.FAILED,
                reason=str(exc),
                model=model,
                usage=failed.usage,
                flags=_merge(base.flags, (f"provider:{exc.reason}",)),
                missing_key=isinstance(exc, MissingApiKey),
            )
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )
        finally:
            if provider is not None:
                await self._clients.give_back(provider, healthy=answered)

        if reply.unchanged:
            # An empty block of edits: nothing durable was said. The conversations are folded
            # and no revision is written.
            await self._memory.advance_watermarks(transcript.watermarks)
            outcome = replace(
                base,
                reason="the model found nothing new to remember",
                model=completion.model or model,
                usage=usage,
                flags=flags,
                reply=reply.raw,
            )
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )
        added, removed = line_changes(document.content, reply.text) if reply.text else (0, 0)
        outcome = replace(
            base,
            model=completion.model or model,
            usage=usage,
            flags=flags,
            reply=reply.text or reply.raw,
            added=added,
            removed=removed,
        )
        if not reply.verdict.ok:
            assert reply.verdict.status is not None
            outcome = replace(outcome, status=reply.verdict.status, reason=reply.verdict.reason)
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )
        reasons = provenance.review_reasons(
            document.content,
            reply.text,
            data.origins,
            data.tombstones.keys(),
            data.workspace.review_mode,
        )
        if reasons:
            # Waits for the person: the document and the watermarks stay as they are, so the
            # conversations it folds are folded only when it is accepted or rejected.
            proposal = await self._memory.propose(
                workspace_id,
                reply.text,
                base_version=document.version,
                reasons=tuple(reasons),
                model=outcome.model,
                session_ids=transcript.session_ids,
                watermarks=transcript.watermarks,
                flags=flags,
            )
            outcome = replace(
                outcome,
                status=RefreshStatus.NEEDS_REVIEW,
                reason="waits for review: " + "; ".join(reasons),
                proposal_id=proposal.id,
            )
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )
        try:
            written = await self._memory.apply_rewrite(
                workspace_id,
                reply.text,
                base_version=document.version,
                model=outcome.model,
                session_ids=transcript.session_ids,
                watermarks=transcript.watermarks,
                flags=flags,
            )
        except ConflictError as exc:
            outcome = replace(
                outcome,
                status=RefreshStatus.SUPERSEDED,
                version=exc.current_version,
                reason=f"the document changed (version {exc.expected_version} → "
                f"{exc.current_version}) while the model was working; the rewrite "
                "was dropped",
            )
            current = await self._memory.read(workspace_id)
            outcome = replace(outcome, version=current.version, lines=current.lines)
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )
        except CeilingExceeded as exc:  # the guards already refuse this; the store's last net
            outcome = replace(outcome, status=RefreshStatus.REFUSED_CEILING, reason=str(exc))
            return await self._finish(
                outcome, started, base_version=document.version, rebuild=rebuild
            )

        if written.version == document.version:
            outcome = replace(outcome, reason="the model found nothing new to remember")
        else:
            outcome = replace(
                outcome,
                status=RefreshStatus.APPLIED,
                version=written.version,
                lines=written.lines,
                reason=_applied_reason(transcript),
            )
        return await self._finish(outcome, started, base_version=document.version, rebuild=rebuild)

    # --- steps ------------------------------------------------------------------------------
    async def _ask(
        self,
        provider: ModelClient,
        *,
        model: str,
        system: str,
        messages: list[dict],
        previous: str,
        floor_ratio: float,
        transcript_flags: tuple[str, ...],
        workspace_id: str,
    ) -> tuple[Completion, Reply, TokenUsage, tuple[str, ...]]:
        """The model call, judged; edits that do not apply get the one retry asking for the
        whole document; over the ceiling, the one condense retry; each reply judged again.

        Raises:
            _CallFailed: either call failed (nothing is stored from it).
        """
        try:
            completion = await provider.complete(
                model=model, system=system, messages=messages, max_tokens=REWRITE_MAX_TOKENS
            )
        except ProviderError as exc:
            raise _CallFailed(exc, TokenUsage()) from exc
        usage = completion.usage
        edits = self._form is RewriteForm.EDITS
        reply = await asyncio.to_thread(judge_reply, previous, completion, floor_ratio, edits=edits)
        flags = _merge(transcript_flags, reply.flags)
        if edits and reply.edit_error is None and reply.raw.strip() and not holds_edits(reply.raw):
            flags = _merge(flags, ("whole_reply",))
        if reply.edit_error is not None:
            log.info(
                "memory rewrite of %s: the edits do not apply (%s); asking for the whole document",
                workspace_id,
                reply.edit_error,
            )
            retry = prompt.whole_document_request(
                messages, reply=reply.raw, reason=reply.edit_error
            )
            try:
                completion = await provider.complete(
                    model=model, system=system, messages=retry, max_tokens=REWRITE_MAX_TOKENS
                )
            except ProviderError as exc:  # the first call's tokens were spent all the same
                raise _CallFailed(exc, usage) from exc
            usage = _add(usage, completion.usage)
            reply = await asyncio.to_thread(judge_reply, previous, completion, floor_ratio)
            flags = _merge(flags, reply.flags, ("edits_retry",))
        if reply.verdict.status is not RefreshStatus.REFUSED_CEILING:
            return completion, reply, usage, flags
        log.info(
            "memory rewrite of %s over the ceiling (%s); one condense retry",
            workspace_id,
            reply.verdict.reason,
        )
        retry = prompt.condense_request(
            messages,
            reply=reply.text or reply.raw,
            lines=reply.verdict.lines,
            chars=reply.verdict.chars,
        )
        first_lines = reply.verdict.lines
        try:
            completion = await provider.complete(
                model=model, system=system, messages=retry, max_tokens=REWRITE_MAX_TOKENS
            )
        except ProviderError as exc:  # the first call's tokens were spent all the same
            raise _CallFailed(exc, usage) from exc
        usage = _add(usage, completion.usage)
        reply = await asyncio.to_thread(judge_reply, previous, completion, floor_ratio)
        flags = _merge(flags, reply.flags, ("condense_retry",))
        if reply.verdict.status is RefreshStatus.REFUSED_CEILING:
            reply = replace(
                reply,
                verdict=replace(
                    reply.verdict,
                    reason=f"{reply.verdict.reason} after one condense retry "
                    f"(the first reply had {first_lines} lines)",
                ),
            )
        return completion, reply, usage, flags

    async def _load(self, workspace_id: str, rebuild: bool) -> _Input:
        """Read everything an attempt needs in one worker-thread hop (each costs a few tenths
        of a millisecond on a busy machine): the document, then the workspace and the
        transcript, read and formatted, and when there is something to fold the line origins,
        the tombstones and what the model client would be built from."""
        # The document first: a refresh elsewhere that folds these messages after this read
        # then moves the version, and this attempt's write is refused as superseded.
        document, read = await self._memory.read_with(
            workspace_id, lambda: self._read(workspace_id, rebuild)
        )
        origins = read.origins
        if origins and [o.text for o in origins] != document.content.splitlines():
            origins = []  # the history does not end at this document (a write meanwhile)
        tombstones = {t.key: t.text for t in read.tombstones}
        return _Input(
            read.workspace,
            document,
            read.messages,
            read.transcript,
            origins,
            tombstones,
            read.client_from,
        )

    def _read(self, workspace_id: str, rebuild: bool) -> _Read:
        """:meth:`_load`'s reads after the document (blocking: on its worker thread)."""
        workspace = self._workspaces.get(workspace_id)
        messages, transcript = self._transcript(workspace_id, rebuild)
        if transcript.empty or not workspace.memory_enabled:
            return _Read(workspace, messages, transcript, [], [], None)
        origins, tombstones = self._memory.origins_and_tombstones(workspace_id)
        try:
            client_from = self._clients.built_from()
        except Exception:  # the factory meets it again and says what it is (a keyring error)
            log.info("could not read what the model client is built from", exc_info=True)
            client_from = None
        return _Read(workspace, messages, transcript, origins, tombstones, client_from)

    def _transcript(self, workspace_id: str, rebuild: bool) -> tuple[list[ChatMessage], Transcript]:
        if rebuild:
            messages = self._conversations.recent_messages(workspace_id)
        else:
            messages = self._conversations.unfolded_messages(workspace_id)
        titles = self._conversations.session_titles({m.session_id for m in messages})
        transcript = format_transcript(messages, session_titles=titles, redactor=redact)
        return messages, transcript

    async def _finish(
        self, outcome: RefreshOutcome, started: float, *, base_version: int, rebuild: bool
    ) -> RefreshOutcome:
        outcome = replace(outcome, duration_s=time.monotonic() - started)
        return await self._record(outcome, base_version=base_version, rebuild=rebuild)

    async def _record(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool
    ) -> RefreshOutcome:
        attempt = await self._memory.record_attempt(
            outcome, base_version=base_version, rebuild=rebuild
        )
        log.info(
            "memory refresh of %s: %s (%s)", outcome.workspace_id, outcome.status, outcome.reason
        )
        return replace(outcome, attempt_id=attempt.id)


def _add(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(a.input_tokens + b.input_tokens, a.output_tokens + b.output_tokens)


def _merge(*groups: tuple[str, ...]) -> tuple[str, ...]:
    merged: list[str] = []
    for group in groups:
        merged += [flag for flag in group if flag not in merged]
    return tuple(merged)


def _applied_reason(transcript: Transcript) -> str:
    messages = transcript.included
    sessions = len(transcript.session_ids)
    reason = f"folded {plural(messages, 'message')} from {plural(sessions, 'conversation')}"
    if transcript.dropped:
        reason += f" ({transcript.dropped} older messages dropped over the budget)"
    return reason
