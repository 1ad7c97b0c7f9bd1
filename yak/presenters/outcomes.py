"""What a refresh outcome is called where a word or two must do (a table cell, a stats line)."""

from __future__ import annotations

from yak.domain import RefreshStatus

# What a refresh outcome is called in a table cell (the reason, in the tooltip, says more).
_OUTCOME_LABELS: dict[str, str] = {
    RefreshStatus.APPLIED: "applied",
    RefreshStatus.UP_TO_DATE: "up to date",
    RefreshStatus.NEEDS_REVIEW: "awaiting review",
    RefreshStatus.REFUSED_FLOOR: "refused: too short",
    RefreshStatus.REFUSED_CEILING: "refused: too long",
    RefreshStatus.REFUSED_EMPTY: "refused: empty",
    RefreshStatus.REFUSED_PLACEHOLDER: "refused: placeholders",
    RefreshStatus.REFUSED_NOT_DOCUMENT: "refused: not a document",
    RefreshStatus.SUPERSEDED: "superseded",
    RefreshStatus.FAILED: "failed",
    RefreshStatus.PAUSED: "paused",
}


def outcome_label(status: str) -> str:
    """A refresh outcome as a person reads it, short enough for a table cell (the reason says
    more): ``"refused_floor"`` → ``"refused: too short"``; an unknown code with its
    underscores as spaces."""
    return _OUTCOME_LABELS.get(status, status.replace("_", " "))
