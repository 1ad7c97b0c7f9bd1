"""The memory service: the only writer of memory documents and the only publisher of
``MemoryChanged`` (see ``docs/memory.md``, "The memory document"); the reads are
:class:`yak.memory.reading.MemoryReader`'s.

A write passes the document rules (hand text normalized and checked against the ceiling;
imports decoded and unwrapped; rewrites checked again as a last net), then the repository's
optimistic write on the version it was based on. One that produced a new version publishes
``MemoryChanged(workspace_id, version, source, initiator)`` once, on the event-loop thread (a
view skips the change it initiated), then rewrites the workspace's kept file. A write by another
process, noticed by the watcher (``yak.memory.watcher``), is published with ``source="external"``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from yak.aio import Offload, to_thread
from yak.domain import (
    MemoryDocument,
    Proposal,
    ProposalStatus,
    RefreshAttempt,
    RefreshOutcome,
    ReviewMode,
    RevisionSource,
    Workspace,
)
from yak.errors import UsageError, YakError
from yak.events import MemoryChanged, ProposalsChanged, WorkspaceChanged
from yak.evidence import Evidence
from yak.linediff import line_changes
from yak.memory import document as rules
from yak.memory.files import read_input_file
from yak.memory.history import provenance
from yak.memory.history.merge import merge3
from yak.memory.reading import MemoryReader
from yak.memory.sharing.kept_file import KeptFile
from yak.memory.watcher import MemoryWatcher

if TYPE_CHECKING:
    from yak.bus import EventBus
    from yak.ports import (
        AttemptRepository,
        DocumentRepository,
        ProposalStore,
        SearchIndex,
        WorkspaceRepository,
        WriteOptions,
    )


class MemoryService(MemoryReader):
    """Memory documents, their history and refresh attempts, for every front end.

    Args:
        workspaces: the stored workspaces.
        documents: the documents, revisions and watermarks.
        proposals: the rewrites waiting for review.
        attempts: the refresh attempts.
        bus: where ``MemoryChanged`` is published.
        poll_interval_s: seconds between two checks for writes by another process.
        search_index: finds the documents that may contain a text.
        offload: runs each repository or file call (``yak.aio``): on a worker thread, or in
            place for a command that only reads.

    Attributes:
        kept_file: the file each workspace keeps in sync.
        watcher: notices writes by other processes.
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
        watcher = MemoryWatcher(
            documents,
            changed=self._changed_elsewhere,
            proposals_changed=self._proposals_changed_elsewhere,
            settings_changed=self._settings_changed_elsewhere,
            poll_interval_s=poll_interval_s,
            offload=offload,
        )
        super().__init__(
            workspaces=workspaces,
            documents=documents,
            attempts=attempts,
            search_index=search_index,
            watcher=watcher,
            offload=offload,
        )
        self._bus = bus
        self._proposals = proposals
        self.kept_file = KeptFile(
            workspaces=workspaces, documents=documents, bus=bus, offload=offload
        )

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

    async def keep_lines(self, workspace_id: str, lines: Sequence[int]) -> datetime:
        """Record that a person confirmed lines of the current document still hold ("Age and
        staleness" in docs/memory.md): their age counts from now, so they leave the stale list.
        The document is not written.

        Args:
            lines: 1-based line numbers of the current document.

        Returns:
            The time of the confirmation (UTC).

        Raises:
            UsageError: a number that is not a non-blank line of the document.
        """
        document = await self.read(workspace_id)
        texts = _chosen_lines(document.content, lines)
        keys = [provenance.fold_line(text) for text in texts]
        return await self._offload(self._documents.confirm_lines, workspace_id, keys)

    async def remove_lines(
        self, workspace_id: str, lines: Sequence[int], *, initiator: object | None = None
    ) -> MemoryDocument:
        """A hand edit of the current document that removes ``lines`` (1-based): each removed
        line gets its tombstone, like any hand removal (:meth:`save`).

        Raises:
            UsageError: a number that is not a non-blank line of the document.
            ConflictError: the document changed while this was written.
        """
        document = await self.read(workspace_id)
        _chosen_lines(document.content, lines)
        gone = set(lines)
        kept = [
            line
            for number, line in enumerate(document.content.split("\n"), 1)
            if number not in gone
        ]
        return await self.save(
            workspace_id, "\n".join(kept), expected_version=document.version, initiator=initiator
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
        text = imported_text(data, source_name=source_name)
        return await self._write(
            workspace_id,
            text,
            expected_version=expected_version,
            source=RevisionSource.IMPORT,
            initiator=initiator,
        )

    async def read_import(self, path: str | os.PathLike[str]) -> tuple[bytes, str]:
        """Read a file for an import without writing anything (a preview before Import).

        Returns:
            The file's bytes (what :meth:`import_bytes` then takes, so the file is read once)
            and the document they import as.

        Raises:
            UsageError: unreadable, not text, or empty. CeilingExceeded: over the ceiling.
        """
        data = await self._offload(read_input_file, Path(path))
        return data, imported_text(data, source_name=Path(path).name)

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
        evidence: Sequence[Evidence] = (),
    ) -> MemoryDocument:
        """Apply a refresh's rewrite that passed the guards, advancing the session watermarks
        in the same transaction. The ceiling is checked again here as a last net. Refresh
        proposals still waiting become ``superseded``; the others are rebased (every write).

        ``evidence``: the passages behind the lines it adds or changes, stored with the
        revision; an entry whose ``line`` is not a line of the text, exactly, is left out
        ("Evidence" in docs/memory.md).

        Raises:
            ConflictError: the document changed since ``base_version`` (superseded).
            CeilingExceeded: over the ceiling. Nothing is written either way.
        """
        prepared = rules.normalize_newlines(text)
        rules.check_text(prepared)
        rules.check_ceiling(prepared)
        return await self._write(
            workspace_id,
            prepared,
            expected_version=base_version,
            source=RevisionSource.REFRESH,
            flags=flags,
            model=model,
            session_ids=session_ids,
            watermarks=watermarks,
            evidence=provenance.evidence_kept(evidence, prepared),
            # A refresh proposal still waiting was made on an older version, and this rewrite
            # folded its conversations too: it leaves the inbox. An agent's stays (rebased).
            supersede=True,
        )

    async def advance_watermarks(self, watermarks: Mapping[str, str]) -> None:
        """Mark messages as folded without a write (they had nothing to remember)."""
        await self._offload(self._documents.advance_watermarks, watermarks)

    async def apply_proposal(
        self,
        proposal: Proposal,
        text: str,
        *,
        edited: bool,
        on_version: int | None = None,
        initiator: object | None = None,
    ) -> MemoryDocument:
        """Write an accepted proposal (``yak.memory.inbox.review``) as a ``proposal`` revision on
        its base version, advancing the watermarks of the conversations it folded in the same
        transaction; ``edited``: ``text`` is the person's edit of it (flag ``edited``, status
        ``edited``). The proposal records the version it became. ``on_version``: write on
        this version instead (a conflicting proposal the person edited onto the current one).
        The revision keeps the proposal's evidence for the lines still in ``text`` (the same
        line, exactly: a line the person reworded has none).

        Raises:
            ConflictError: the document changed since the base version, or the proposal is no
                longer pending. CeilingExceeded.
        """
        return await self._write(
            proposal.workspace_id,
            text,
            expected_version=proposal.base_version if on_version is None else on_version,
            source=RevisionSource.PROPOSAL,
            flags=rules.merge_flags(proposal.flags, ("edited",) if edited else ()),
            model=proposal.model,
            session_ids=proposal.session_ids,
            watermarks=proposal.watermarks,
            initiator=initiator,
            accepts=proposal.id,
            accepted_as=ProposalStatus.EDITED if edited else ProposalStatus.ACCEPTED,
            evidence=provenance.evidence_kept(proposal.evidence, text),
            edited=edited,
        )

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
        initiator: object | None = None,
        edited: bool = False,
        supersede: bool = False,
        **options: Unpack[WriteOptions],
    ) -> MemoryDocument:
        """Write on a worker thread (one hop: the write and, with ``supersede``, the pending
        refresh proposals superseded, and the other pending proposals rebased onto the new
        version, all in the same transaction; then the kept file's path read when the version
        moved), publish ``MemoryChanged`` (and ``ProposalsChanged`` when the inbox changed),
        then sync the kept file. ``options``: the repository's write options."""
        source, expected_version = options["source"], options["expected_version"]
        known = self.watcher.known(workspace_id) if expected_version is None else expected_version
        # The tombstones a write buries and lifts: an edited proposal is the person's text.
        buries_as = RevisionSource.HAND if edited else source
        options["effects"] = lambda base: provenance.write_effects(base, text, buries_as)

        def store() -> tuple[MemoryDocument, int]:
            # The write, the proposals it supersedes and those it rebases: one transaction.
            document = self._documents.write(workspace_id, text, **options)
            superseded = self._proposals.supersede_proposals(workspace_id) if supersede else 0
            return document, superseded + self._rebase_pending(workspace_id, document)

        def write() -> tuple[int, MemoryDocument, int | None, str | None]:
            # The version the write starts from, read first when nothing here knows it: writing
            # the text already stored changes no version and must publish nothing.
            before = known if known is not None else self._documents.read(workspace_id).version
            document, changed = self._documents.together(store)
            pending = len(self._proposals.proposals(workspace_id)) if changed else None
            kept = self.kept_file.path(workspace_id) if document.version != before else None
            return before, document, pending, kept

        before, document, pending, kept = await self._offload(write)
        if pending is not None:
            self._bus.publish(ProposalsChanged(workspace_id, pending))
        if document.version != before:
            self.watcher.written(workspace_id, document.version)
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
                await self.kept_file.sync(document, kept)
        return document

    def _rebase_pending(self, workspace_id: str, document: MemoryDocument) -> int:
        """Move every pending proposal made on an older version onto ``document`` (a
        line-level three-way merge, ``yak.memory.history.merge``), or mark it as conflicting with
        this version when its lines touch lines changed since; nothing is ever dropped
        ("The inbox" in docs/memory.md). Returns how many proposals changed."""
        moved: list[Proposal] = []
        for proposal in self._proposals.proposals(workspace_id):
            if proposal.base_version == document.version:
                continue
            merged = None
            base = self._text_of(workspace_id, proposal.base_version)
            if base is not None:
                merged = merge3(base, proposal.content, document.content)
            if merged is None:
                if proposal.conflicts_with != document.version:
                    moved.append(replace(proposal, conflicts_with=document.version))
                continue
            added, removed = line_changes(document.content, merged)
            moved.append(
                replace(
                    proposal,
                    base_version=document.version,
                    content=merged,
                    added=added,
                    removed=removed,
                    conflicts_with=None,
                )
            )
        return self._proposals.rebase_proposals(moved) if moved else 0

    def _text_of(self, workspace_id: str, version: int) -> str | None:
        """The text of an older ``version`` (``""`` for 0), ``None`` when its revision is gone."""
        if version <= 0:
            return ""
        try:
            return self._documents.get_revision(workspace_id, str(version)).content
        except YakError:
            return None

    def _changed_elsewhere(self, workspace_id: str, version: int) -> None:
        """The watcher found ``version`` written by another process."""
        self._bus.publish(MemoryChanged(workspace_id, version, "external", None))

    def _proposals_changed_elsewhere(self, workspace_id: str, waiting: int) -> None:
        """The watcher found other proposals waiting (``waiting`` of them)."""
        self._bus.publish(ProposalsChanged(workspace_id, waiting))

    def _settings_changed_elsewhere(self, workspace_id: str) -> None:
        """The watcher found the workspace's settings changed."""
        self._bus.publish(WorkspaceChanged(workspace_id))


def imported_text(data: bytes, *, source_name: str | None) -> str:
    """The document a file's bytes import as: decoded (UTF-8/16/32, BOM, CRLF), unwrapped when
    it is Yak's own export (``source_name`` tells a Markdown export by its title line).

    Raises:
        UsageError: not text, or empty. CeilingExceeded: over the ceiling.
    """
    text = rules.decode_import(data, what=source_name or "The file")
    rules.check_not_empty(text)
    text = rules.unwrap_export(text, source_name)
    rules.check_not_empty(text)
    rules.check_ceiling(text)
    return text


def _chosen_lines(content: str, lines: Sequence[int]) -> list[str]:
    """The texts of the 1-based ``lines`` of ``content``.

    Raises:
        UsageError: a number that is not a non-blank line of ``content``.
    """
    document_lines = content.splitlines()
    texts = []
    for number in lines:
        if not 1 <= number <= len(document_lines) or not document_lines[number - 1].strip():
            raise UsageError(
                f"Line {number} is not a line of the memory document "
                f"({len(document_lines)} lines; 'yak memory stale' numbers them)."
            )
        texts.append(document_lines[number - 1])
    return texts
