"""What checking a memory document's references against its workspace found ("Checked at use"
in docs/memory.md): plain values, no I/O. ``yak.memory.freshness.references`` checks; the agent
marks the lines for the model, and ``ReferencesChecked`` carries them to the panel, so they sit
below the core."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GoneReference:
    """A memory document line that names something the workspace no longer has.

    Attributes:
        index: the line's 0-based index in the document.
        line: the line, as stored.
        missing: how each missing reference is named (``("scripts/bootstrap.sh",)``).
    """

    index: int
    line: str
    missing: tuple[str, ...]


@dataclass(frozen=True)
class ReferenceCheck:
    """A memory document's references checked against its workspace folder ("Checked at use"
    in docs/memory.md; ``yak.memory.freshness.references``).

    Attributes:
        gone: the lines naming something that is not there, in document order.
        gave_up: the deadline passed (or the folder did not answer) before every reference
            was checked: ``gone`` holds only what was checked by then.
    """

    gone: tuple[GoneReference, ...] = ()
    gave_up: bool = False
