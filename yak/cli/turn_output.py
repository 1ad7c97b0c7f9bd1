"""What ``yak ask`` prints: the reply streamed to stdout, each finished tool call and the
instruction files read as one line each on stderr, a turn's problem, and the memory refresh
that follows the turn."""

from __future__ import annotations

import sys

from yak.agent.instructions import loaded_line
from yak.agent.types import AgentEvent, InstructionsLoaded, TextDelta, ToolCallFinished
from yak.cli.terminal import one_line_message, quiet_warnings
from yak.domain import RefreshOutcome
from yak.presenters import REFRESH_SKIPPED, REFRESHING_AFTER_TURN, turn_refresh_line

__all__ = [
    "TurnPrinter",
    "quiet_warnings",
    "refresh_after_turn",
    "refresh_after_turn_failed",
    "turn_problem",
]


class TurnPrinter:
    """Streams a turn's reply text to stdout and each finished tool call to stderr as one
    ``[tool] target: summary`` line, keeping the two apart; the instruction files a new
    conversation read are one ``Instructions: AGENTS.md, …`` line on stderr."""

    def __init__(self) -> None:
        self.mid_line = False  # stdout has text without its newline yet

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolCallFinished):
            self.end_line()
            print(f"[{event.tool}] {event.target}: {event.summary}", file=sys.stderr, flush=True)
        elif isinstance(event, InstructionsLoaded):
            self.end_line()
            print(loaded_line(event.files, event.cut), file=sys.stderr, flush=True)

    def end_line(self) -> None:
        """End a reply line left open (before an error line, or at the end of the turn)."""
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False


def turn_problem(message: str) -> None:
    """A turn that failed or was cut short: one ``yak: …`` line on stderr."""
    print(f"yak: {one_line_message(message)}", file=sys.stderr)


def refreshing() -> None:
    """The memory refresh after ``yak ask`` starts: one line on stderr, saying Ctrl-C skips
    it (``presenters.REFRESHING_AFTER_TURN``)."""
    print(REFRESHING_AFTER_TURN, file=sys.stderr, flush=True)


def refresh_skipped() -> None:
    """Ctrl-C skipped the memory refresh after ``yak ask``: one line on stderr."""
    print(REFRESH_SKIPPED, file=sys.stderr)


def refresh_after_turn(outcome: RefreshOutcome) -> None:
    """The memory refresh that follows ``yak ask``, one line on stderr (never its exit code)."""
    print(turn_refresh_line(outcome), file=sys.stderr)


def refresh_after_turn_failed(message: str) -> None:
    """The memory refresh after ``yak ask`` could not run: one ``yak: …`` line on stderr."""
    print(f"yak: memory refresh failed: {one_line_message(message)}", file=sys.stderr)
