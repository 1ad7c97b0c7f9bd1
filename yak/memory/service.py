"""The memory service: the only writer of memory documents and the only publisher of
``MemoryChanged`` (see ``docs/architecture.md``, "The memory document").

Every write goes through the document rules here (hand text normalized and checked against the
ceiling; imports decoded and unwrapped; rewrites checked again as a last net) and then through
the document repository's optimistic write on the version it was based on. A write that
produced a new version publishes ``MemoryChanged(workspace_id, version, source, initiator)``
once, on the event-loop thread; a view passes itself as ``initiator`` and skips the change it
made. Repository calls run on worker threads, so a window never waits on the disk.

Writes made by another process (the command line shares the database) are noticed by a
watcher task: about once a second it asks the repository whether the database moved
(``data_version``) and, when it did, compares every document's version with the last one known
and publishes ``MemoryChanged(source="external")`` for each that changed.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from yak.aio import Offload, spawn, to_thread
from yak.domain import (
    FLOOR_RATIO,
    LineOrigin,
    MemoryDocument,
    MemorySummary,
    Proposal,
    ProposalStatus,
    RefreshAttempt,
    RefreshOutcome,
    ReviewMode,
    Revision,
    RevisionSource,
    Tombstone,
    Workspace,
    WriteEffects,
    line_changes,
)
from yak.errors import ConflictError, RefusedError, UnreadableDocument, UsageError, YakError
from yak.memory import document as rules
from yak.text import controls_to_spaces, shorten

if TYPE_CHECKING:  # types only: a reading command loads none of these modules
    import asyncio

    from yak.bus import EventBus
    from yak.memory.sync import SyncResult
    from yak.ports import (
        AttemptRepository,
        DocumentRepository,
        ProposalStore,
        SearchCandidates,
        SearchIndex,
        WorkspaceRepository,
    )

T = TypeVar("T")
log = logging.getLogger(__name__)

# The versions of this many recently read workspaces are remembered, so the watcher's first
# step can already report a change to the memory a view shows.
WATCHED_LIMIT = 16
_ORIGINS_KEPT = 16  # workspaces whose line origins are remembered between refreshes


class MemoryService:
    """Memory documents, their history and refresh attempts, for every front end.

    Args:
        workspaces: the stored workspaces (for exports).
        documents: the documents, revisions and watermarks.
        proposals: the rewrites waiting for review.
        attempts: the refresh attempts.
        bus: where ``MemoryChanged`` is published.
        poll_interval_s: seconds between two checks for writes by another process.
        search_index: finds the documents that may contain a text (the database's
            full-text index, else every document).
        offload: runs each repository or file call (``yak.aio``): on a worker thread, or in
            place for a command that only reads.
    """

    def __init__(
        self,
        *,
        workspaces: WorkspaceRepository,
        documents: DocumentRepository,
        proposals: ProposalStore,
        attempts: AttemptRepository,
        bus: EventBus,
        poll_interval_s: float = 1.0,
        search_index: SearchIndex,
        offload: Offload = to_thread,
    ) -> None:
        self._offload = offload
        self._workspaces = workspaces
        self._search_index = search_index
        self._documents = documents
        self._proposals = proposals
        self._attempts = attempts
        self._bus = bus
        self._poll_interval_s = poll_interval_s
        self._watched: OrderedDict[str, int] = OrderedDict()
        self._versions: dict[str, int] | None = None  # every document's version, last step
        self._last_data_version: int | None = None
        self._watcher: asyncio.Task[None] | None = None
        # workspace id -> (version, revision id, lines, origins) of the newest blame answer
        self._origins: OrderedDict[str, tuple[int, str, list[str], list[LineOrigin]]] = (
            OrderedDict()
        )
        self._origins_lock = threading.Lock()  # blame runs on worker threads

    # --- reading ------------------------------------------------------------------------------
    async def read(self, workspace_id: str) -> MemoryDocument:
        """The current document (version 0 and empty when never written); the workspace is
        then watched for writes by other processes.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        document = await self._offload(self._documents.read, workspace_id)
        self._remember(workspace_id, document.version)
        return document

    async def read_with(self, workspace_id: str, then: Callable[[], T]) -> tuple[MemoryDocument, T]:
        """:meth:`read`, then ``then()`` on the same worker thread (one hop instead of two) and in
        the same transaction (``DocumentRepository.together``; ``then`` only reads): a refresh
        reads the document first, then its conversations, so that a refresh elsewhere that folds
        them in between moves the version it writes against.

        Raises:
            WorkspaceNotFound: unknown id; what ``then`` raises.
        """

        def read() -> tuple[MemoryDocument, T]:
            return self._documents.read(workspace_id), then()

        document, also = await self._offload(self._documents.together, read)
        self._remember(workspace_id, document.version)
        return document, also

    async def current_version(self, workspace_id: str) -> int:
        """The stored version, also when the document cannot be read as text (a restore or a
        new text is then written on it)."""
        try:
            return (await self.read(workspace_id)).version
        except UnreadableDocument as exc:
            return exc.version

    async def read_raw(self, workspace_id: str) -> bytes:
        """The stored document's bytes exactly, also when they are not UTF-8 (the way out of
        ``UnreadableDocument``: show them, then restore a revision or save a new text)."""
        return await self._offload(self._documents.read_raw, workspace_id)

    async def blame(self, workspace_id: str) -> list[LineOrigin]:
        """The origin of every line of the current document (``[]`` for an empty one): the
        version, source, time and conversations of the write that introduced it, from the
        revision chain (see :func:`yak.memory.provenance.blame`)."""
        return await self._offload(self._blame, workspace_id)

    def _blame(self, workspace_id: str) -> list[LineOrigin]:
        """:meth:`blame` on a worker thread, walking only the revisions written since the last
        answer for the workspace (history is append-only), so a refresh's cost does not grow
        with the length of the history. The whole chain is walked the first time, when the
        remembered revision is not there any more, and when a restore was written since."""
        from yak.memory import provenance  # loaded on first use: reading needs no rules

        with self._origins_lock:
            cached = self._origins.get(workspace_id)
        if cached is not None:
            version, revision_id, lines, origins = cached
            newer = self._documents.revisions_since(workspace_id, version)
            ids = [r.id for r in newer]
            if revision_id in ids:
                since = newer[ids.index(revision_id) + 1 :]
                if not any(r.source is RevisionSource.RESTORE for r in since):
                    if since:
                        origins = provenance.blame(since, start=(lines, origins))
                        self._remember_origins(workspace_id, since[-1], origins)
                    return list(origins)
        revisions = list(reversed(self._documents.history(workspace_id)))
        origins = provenance.blame(revisions)
        if revisions:
            self._remember_origins(workspace_id, revisions[-1], origins)
        return list(origins)

    def _remember_origins(
        self, workspace_id: str, revision: Revision, origins: list[LineOrigin]
    ) -> None:
        entry = (revision.version, revision.id, [o.text for o in origins], list(origins))
        with self._origins_lock:
            self._origins[workspace_id] = entry
            self._origins.move_to_end(workspace_id)
            while len(self._origins) > _ORIGINS_KEPT:
                self._origins.popitem(last=False)

    def origins_and_tombstones(self, workspace_id: str) -> tuple[list[LineOrigin], list[Tombstone]]:
        """:meth:`blame` and :meth:`tombstones` read together, on the calling thread (a refresh
        needs both): blocking, so call it on a worker thread, e.g. in :meth:`read_with`'s
        ``then``, which puts the refresh's reads in one hop.

        Raises:
            WorkspaceNotFound: unknown id.
        """
        return self._blame(workspace_id), self._documents.tombstones(workspace_id)

    async def tombstones(self, workspace_id: str) -> list[Tombstone]:
        """The lines a person removed on purpose, oldest first."""
        return await self._offload(self._documents.tombstones, workspace_id)

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

    async def memory_enabled(self, workspace_id: str) -> bool:
        """Whether the workspace's memory is on. Raises ``WorkspaceNotFound``."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        return workspace.memory_enabled

    async def review_mode(self, workspace_id: str) -> ReviewMode:
        """The workspace's review mode. Raises ``WorkspaceNotFound``."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        return workspace.review_mode

    async def set_review_mode(self, workspace_id: str, mode: ReviewMode | str) -> Workspace:
        """Set the workspace's review mode (``auto`` or ``review``).

        Raises:
            UsageError: another mode. WorkspaceNotFound.
        """
        try:
            chosen = ReviewMode(mode)
        except ValueError:
            raise UsageError(f"Unknown review mode {mode!r}; use auto or review.") from None
        return await self._offload(self._workspaces.set_review_mode, workspace_id, chosen)

    async def list_documents(self) -> list[MemorySummary]:
        """Every workspace with a memory, most recently updated first, orphans marked."""
        return await self._offload(self._documents.summaries)

    async def history(self, workspace_id: str) -> list[Revision]:
        """Revisions, newest first."""
        return await self._offload(self._documents.history, workspace_id)

    async def get_revision(self, workspace_id: str, revision: str) -> Revision:
        """A revision by id, unique id prefix or version number. Raises ``RevisionNotFound``."""
        return await self._offload(self._documents.get_revision, workspace_id, revision)

    async def attempts(self, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
        """Refresh attempts, newest first (at most ``limit``; ``None``: all)."""
        return await self._offload(self._attempts.list, workspace_id, limit)

    async def get_attempt(self, workspace_id: str, attempt_id: str) -> RefreshAttempt:
        """One refresh attempt by id or unique prefix. Raises ``UsageError``."""
        return await self._offload(self._attempts.get, workspace_id, attempt_id)

    async def last_attempt(self, workspace_id: str) -> RefreshAttempt | None:
        """The newest refresh attempt of the workspace, or ``None``."""
        found = await self.attempts(workspace_id, limit=1)
        return found[0] if found else None

    async def latest_attempts(self) -> dict[str, RefreshAttempt]:
        """The newest refresh attempt of every workspace that has one (replies not read)."""
        return await self._offload(self._attempts.latest)

    async def search_candidates(self, query: str) -> SearchCandidates:
        """The current documents that may contain ``query`` (``yak.memory.search`` matches
        their lines): the database's index chooses them, or every document is read (a plain
        scan, which the answer says)."""
        return await self._offload(self._search_index.candidates, query)

    # --- writing ------------------------------------------------------------------------------
    async def save(
        self,
        workspace_id: str,
        text: str,
        *,
        expected_version: int | None,
        require_text: bool = False,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """A hand edit (the editor, ``set``, ``edit``) based on ``expected_version``.

        CRLF and CR become LF. Saving the text already stored writes nothing and returns the
        stored document.

        Args:
            expected_version: the version the edit is based on (``None``: the current one).
            require_text: refuse an empty text (``set``: emptying the memory is ``delete``).
            initiator: who asked (a view skips the ``MemoryChanged`` it caused).

        Raises:
            CeilingExceeded: over ``MAX_LINES`` lines or ``MAX_CHARS`` characters.
            ConflictError: the document changed since ``expected_version``.
            UsageError: NUL characters, or empty when ``require_text``. Nothing is written.
        """
        if require_text:  # before the ceiling: blank input is a usage error, not a refusal
            rules.check_not_empty(rules.normalize_newlines(text))
        prepared = rules.prepare_hand_text(text)
        return await self._write(
            workspace_id,
            prepared,
            expected_version=expected_version,
            source=RevisionSource.HAND,
            initiator=initiator,
        )

    async def import_bytes(
        self,
        workspace_id: str,
        data: bytes,
        *,
        source_name: str | None = None,
        expected_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Import a file's bytes (UTF-8/16/32, with or without BOM, CRLF) as an ``import``
        revision, through the ceiling check. Yak's own exports import as the document they hold
        (the JSON's document, a Markdown export without its title line).

        Raises:
            UsageError: not text, or empty. CeilingExceeded. ConflictError.
        """
        text = rules.decode_import(data, what=source_name or "The file")
        rules.check_not_empty(text)
        text = rules.unwrap_export(text, source_name)
        rules.check_not_empty(text)
        rules.check_ceiling(text)
        return await self._write(
            workspace_id,
            text,
            expected_version=expected_version,
            source=RevisionSource.IMPORT,
            initiator=initiator,
        )

    async def import_file(
        self,
        workspace_id: str,
        path: str | os.PathLike[str],
        *,
        expected_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """:meth:`import_bytes` of a file. Raises ``UsageError`` when it cannot be read."""
        data = await self._offload(read_input_file, Path(path))
        return await self.import_bytes(
            workspace_id,
            data,
            source_name=Path(path).name,
            expected_version=expected_version,
            initiator=initiator,
        )

    async def copy_from(
        self,
        workspace_id: str,
        source: Workspace,
        *,
        expected_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Seed a workspace's document with another workspace's current one (the enclosing
        folder's, "Copy it here"): a ``copy`` revision flagged ``copied_from:<source path>``.
        The two documents then go their own ways.

        Raises:
            UsageError: the source document is empty. UnreadableDocument: its bytes are not
                UTF-8. ConflictError: the document changed since ``expected_version``.
        """
        document = await self.read(source.id)
        if not document.content:
            raise UsageError(f"{source.path} has no memory to copy")
        return await self._write(
            workspace_id,
            document.content,
            expected_version=expected_version,
            source=RevisionSource.COPY,
            flags=(f"copied_from:{source.path}",),
            initiator=initiator,
        )

    async def restore(
        self,
        workspace_id: str,
        revision: str,
        *,
        expected_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Make a revision current again, as a new ``restore`` revision. ``revision`` is an
        id, a unique prefix or a version number. Restoring the current text writes nothing.

        Raises:
            RevisionNotFound. ConflictError.
        """
        found = await self.get_revision(workspace_id, revision)
        return await self._write(
            workspace_id,
            found.content,
            expected_version=expected_version,
            source=RevisionSource.RESTORE,
            restored_from=found.id,
            initiator=initiator,
        )

    async def clear(
        self,
        workspace_id: str,
        *,
        expected_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Empty the document as a ``clear`` revision (restorable from history)."""
        return await self._write(
            workspace_id,
            "",
            expected_version=expected_version,
            source=RevisionSource.CLEAR,
            initiator=initiator,
        )

    async def apply_rewrite(
        self,
        workspace_id: str,
        text: str,
        *,
        base_version: int,
        model: str | None,
        session_ids: tuple[str, ...],
        watermarks: Mapping[str, str],
        flags: tuple[str, ...] = (),
    ) -> MemoryDocument:
        """Apply a refresh's rewrite that passed the guards, advancing the session watermarks
        in the same transaction. The ceiling is checked again here as a last net. Proposals
        still waiting become ``superseded``.

        Raises:
            ConflictError: the document changed since ``base_version`` (superseded).
            CeilingExceeded: over the ceiling. Nothing is written either way.
        """
        prepared = rules.normalize_newlines(text)
        rules.check_text(prepared)
        rules.check_ceiling(prepared)
        written = await self._write(
            workspace_id,
            prepared,
            expected_version=base_version,
            source=RevisionSource.REFRESH,
            flags=flags,
            model=model,
            session_ids=session_ids,
            watermarks=watermarks,
            # A proposal still waiting was made on an older version, and this rewrite folded
            # its conversations too: it can no longer be accepted, so it leaves the inbox.
            supersede=True,
        )
        return written

    async def advance_watermarks(self, watermarks: Mapping[str, str]) -> None:
        """Mark messages as folded without a write (they had nothing to remember)."""
        await self._offload(self._documents.advance_watermarks, watermarks)

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
        added, removed = line_changes(await self.version_text(workspace_id, base_version), text)
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
        from yak.events import ProposalsChanged  # see _write on these imports

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
        the end (``text``) or a whole new document (``document``). It is never applied: it
        passes the rewrite guards (:func:`yak.memory.guards.check_rewrite`: not a document,
        placeholders, the ceiling, the floor) with secrets redacted (flagged) and becomes a
        proposal in the review inbox, its first reason "proposed by ``origin``: ``reason``",
        followed by the review rules' reasons, if any. Like every new proposal it supersedes
        the workspace's older pending one.

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
        if text is None and document is None:
            raise UsageError(
                "Give the change: text (lines to add) or document (a whole new document)."
            )
        if text is not None and document is not None:
            raise UsageError(
                "Give either text (lines to add) or document (a whole new document), not both."
            )
        # Control characters (a terminal's escape sequences) become spaces: the reason is
        # printed as it is by `yak memory review`.
        why = controls_to_spaces(reason)
        if not why:
            raise UsageError("Say why in reason: the person reviewing the proposal reads it.")
        current = await self.read(workspace_id)
        given = rules.normalize_newlines(text if text is not None else document or "")
        rules.check_text(given, what="The proposal")
        if text is not None:
            added = given.strip("\n")
            if not added.strip():
                raise UsageError("The text to add is empty; nothing was proposed.")
            kept = current.content.rstrip("\n")
            given = f"{kept}\n{added}\n" if kept else added + "\n"
        from yak.memory import guards, provenance
        from yak.memory.redact import redact

        redacted, findings = await self._offload(redact, given)
        why, reason_findings = await self._offload(redact, why)
        findings = _merge(findings, reason_findings)
        new = guards.normalize_document(redacted)
        verdict = guards.check_rewrite(current.content, new, floor_ratio=floor_ratio)
        if not verdict.ok:
            assert verdict.status is not None
            sentence = verdict.reason.replace("the reply", "the proposal", 1)
            raise RefusedError(
                f"Refused: {sentence}; nothing was proposed.", status=str(verdict.status)
            )
        if new == current.content:
            raise UsageError("The memory already says exactly this; nothing was proposed.")
        origins = await self.blame(workspace_id)
        buried = {t.key for t in await self.tombstones(workspace_id)}
        review = provenance.review_reasons(current.content, new, origins, buried)
        return await self.propose(
            workspace_id,
            new,
            base_version=current.version,
            reasons=(f"proposed by {origin}: {shorten(why, 300)}", *review),
            model=None,
            session_ids=(),
            watermarks={},
            flags=("agent", *findings),
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
        if edited:
            assert content is not None
            rules.check_not_empty(rules.normalize_newlines(content))
            text = rules.prepare_hand_text(content)
        else:
            text = proposal.content
        try:
            document = await self._write(
                workspace_id,
                text,
                expected_version=proposal.base_version,
                source=RevisionSource.PROPOSAL,
                flags=_merge(proposal.flags, ("edited",) if edited else ()),
                model=proposal.model,
                session_ids=proposal.session_ids,
                watermarks=proposal.watermarks,
                initiator=initiator,
                accepts=proposal.id,
                edited=edited,
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
        from yak.memory import provenance

        proposal = await self.get_proposal(workspace_id, proposal_id)
        base = await self.version_text(workspace_id, proposal.base_version)
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
        from yak.events import ProposalsChanged  # see _write on these imports

        self._bus.publish(ProposalsChanged(workspace_id, len(pending)))

    async def version_text(self, workspace_id: str, version: int) -> str:
        """The text of ``version`` of the document (``""`` for version 0, or a version whose
        revision is gone)."""
        if version <= 0:
            return ""
        current = await self.read(workspace_id)
        if current.version == version:
            return current.content
        try:
            return (await self.get_revision(workspace_id, str(version))).content
        except YakError:
            return ""

    async def record_attempt(
        self, outcome: RefreshOutcome, *, base_version: int, rebuild: bool = False
    ) -> RefreshAttempt:
        """Store a refresh attempt (every one, applied or not)."""
        return await self._offload(
            self._attempts.record, outcome, base_version=base_version, rebuild=rebuild
        )

    async def _write(
        self,
        workspace_id: str,
        text: str,
        *,
        expected_version: int | None,
        source: RevisionSource,
        initiator: object | None = None,
        flags: tuple[str, ...] = (),
        model: str | None = None,
        session_ids: tuple[str, ...] = (),
        restored_from: str | None = None,
        watermarks: Mapping[str, str] | None = None,
        accepts: str | None = None,
        edited: bool = False,
        supersede: bool = False,
    ) -> MemoryDocument:
        """Write on a worker thread (one hop: the write and, with ``supersede``, the pending
        proposals superseded in the same transaction, then the kept file's path read when the
        version moved), publish
        ``MemoryChanged`` (and ``ProposalsChanged`` when some were superseded), then sync the
        kept file."""
        known = self._watched.get(workspace_id) if expected_version is None else expected_version

        def effects(base: str) -> WriteEffects:
            # The tombstones a write buries and lifts: an edited proposal is the person's text.
            from yak.memory import provenance

            return provenance.write_effects(base, text, RevisionSource.HAND if edited else source)

        def store() -> tuple[MemoryDocument, int]:
            # The write and the proposals it supersedes: one transaction.
            document = self._documents.write(
                workspace_id,
                text,
                expected_version=expected_version,
                source=source,
                flags=flags,
                model=model,
                session_ids=session_ids,
                restored_from=restored_from,
                watermarks=watermarks,
                effects=effects,
                accepts=accepts,
            )
            superseded = self._proposals.supersede_proposals(workspace_id) if supersede else 0
            return document, superseded

        def write() -> tuple[int, MemoryDocument, int, str | None]:
            # The version the write starts from, read first when nothing here knows it: writing
            # the text already stored changes no version and must publish nothing.
            before = known if known is not None else self._documents.read(workspace_id).version
            document, superseded = self._documents.together(store)
            kept = self._kept_file(workspace_id) if document.version != before else None
            return before, document, superseded, kept

        before, document, superseded, kept = await self._offload(write)
        # The event classes are imported where a write publishes them, so that a command that
        # only reads (``yak memory show``) does not define them all (see yak/bus.py).
        from yak.events import MemoryChanged, ProposalsChanged

        if superseded:
            self._bus.publish(ProposalsChanged(workspace_id, 0))
        if document.version != before:
            self._remember(workspace_id, document.version)
            if self._versions is not None:
                self._versions[workspace_id] = document.version
            self._bus.publish(
                MemoryChanged(
                    workspace_id,
                    document.version,
                    str(source),
                    initiator,
                    updated_at=document.updated_at,
                )
            )
            if kept is not None:
                await self._sync_kept_file(workspace_id, document, kept)
        return document

    # --- keeping an instruction file in sync ---------------------------------------------------
    async def keep_in_sync(self, workspace_id: str, path: str) -> SyncResult:
        """Keep the file at ``path`` (``AGENTS.md``, ``CLAUDE.md``…; relative to the current
        folder) in sync from now on: its managed block is written now and after every applied
        revision (``yak.memory.sync``). Nothing is stored when the first write fails.

        Returns:
            What the write now did.

        Raises:
            UsageError: the file cannot be read or written, is not UTF-8, or its markers are
                not one block. WorkspaceNotFound: unknown id.
        """
        from yak.memory.sync import sync_file

        target = os.path.abspath(path)
        document = await self.read(workspace_id)
        previous = (await self._offload(self._workspaces.get, workspace_id)).synced_file
        # Stored first: a database that cannot be written refuses before the file is touched.
        await self._offload(self._workspaces.set_synced_file, workspace_id, target)
        try:
            result = await self._offload(sync_file, target, document.content)
        except YakError:
            await self._offload(self._workspaces.set_synced_file, workspace_id, previous)
            raise
        log.info("workspace %s keeps %s in sync", workspace_id, target)
        return result

    async def stop_keeping_in_sync(self, workspace_id: str) -> str | None:
        """Stop keeping a file in sync (the file stays as it is); returns its path, or
        ``None`` when none was kept. Raises ``WorkspaceNotFound`` for an unknown id."""
        workspace = await self._offload(self._workspaces.get, workspace_id)
        if workspace.synced_file is not None:
            await self._offload(self._workspaces.set_synced_file, workspace_id, None)
        return workspace.synced_file

    def _kept_file(self, workspace_id: str) -> str | None:
        """The file the workspace keeps in sync, or ``None`` (also when the workspace cannot be
        read: the revision is stored already, and this is logged)."""
        try:
            return self._workspaces.get(workspace_id).synced_file
        except YakError as exc:
            log.warning("cannot read workspace %s to sync its file: %s", workspace_id, exc)
            return None

    async def _sync_kept_file(self, workspace_id: str, document: MemoryDocument, path: str) -> None:
        """After an applied revision, write it into the workspace's kept file at ``path``. A
        failure is logged and published (``SyncedFileFailed``), never raised: the revision is
        stored already."""
        from yak.memory.sync import sync_file  # loaded only for a workspace that keeps a file

        try:
            await self._offload(sync_file, path, document.content)
        except YakError as exc:
            # said to the user through SyncedFileFailed (a stderr line, the status bar)
            log.info("keeping %s in sync failed: %s", path, exc)
            from yak.events import SyncedFileFailed  # see _write on these imports

            self._bus.publish(SyncedFileFailed(workspace_id, document.version, path, str(exc)))

    # --- export -------------------------------------------------------------------------------
    async def export_bytes(
        self, workspace: Workspace, fmt: str = "text", *, stored: bool = True
    ) -> bytes:
        """The document as ``text`` (exact UTF-8, LF, no BOM), ``markdown`` (under a title) or
        ``json`` (with its metadata and history).

        Args:
            stored: ``False`` for a folder Yak never stored (an empty document, no history).

        Raises:
            UsageError: an unknown format.
        """
        if fmt not in rules.EXPORT_FORMATS:
            raise UsageError(
                f"Unknown export format {fmt!r}; use one of: {', '.join(rules.EXPORT_FORMATS)}."
            )
        if stored:
            document = await self._offload(self._documents.read, workspace.id)
            history = await self.history(workspace.id) if fmt == "json" else []
        else:
            document = MemoryDocument(
                workspace_id=workspace.id, content="", version=0, updated_at=None
            )
            history = []
        return rules.export_document(
            workspace, document, history, fmt, exported_at=datetime.now(UTC)
        )

    async def export_file(
        self,
        workspace: Workspace,
        path: str | os.PathLike[str],
        fmt: str = "text",
        *,
        force: bool = False,
        stored: bool = True,
    ) -> int:
        """Write :meth:`export_bytes` to ``path``; returns the number of bytes written.

        Args:
            force: overwrite an existing file.

        Raises:
            UsageError: the file exists and ``force`` is false, its folder is missing, or it
                cannot be written; the format is unknown.
        """
        data = await self.export_bytes(workspace, fmt, stored=stored)
        await self._offload(write_output_file, Path(path), data, force=force)
        return len(data)

    # --- writes by other processes ------------------------------------------------------------
    def start_watching(self) -> None:
        """Start the task that notices writes by other processes (idempotent)."""
        if self._watcher is None or self._watcher.done():
            self._watcher = spawn(self._watch(), name="memory-external-watcher")

    def stop_watching(self) -> None:
        """Cancel the watcher task (no waiting)."""
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None

    async def _watch(self) -> None:
        import asyncio

        while True:
            await asyncio.sleep(self._poll_interval_s)
            try:
                await self.check_external_changes()
            except YakError as exc:  # a busy or vanished database: try again next tick
                log.warning("checking for external memory changes failed: %s", exc)

    async def check_external_changes(self) -> list[str]:
        """One watcher step; returns the ids of the workspaces whose document changed.

        ``data_version`` is per connection and connections come from a pool, so a move is only
        a hint; the version comparison decides. The first step learns the versions (it reports
        only the workspaces a view has read); writes through this service update the known
        versions first, so they are not reported twice.
        """
        data_version = await self._offload(self._documents.data_version)
        if data_version == self._last_data_version:
            return []
        self._last_data_version = data_version
        versions = await self._offload(self._documents.versions)
        first_step = self._versions is None
        known_versions = self._versions or {}
        self._versions = dict(versions)
        changed = []
        for workspace_id, version in versions.items():
            known = self._watched.get(workspace_id, known_versions.get(workspace_id))
            if version == known or (known is None and (first_step or version == 0)):
                continue
            if workspace_id in self._watched:
                self._watched[workspace_id] = version
            changed.append(workspace_id)
            from yak.events import MemoryChanged  # see _write on these imports

            self._bus.publish(MemoryChanged(workspace_id, version, "external", None))
        return changed

    def _remember(self, workspace_id: str, version: int) -> None:
        self._watched[workspace_id] = version
        self._watched.move_to_end(workspace_id)
        while len(self._watched) > WATCHED_LIMIT:
            self._watched.popitem(last=False)

    def forget(self, workspace_id: str) -> None:
        """Stop watching a workspace (it was re-attached under another id)."""
        self._watched.pop(workspace_id, None)


def _merge(*groups: tuple[str, ...]) -> tuple[str, ...]:
    merged: list[str] = []
    for group in groups:
        merged += [flag for flag in group if flag not in merged]
    return tuple(merged)


def read_input_file(path: Path) -> bytes:
    """The bytes of a file the user named (at most ``MAX_INPUT_BYTES``).

    Raises:
        UsageError: missing, a folder, or unreadable (one line naming it).
        CeilingExceeded: larger than any memory document can be.
    """
    try:
        with path.open("rb") as handle:
            return rules.read_capped(handle, str(path))
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder, not a file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def write_output_file(path: Path, data: bytes, *, force: bool) -> None:
    """Write ``data`` to a file the user named; without ``force`` an existing file is refused
    (the desktop app asks first and passes ``force``).

    Raises:
        UsageError: it exists (without ``force``), is a folder, its folder is missing, or it
            cannot be written. Nothing is written then.
    """
    try:
        with open(path, "wb" if force else "xb") as out:
            out.write(data)
    except FileExistsError:
        if path.is_dir():  # ("xb" says only that the name is taken)
            raise UsageError(f"{path} is a folder; give a file name") from None
        raise UsageError(f"{path} already exists; use --force to overwrite it") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a folder; give a file name") from None
    except FileNotFoundError:
        raise UsageError(f"cannot write {path}: its folder does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
