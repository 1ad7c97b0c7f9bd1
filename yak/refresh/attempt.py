"""One refresh attempt's record (``docs/refresh.md``, "The refresh"): what it works from
(:class:`Input`), what it stores once decided (:class:`Store`), and the outcome its steps fill
in (:class:`Attempt`). Shared by the refresher's steps (``yak.refresh.refresher``) and the
model conversation (``yak.refresh.asking``)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from yak.config import Settings
from yak.domain import ChatMessage, LineOrigin, MemoryDocument, RefreshOutcome, Workspace
from yak.linediff import line_changes
from yak.memory.freshness.workspace import WorkspaceFacts
from yak.memory.judging.per_line import Decision
from yak.memory.judging.pipeline import Judgement
from yak.memory.judging.said import Passage
from yak.memory.prompts.transcript import Transcript


@dataclass(frozen=True)
class Input:
    """What one attempt works from, read in one worker-thread hop."""

    workspace: Workspace
    document: MemoryDocument
    messages: list[ChatMessage]
    transcript: Transcript
    origins: list[LineOrigin]  # of the document's lines ([] when unknown)
    tombstones: dict[str, str]  # folded key -> the line as the person had it
    client_from: Hashable  # what the model client would be built from now (KeptModelClient)
    passages: tuple[Passage, ...] = ()  # the folded conversations, for grounding each line
    facts: WorkspaceFacts | None = None  # what the workspace folder shows, for grounding too
    stale: tuple[str, ...] = ()  # lines not said or confirmed for the threshold (the prompt's)


class Store(Enum):
    """What an attempt stores once decided (besides the attempt itself)."""

    NOTHING = "nothing"
    WATERMARKS = "watermarks"  # the messages are marked folded; no revision
    PROPOSAL = "proposal"  # the rewrite waits for review
    REWRITE = "rewrite"  # the rewrite is applied on the version it was based on
    SPLIT = "split"  # its supported part is applied, and the rest waits for review on top of it


@dataclass
class Attempt:
    """One attempt's record, filled in by its steps (read → ask → decide → store); the
    outcome is recorded once, whichever step decided it."""

    data: Input
    settings: Settings  # when the attempt started (model, floor)
    rebuild: bool
    outcome: RefreshOutcome  # so far
    store: Store | None = None  # once decided
    reply: Judgement | None = None  # once the model answered
    decision: Decision | None = None  # once a reply passed the guards: what is applied, held

    @property
    def workspace_id(self) -> str:
        return self.outcome.workspace_id

    @property
    def base_version(self) -> int:
        """The version the attempt read (and writes against)."""
        return self.data.document.version

    def answered(self, reply: Judgement, **changes: Any) -> None:
        """Keep the model's judged reply, with the outcome's ``changes``."""
        previous = self.data.document.content
        added, removed = line_changes(previous, reply.text) if reply.text else (0, 0)
        self.reply = reply
        self.update(reply=reply.text or reply.raw, added=added, removed=removed, **changes)

    def update(self, **changes: Any) -> None:
        """Change the outcome so far."""
        self.outcome = replace(self.outcome, **changes)

    def decide(self, store: Store, **changes: Any) -> None:
        """Decide what is stored, with the outcome's ``changes``."""
        self.store = store
        self.update(**changes)
