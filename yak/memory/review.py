"""The review inbox: rewrites that wait for the person (a refresh's ``needs_review``, an agent's
proposal over MCP), and the person's answer to each (see ``docs/memory.md``, "The
memory document").

A proposal never changes the document by itself: accepting one writes it through the memory
service (the only writer) on the version it was based on; rejecting one buries the lines it
added (tombstones) and marks the conversations it folded as folded. Every change of a
workspace's waiting proposals publishes ``ProposalsChanged``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from yak.aio import Offload, to_thread
from yak.domain import FLOOR_RATIO, MemoryDocument, Proposal, ProposalStatus, line_changes
from yak.errors import ConflictError, RefusedError, UsageError
from yak.events import ProposalsChanged
from yak.memory import document as rules
from yak.memory import provenance
from yak.memory.service import MemoryService
from yak.text import controls_to_spaces, shorten

if TYPE_CHECKING:
    from yak.bus import EventBus
    from yak.ports import ProposalStore

_REASON_CHARS = 300  # an agent's reason is shortened to this many characters


class ReviewInbox:
    """Proposals: stored, listed, accepted and rejected, for every front end.

    Args:
        memory: the memory service (reads; an accepted proposal is written through it).
        proposals: where the proposals are stored.
        bus: where ``ProposalsChanged`` is published.
        offload: runs each repository call and the judging (``yak.aio``).
    """

    def __init__(
        self,
        *,
        memory: MemoryService,
        proposals: ProposalStore,
        bus: EventBus,
        offload: Offload = to_thread,
    ) -> None:
        self._memory = memory
        self._proposals = proposals
        self._bus = bus
        self._offload = offload

    async def proposals(self, workspace_id: str, *, pending_only: bool = True) -> list[Proposal]:
        """The workspace's proposals, oldest first (only those waiting, by default)."""
        return await self._offload(
            self._proposals.proposals, workspace_id, pending_only=pending_only
        )

    async def get_proposal(self, workspace_id: str, proposal_id: str) -> Proposal:
        """A proposal by id or unique prefix (6 or more characters). Raises ``UsageError``."""
        return await self._offload(self._proposals.get_proposal, workspace_id, proposal_id)

    async def pending_counts(self) -> dict[str, int]:
        """How many proposals wait, by workspace id (only workspaces with some)."""
        return await self._offload(self._proposals.pending_counts)

    async def propose(
        self,
        workspace_id: str,
        text: str,
        *,
        base_version: int,
        reasons: tuple[str, ...],
        model: str | None,
        session_ids: tuple[str, ...],
        watermarks: Mapping[str, str],
        flags: tuple[str, ...] = (),
    ) -> Proposal:
        """Store a rewrite that must wait for review (the refresher's ``needs_review``); the
        workspace's older pending proposals are superseded by it. Nothing in the document or
        the watermarks changes. Publishes ``ProposalsChanged``."""
        base = await self._memory.version_text(workspace_id, base_version)
        added, removed = line_changes(base, text)
        proposal = Proposal(
            id="",
            workspace_id=workspace_id,
            base_version=base_version,
            content=text,
            reasons=reasons,
            added=added,
            removed=removed,
            status=ProposalStatus.PENDING,
            created_at=datetime.now(UTC),
            model=model,
            session_ids=session_ids,
            watermarks=dict(watermarks),
            flags=flags,
        )
        stored = await self._offload(self._proposals.add_proposal, proposal)
        self._bus.publish(ProposalsChanged(workspace_id, 1))
        return stored

    async def propose_from_agent(
        self,
        workspace_id: str,
        *,
        text: str | None = None,
        document: str | None = None,
        reason: str,
        origin: str,
        floor_ratio: float = FLOOR_RATIO,
    ) -> Proposal:
        """A change another agent asks for (``yak mcp``'s ``memory_propose``): lines to add at
        the end (``text``) or a whole new document (``document``). It is never applied: it is
        judged as a refresh's reply is (``yak.memory.judging``: secrets redacted and flagged,
        the guards) and becomes a proposal, its first reason "proposed by ``origin``:
        ``reason``", followed by the review rules' reasons, if any. Like every new proposal it
        supersedes the workspace's older pending one.

        Args:
            text: one or more lines to add after the current document.
            document: the whole new document (exactly one of ``text`` and ``document``).
            reason: why, in the agent's words (redacted too, and shortened to 300 characters).
            origin: who proposes, for the reason ("an agent over MCP").
            floor_ratio: the share of the document a whole new document must keep.

        Raises:
            UsageError: neither or both of ``text`` and ``document``; no reason; no text; NUL
                characters; nothing would change.
            RefusedError: a guard refused it (``status`` is the refresh outcome's, e.g.
                ``refused_ceiling``); nothing is stored.
            UnreadableDocument: the stored document is not text.
        """
        why = _agent_reason(text=text, document=document, reason=reason)
        current = await self._memory.read(workspace_id)
        given = _agent_document(current.content, text=text, document=document)
        # The judging rules and redaction load here, for an agent's proposal only: a command
        # that lists or answers proposals never needs them.
        from yak.memory import judging, redact

        judged = await self._offload(judging.judge_proposal, current.content, given, floor_ratio)
        why, reason_findings = await self._offload(redact.redact, why)
        if not judged.verdict.ok:
            raise RefusedError(
                f"Refused: {judged.verdict.reason}; nothing was proposed.",
                status=str(judged.verdict.status),
            )
        if judged.text == current.content:
            raise UsageError("The memory already says exactly this; nothing was proposed.")
        origins, tombstones = await self._offload(self._memory.origins_and_tombstones, workspace_id)
        review = judging.review_reasons(
            current.content, judged, origins, {t.key for t in tombstones}
        )
        return await self.propose(
            workspace_id,
            judged.text,
            base_version=current.version,
            reasons=(f"proposed by {origin}: {shorten(why, _REASON_CHARS)}", *review),
            model=None,
            session_ids=(),
            watermarks={},
            flags=rules.merge_flags(("agent",), judged.flags, reason_findings),
        )

    async def accept(
        self,
        workspace_id: str,
        proposal_id: str,
        *,
        content: str | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Apply a pending proposal as a ``proposal`` revision on the version it was based on,
        advancing the watermarks of the conversations it folded in the same transaction.

        Args:
            content: the proposal as the person edited it (``None``: exactly as proposed); an
                edited proposal is the person's text (flag ``edited``): its lines are theirs,
                and the lines it drops become tombstones like a hand edit's.
            initiator: who asked (a view skips the ``MemoryChanged`` it caused).

        Raises:
            UsageError: no such proposal; an edited text that is empty or holds NUL characters.
            ConflictError: the document changed since the proposal's base version, or the
                proposal is no longer pending (accepted, rejected, superseded); nothing written.
            CeilingExceeded: the edited text is over the ceiling.
        """
        proposal = await self.get_proposal(workspace_id, proposal_id)
        edited = content is not None and rules.normalize_newlines(content) != proposal.content
        if content is not None and edited:
            rules.check_not_empty(rules.normalize_newlines(content))
            text = rules.prepare_hand_text(content)
        else:
            text = proposal.content
        try:
            document = await self._memory.apply_proposal(
                proposal, text, edited=edited, initiator=initiator
            )
        except ConflictError as exc:
            if exc.current_version == exc.expected_version:
                raise  # no longer pending: its own sentence
            raise ConflictError(
                f"The memory changed (version {exc.current_version}) since proposal "
                f"{proposal.id} was made on version {proposal.base_version}; nothing was "
                "applied. Reject it, or refresh again to get a proposal on the new version.",
                expected_version=exc.expected_version,
                current_version=exc.current_version,
            ) from None
        await self._inbox_changed(workspace_id)
        return document

    async def reject(self, workspace_id: str, proposal_id: str) -> Proposal:
        """Drop a pending proposal: the lines it added become tombstones (a later rewrite that
        brings one back waits for review), and the conversations it folded are marked folded.

        Raises:
            UsageError: no such proposal. ConflictError: it is no longer pending.
        """
        proposal = await self.get_proposal(workspace_id, proposal_id)
        base = await self._memory.version_text(workspace_id, proposal.base_version)
        bury = tuple(
            (key, line)
            for line in provenance.added_lines(base, proposal.content)
            if (key := provenance.fold_line(line))
        )
        rejected = await self._offload(
            self._proposals.reject_proposal,
            workspace_id,
            proposal.id,
            bury=bury,
            watermarks=proposal.watermarks,
        )
        await self._inbox_changed(workspace_id)
        return rejected

    async def _inbox_changed(self, workspace_id: str) -> None:
        pending = await self.proposals(workspace_id)
        self._bus.publish(ProposalsChanged(workspace_id, len(pending)))


def _agent_reason(*, text: str | None, document: str | None, reason: str) -> str:
    """An agent's reason for its change, with control characters (a terminal's escape
    sequences: ``yak memory review`` prints the reason as it is) made spaces.

    Raises:
        UsageError: neither or both of ``text`` and ``document``; no reason.
    """
    if text is None and document is None:
        raise UsageError("Give the change: text (lines to add) or document (a whole new document).")
    if text is not None and document is not None:
        raise UsageError(
            "Give either text (lines to add) or document (a whole new document), not both."
        )
    why = controls_to_spaces(reason)
    if not why:
        raise UsageError("Say why in reason: the person reviewing the proposal reads it.")
    return why


def _agent_document(current: str, *, text: str | None, document: str | None) -> str:
    """The whole document an agent's change asks for: ``text`` added after ``current``, or
    ``document``, with LF line endings.

    Raises:
        UsageError: no text to add; NUL characters.
    """
    given = rules.normalize_newlines(text if text is not None else document or "")
    rules.check_text(given, what="The proposal")
    if text is not None:
        added = given.strip("\n")
        if not added.strip():
            raise UsageError("The text to add is empty; nothing was proposed.")
        kept = current.rstrip("\n")
        given = f"{kept}\n{added}\n" if kept else added + "\n"
    return given
