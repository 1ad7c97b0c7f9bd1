"""Evidence: the passage of a folded conversation that backs a memory line, and who said it
("Evidence" in docs/memory.md). Plain values, no I/O; revisions, line origins and proposals
carry them (``yak.domain``)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Speaker(StrEnum):
    """Who said a passage that backs a memory line ("Evidence" in docs/memory.md): a person,
    the assistant, a tool call the assistant made (an observation of the project), or the
    workspace folder itself (a path, a file name, a language its files show, a name in its
    manifest: the quote then says where, ``pyproject.toml``)."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    WORKSPACE = "workspace"


@dataclass(frozen=True)
class Evidence:
    """The passage of a folded conversation that backs one memory line a refresh added or
    changed ("Evidence" in docs/memory.md).

    Attributes:
        line: the memory line it backs, exactly as stored.
        session_id: the conversation (``ses_…``; ``""`` for the workspace).
        message_id: the message in it (``msg_…``; ``""`` for the workspace).
        speaker: who said it (a person's words count above the assistant's).
        quote: the passage, at most ``EVIDENCE_QUOTE_CHARS`` characters, on one line.
        verified: the memory model named this passage (a tool-form quote) and Yak found it
            in that conversation (``yak.memory.judging.quotes``); ``False`` when Yak found the
            passage itself from the line's words.
    """

    line: str
    session_id: str
    message_id: str
    speaker: Speaker
    quote: str
    verified: bool = False


EVIDENCE_QUOTE_CHARS = 200  # the longest quote an evidence passage keeps (characters)
