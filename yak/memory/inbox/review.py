"""The review inbox: rewrites that wait for the person (a refresh's ``needs_review``, an agent's
proposal over MCP), and the person's answer to each (see ``docs/memory.md``, "The
memory document").

A proposal never changes the document by itself: accepting one writes it through the memory
service (the only writer) on the version it was based on; rejecting one buries the lines it
added (tombstones) and marks the conversations it folded as folded. Every change of a
workspace's waiting proposals publishes ``ProposalsChanged``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from yak.aio import Offload, to_thread
from yak.domain import (
    FLOOR_RATIO,
    MAX_CHARS,
    MemoryDocument,
    Proposal,
    ProposalOrigin,
    ProposalStatus,
)
from yak.errors import ConflictError, RefusedError, UsageError
from yak.events import ProposalsChanged
from yak.evidence import Evidence
from yak.held import HeldLine, held_line_words
from yak.limits import AGENT_REASON_CHARS
from yak.linediff import line_changes
from yak.memory import document as rules
from yak.memory.history import placement, provenance
from yak.memory.history.placement import Placement
from yak.memory.service import MemoryService
from yak.text import controls_to_spaces, shorten

if TYPE_CHECKING:
    from yak.bus import EventBus
    from yak.ports import ProposalStore

REASON_CHARS = 300  # an agent's reason is shortened to this many characters


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
        origin: ProposalOrigin = ProposalOrigin.REFRESH,
        client: str | None = None,
        evidence: Sequence[Evidence] = (),
        held_lines: Sequence[HeldLine] = (),
        owner: str | None = None,
        base: str | None = None,
    ) -> Proposal:
        """Store a rewrite that must wait for review (the refresher's ``needs_review``, an
        agent's proposal). A refresh's proposal supersedes the workspace's older pending
        refresh proposals; an agent's supersedes nothing ("The inbox" in docs/memory.md).
        Nothing in the document or the watermarks changes. Publishes ``ProposalsChanged``.

        ``evidence``: the passages behind the lines it adds or changes, stored with it (an
        entry whose ``line`` is not a line of ``text``, exactly, is left out); accepting it
        stores on the revision those of the lines still in the text written ("Evidence" in
        docs/memory.md). ``held_lines``: why it waits, as data (``reasons`` in words), stored
        with it. ``base``: the text of ``base_version`` when the caller has read it already."""
        if base is None:
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
            origin=origin,
            client=client,
            evidence=provenance.evidence_kept(evidence, text),
            held_lines=tuple(held_lines),
            owner=owner,
        )
        stored = await self._offload(self._proposals.add_proposal, proposal)
        await self._inbox_changed(workspace_id)
        return stored

    async def propose_from_agent(
        self,
        workspace_id: str,
        *,
        text: str | None = None,
        document: str | None = None,
        reason: str,
        origin: str,
        client: str | None = None,
        owner: str | None = None,
        after_line: int | None = None,
        heading: str | None = None,
        floor_ratio: float = FLOOR_RATIO,
    ) -> tuple[Proposal, Placement | None]:
        """A change another agent asks for (``yak mcp``'s ``memory_propose``): lines to add
        (``text``) or a whole new document (``document``). It is never applied: it is judged
        as a refresh's reply is (``yak.memory.judging.pipeline``: secrets redacted and flagged, the
        guards) and becomes an agent proposal, its first reason "proposed by ``origin``:
        ``reason``", followed by the review rules' reasons, if any. It supersedes nothing and
        is never dropped ("The inbox" in docs/memory.md).

        Args:
            text: one or more lines to add: after ``after_line``, at the end of the section
                titled ``heading``, or else at the end of the section whose words match them
                best (``yak.memory.history.placement``).
            document: the whole new document (exactly one of ``text`` and ``document``).
            reason: why, in the agent's words (redacted too, and shortened to 300 characters).
            origin: who proposes, for the reason ("an agent over MCP").
            client: the agent's client name (``"Claude Code"``), when it gave one: shown to
                the person, never used to tell agents apart.
            owner: who may withdraw it: the id of the ``yak mcp`` server process that asks.
            after_line: the line (1-based; 0: the top) the text goes after.
            heading: the title of the section the text goes under.
            floor_ratio: the share of the document a whole new document must keep.

        Returns:
            The stored proposal, and where its first added line lands in its document
            (``None``: it adds no line).

        Raises:
            UsageError: neither or both of ``text`` and ``document``; a place with
                ``document``, or both places; a line outside the document or an unknown
                heading; no reason; no text; NUL characters; nothing would change.
            RefusedError: a guard refused it (``status`` is the refresh outcome's, e.g.
                ``refused_ceiling``); nothing is stored.
            UnreadableDocument: the stored document is not text.
        """
        why = _agent_reason(text=text, document=document, reason=reason)
        if document is not None and (after_line is not None or heading is not None):
            raise UsageError(
                "A place (after_line or heading) goes with text, not with a whole document; "
                "nothing was proposed."
            )
        current = await self._memory.read(workspace_id)
        given, placed = _agent_document(
            current.content, text=text, document=document, after_line=after_line, heading=heading
        )
        # The judging rules and redaction load here, for an agent's proposal only: a command
        # that lists or answers proposals never needs them.
        from yak.memory.judging import pipeline as judging
        from yak.memory.redaction import scan as redact

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
        review = judging.review_held(current.content, judged, origins, {t.key for t in tombstones})
        proposal = await self.propose(
            workspace_id,
            judged.text,
            base_version=current.version,
            reasons=(
                f"proposed by {origin}: {shorten(why, REASON_CHARS)}",
                *map(held_line_words, review),
            ),
            model=None,
            session_ids=(),
            watermarks={},
            flags=rules.merge_flags(("agent",), judged.flags, reason_findings),
            origin=ProposalOrigin.AGENT,
            client=controls_to_spaces(client)[:100] if client else None,
            held_lines=review,
            owner=owner,
            base=current.content,
        )
        if placed is not None:  # the judged text: secrets redacted, no line moved
            return proposal, replace(placed, document=judged.text)
        lands = placement.landing(current.content, judged.text)  # a whole document's
        return proposal, Placement(judged.text, *lands) if lands else None

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
            UsageError: no such proposal; it no longer waits (the sentence says what became
                of it: accepted, rejected, superseded, withdrawn; exit 2); an edited text that
                is empty or holds NUL characters.
            ConflictError: it conflicts with the current version (it was kept when the
                document changed under it), or the document changed meanwhile; nothing written.
            CeilingExceeded: the edited text is over the ceiling.
        """
        proposal = await self.get_proposal(workspace_id, proposal_id)
        _require_pending(proposal)
        if proposal.conflicts_with is not None and content is None:
            raise ConflictError(
                f"Proposal {proposal.id} was made on version {proposal.base_version} and "
                f"conflicts with version {proposal.conflicts_with}: the lines it changes were "
                "changed since; nothing was applied. Accept it as you edit it (--file), or "
                "reject it.",
                expected_version=proposal.base_version,
                current_version=proposal.conflicts_with,
            )
        edited = content is not None and rules.normalize_newlines(content) != proposal.content
        if content is not None and edited:
            rules.check_not_empty(rules.normalize_newlines(content))
            text = rules.prepare_hand_text(content)
        else:
            text = proposal.content
        try:
            document = await self._memory.apply_proposal(
                proposal,
                text,
                edited=edited,
                # A conflicting proposal the person edited: their text, on the current version.
                on_version=proposal.conflicts_with if edited else None,
                initiator=initiator,
            )
        except ConflictError as exc:
            if exc.current_version == exc.expected_version:  # decided meanwhile
                _require_pending(await self.get_proposal(workspace_id, proposal.id))
                raise
            raise ConflictError(
                f"The memory changed (version {exc.current_version}) while proposal "
                f"{proposal.id} was being accepted on version {proposal.base_version}; "
                "nothing was applied. See it again with yak memory review.",
                expected_version=exc.expected_version,
                current_version=exc.current_version,
            ) from None
        await self._inbox_changed(workspace_id)
        return document

    async def reject(self, workspace_id: str, proposal_id: str) -> Proposal:
        """Drop a pending proposal: the lines it added become tombstones (a later rewrite that
        brings one back waits for review), and the conversations it folded are marked folded.
        A line the current document holds (folded as tombstones are: a person typed it while
        the proposal waited) is not buried: it is kept, not removed on purpose ("Tombstones"
        in docs/memory.md).

        Raises:
            UsageError: no such proposal, or it no longer waits (what became of it).
        """
        proposal = await self.get_proposal(workspace_id, proposal_id)
        _require_pending(proposal)
        base = await self._memory.version_text(workspace_id, proposal.base_version)
        current = await self._memory.read(workspace_id)
        held = {provenance.fold_line(line) for line in current.content.splitlines()}
        bury = tuple(
            (key, line)
            for line in provenance.added_lines(base, proposal.content)
            if (key := provenance.fold_line(line)) and key not in held
        )
        try:
            rejected = await self._offload(
                self._proposals.reject_proposal,
                workspace_id,
                proposal.id,
                bury=bury,
                watermarks=proposal.watermarks,
            )
        except ConflictError:  # decided meanwhile
            _require_pending(await self.get_proposal(workspace_id, proposal.id))
            raise
        await self._inbox_changed(workspace_id)
        return rejected

    async def withdraw(self, workspace_id: str, proposal_id: str, *, owner: str) -> Proposal:
        """Take back an agent's pending proposal at the agent's request (``yak mcp``'s
        ``memory_withdraw``): it ends as withdrawn, nothing is buried and the document is not
        touched ("The inbox" in docs/memory.md).

        Args:
            owner: the id of the asking ``yak mcp`` server process; only the proposals it made
                can be withdrawn (a refresh's, a person's import, another process's cannot,
                whatever name its client gave).

        Raises:
            UsageError: no such proposal, not this client's, or it no longer waits (what
                became of it).
        """
        proposal = await self.get_proposal(workspace_id, proposal_id)
        if proposal.origin is not ProposalOrigin.AGENT or proposal.owner != owner:
            raise UsageError(
                f"Proposal {proposal.id} was not made by this agent; only the developer can "
                "reject it (yak memory reject)."
            )
        _require_pending(proposal)
        try:
            withdrawn = await self._offload(
                self._proposals.withdraw_proposal, workspace_id, proposal.id
            )
        except ConflictError:  # decided meanwhile
            _require_pending(await self.get_proposal(workspace_id, proposal.id))
            raise
        await self._inbox_changed(workspace_id)
        return withdrawn

    async def _inbox_changed(self, workspace_id: str) -> None:
        pending = await self.proposals(workspace_id)
        self._bus.publish(ProposalsChanged(workspace_id, len(pending)))


def proposal_fate(proposal: Proposal) -> str:
    """What became of a proposal, as a sentence without its full stop: ``Proposal 01J… was
    accepted as version 7``, ``… was superseded by proposal 01K… (a newer refresh)``."""
    status = proposal.status
    became = f" as version {proposal.result_version}" if proposal.result_version else ""
    if status is ProposalStatus.ACCEPTED:
        what = f"was already accepted{became}"
    elif status is ProposalStatus.EDITED:
        what = f"was already edited and accepted{became}"
    elif status is ProposalStatus.REJECTED:
        what = "was rejected"
    elif status is ProposalStatus.WITHDRAWN:
        what = "was withdrawn by the one who made it"
    elif status is ProposalStatus.SUPERSEDED and proposal.superseded_by:
        what = f"was superseded by proposal {proposal.superseded_by} (a newer refresh)"
    elif status is ProposalStatus.SUPERSEDED:
        what = "was superseded by a refresh that applied (it folded the same conversations)"
    else:
        what = "is waiting for review"
    return f"Proposal {proposal.id} {what}"


def _require_pending(proposal: Proposal) -> None:
    """Raises ``UsageError`` (exit 2) saying what became of a proposal that no longer waits."""
    if proposal.status is not ProposalStatus.PENDING:
        raise UsageError(f"{proposal_fate(proposal)}; nothing was changed.")


def _agent_reason(*, text: str | None, document: str | None, reason: str) -> str:
    """An agent's reason for its change, with control characters (a terminal's escape
    sequences: ``yak memory review`` prints the reason as it is) made spaces.

    Raises:
        UsageError: neither or both of ``text`` and ``document``; no reason.
        RefusedError: ``text`` or ``document`` over ``MAX_CHARS`` characters
            (``refused_ceiling``), before any scan.
    """
    if text is None and document is None:
        raise UsageError("Give the change: text (lines to add) or document (a whole new document).")
    if text is not None and document is not None:
        raise UsageError(
            "Give either text (lines to add) or document (a whole new document), not both."
        )
    given = text if text is not None else document or ""
    if len(given) > MAX_CHARS:
        # Refused before the secret scan and the judging, which take time in proportion to
        # the size: text over the ceiling cannot become part of a document anyway.
        from yak.memory.judging import guards

        lines = given.count("\n") + (not given.endswith("\n"))
        over = guards.ceiling_reason(lines, len(given), subject=guards.PROPOSAL)
        raise RefusedError(f"Refused: {over}; nothing was proposed.", status="refused_ceiling")
    why = controls_to_spaces(reason[:AGENT_REASON_CHARS])
    if not why:
        raise UsageError("Say why in reason: the person reviewing the proposal reads it.")
    return why


def _agent_document(
    current: str,
    *,
    text: str | None,
    document: str | None,
    after_line: int | None = None,
    heading: str | None = None,
) -> tuple[str, Placement | None]:
    """The whole document an agent's change asks for, with LF line endings: ``text`` placed in
    ``current`` (``yak.memory.history.placement``), or ``document``; and where ``text`` was placed
    (``None`` for a ``document``).

    Raises:
        UsageError: no text to add; NUL characters; a bad place.
    """
    given = rules.normalize_newlines(text if text is not None else document or "")
    rules.check_text(given, what="The proposal")
    if text is not None:
        added = given.strip("\n")
        if not added.strip():
            raise UsageError("The text to add is empty; nothing was proposed.")
        if not current.strip():
            return added + "\n", Placement(added + "\n", 1, None)
        placed = placement.place(current, added, after_line=after_line, heading=heading)
        return placed.document, placed
    return given, None
