"""Whether the memory still holds, in words: its lines whose references are gone from the
workspace ("Checked at use" in docs/memory.md)."""

from __future__ import annotations

from yak.references import GoneReference, ReferenceCheck
from yak.text import plural

GAVE_UP_TEXT = "The workspace did not answer in time: the memory's references were not checked."


def gone_summary(check: ReferenceCheck) -> str:
    """The panel's line about ``check``: ``"2 lines name things that are gone"`` (``"1 line
    names something that is gone"``), the sentence for a check that gave up with nothing
    found, or ``""`` when every reference holds."""
    count = len(check.gone)
    if count == 1:
        return "1 line names something that is gone"
    if count:
        return f"{plural(count, 'line')} name things that are gone"
    return GAVE_UP_TEXT if check.gave_up else ""


def gone_detail(gone: GoneReference) -> str:
    """What a gone line names that is not there: ``"not found: scripts/bootstrap.sh"``."""
    return "not found: " + ", ".join(gone.missing)
