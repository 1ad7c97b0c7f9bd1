"""The system prompt of a turn, read from the stores: the session block taken once per
session, and the note of a hand edit of the memory made since ("The agent" in
docs/agent.md; the blocks themselves are built by ``yak.agent.messages``).

Blocking reads and writes of the repositories: run it on a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from yak.agent.instructions import cut_files, instructions_block, read_instruction_files
from yak.agent.messages import memory_edit_note, session_block, system_blocks
from yak.agent.types import CutFile
from yak.config import DEFAULT_STALE_AFTER_DAYS
from yak.domain import ChatSession, MemoryDocument, RevisionSource, Workspace
from yak.memory.freshness.age import LineAge, age_notes
from yak.memory.freshness.references import DEFAULT_DEADLINE_S, check_references, gone_notes
from yak.memory.prompts.injection import OPEN_TAG
from yak.memory.reading import read_line_ages
from yak.ports import ConversationRepository, DocumentRepository, WorkspaceRepository
from yak.references import ReferenceCheck


@dataclass(frozen=True)
class TurnPrompt:
    """What a turn starts from.

    Attributes:
        system: the system blocks (static instructions, then the session block).
        note: a :data:`~yak.agent.messages.MEMORY_NOTE` block to store before the prompt, or
            ``None`` when there is nothing to tell.
        loaded: the names of the instruction files read into a session block taken now
            (``()`` on later turns).
        cut: those of them the block holds only part of (``cut_files``).
        references: the memory's references checked against the workspace for a session
            block taken now with a memory in it (``None`` otherwise), and the version checked.
    """

    system: list[dict[str, Any]]
    note: dict[str, Any] | None
    loaded: tuple[str, ...]
    cut: tuple[CutFile, ...] = ()
    references: tuple[int, ReferenceCheck] | None = None


def turn_prompt(
    conversations: ConversationRepository,
    workspaces: WorkspaceRepository,
    documents: DocumentRepository,
    *,
    workspace_id: str,
    session_id: str,
    today: Callable[[], datetime] | None = None,
    deadline_seconds: float = DEFAULT_DEADLINE_S,
    stale_after_days: int = DEFAULT_STALE_AFTER_DAYS,
    line_ages: Callable[[str], list[LineAge]] | None = None,
) -> TurnPrompt:
    """The system blocks of a turn, with the session block taken (and stored with the session)
    now when the session has none yet, and the note of a hand edit of the memory made since it
    was taken.

    Memory switched off takes effect at once ("Memory off" in docs/memory.md): a session
    block that still carries the memory block is taken again without it (the date stays the
    session's first day; the one cache miss is accepted). Switched on again, the memory
    reaches the next session, not this one.

    A session block taken with a memory in it marks each line whose reference is gone ("not
    found in the workspace on DATE: …", "Checked at use" in docs/memory.md), checked within
    ``deadline_seconds``, and carries the document's date and the month of every line not said
    or confirmed for ``stale_after_days`` days ("Age and staleness"), from
    ``line_ages(workspace_id)`` (blocking; default: read from ``documents``). The block is
    stored, so every turn sends the same bytes."""
    workspace = workspaces.get(workspace_id)
    document = documents.read(workspace.id)
    session = conversations.get_session(session_id)
    loaded: tuple[str, ...] = ()
    stale = session.prompt_snapshot
    if stale is not None and (workspace.memory_enabled or OPEN_TAG not in stale):
        stale = None  # the snapshot stands
    cut: tuple[CutFile, ...] = ()
    references: tuple[int, ReferenceCheck] | None = None
    if session.prompt_snapshot is None or stale is not None:
        files = read_instruction_files(workspace.path)
        loaded = tuple(f.name for f in files)
        cut = cut_files(files)
        started = session.created_at.astimezone() if stale is not None else None
        day = started or (today() if today else datetime.now().astimezone())
        memory = document.content if workspace.memory_enabled else ""
        notes: dict[int, tuple[str, ...]] = {}
        if memory.strip():
            check = check_references(
                memory, Path(workspace.path), today=day.date(), deadline_seconds=deadline_seconds
            )
            references = (document.version, check)
            ages = line_ages(workspace.id) if line_ages else read_line_ages(documents, workspace.id)
            aged = age_notes(ages, today=day.date(), after_days=stale_after_days)
            gone = gone_notes(check, today=day.date())
            notes = {i: (*gone.get(i, ()), *aged.get(i, ())) for i in gone.keys() | aged.keys()}
        block = session_block(
            workspace_path=workspace.path,
            memory=memory,
            memory_enabled=workspace.memory_enabled,
            instructions=instructions_block(files),
            memory_notes=notes,
            memory_date=document.updated_at.astimezone().date() if document.updated_at else None,
            today=day,
        )
        session = conversations.take_prompt_snapshot(
            session_id, block, document.version, replacing=stale
        )
    assert session.prompt_snapshot is not None
    note = memory_note(documents, session, workspace, document)
    return TurnPrompt(system_blocks(session.prompt_snapshot), note, loaded, cut, references)


def memory_note(
    documents: DocumentRepository,
    session: ChatSession,
    workspace: Workspace,
    document: MemoryDocument,
) -> dict[str, Any] | None:
    """A :data:`~yak.agent.messages.MEMORY_NOTE` block with the current document when a person
    changed it (hand, import, restore, clear) after the session block was taken and after the
    last note; refreshes alone are never noted (they reach the next session)."""
    if not workspace.memory_enabled:
        return None
    seen = max(session.snapshot_memory_version or 0, session.noted_memory_version or 0)
    if document.version <= seen:
        return None
    for revision in documents.history(workspace.id):  # newest first
        if revision.version <= seen:
            break
        if revision.source is not RevisionSource.REFRESH:
            return memory_edit_note(document.content, document.version)
    return None
