"""Pure helpers behind the memory panel and editor: status lines, relative times, counters."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from yak.domain import (
    QueueState,
    RefreshAttempt,
    RefreshOutcome,
    RefreshState,
    RefreshStatus,
    TokenUsage,
)
from yak.presenters import (
    PAUSED_TEXT,
    UNFOLDED_TEXT,
    UNFOLDED_TIP,
    describe_outcome,
    list_status,
    refresh_status,
)
from yak.ui.formatting import counter_text, relative_time

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


NO_KEY = "No Anthropic API key is set. Set ANTHROPIC_API_KEY or add a key in Settings › Provider."


def attempt(
    status: RefreshStatus, reason: str = "why", *, at: datetime = NOW, flags: tuple[str, ...] = ()
) -> RefreshAttempt:
    return RefreshAttempt(
        id="01J0000000000000000000000",
        workspace_id="ws_x",
        status=status,
        reason=reason,
        base_version=1,
        result_version=None,
        model="m",
        reply="reply",
        usage=TokenUsage(),
        duration_s=1.0,
        session_ids=(),
        flags=flags,
        created_at=at,
    )


def no_key_attempt() -> RefreshAttempt:
    return attempt(RefreshStatus.FAILED, NO_KEY, flags=("provider:no_key",))


def failed_for_want_of_a_key(**fields) -> RefreshState:
    """A snapshot whose last refresh failed because no API key was available."""
    return RefreshState("ws_x", last_attempt=no_key_attempt(), missing_key=True, **fields)


@pytest.mark.parametrize(
    ("state", "text", "action"),
    [
        (RefreshState("ws_x"), "up to date", None),
        (RefreshState("ws_x", state=QueueState.PENDING, due_in=8.2), "pending in 9 s", None),
        (RefreshState("ws_x", state=QueueState.PENDING, due_in=0.0), "pending in 0 s", None),
        (RefreshState("ws_x", state=QueueState.RUNNING), "refreshing…", "stop"),
        (
            RefreshState("ws_x", state=QueueState.RUNNING, running_for=12.7),
            "refreshing… 12 s",
            "stop",
        ),
        (
            RefreshState(
                "ws_x", last_attempt=attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150")
            ),
            "refused: kept 12 of 150",
            "view",
        ),
        (
            RefreshState("ws_x", last_attempt=attempt(RefreshStatus.FAILED, "rate limited")),
            "failed: rate limited",
            "retry",
        ),
        (RefreshState("ws_x", last_attempt=attempt(RefreshStatus.APPLIED)), "up to date", None),
        # An applied refresh that changed lines says how many, with its diff one click away.
        (
            RefreshState(
                "ws_x", last_attempt=replace(attempt(RefreshStatus.APPLIED), added=2, removed=1)
            ),
            "refreshed: +2 −1",
            "diff",
        ),
        # A proposal waiting wins over the last attempt.
        (
            RefreshState("ws_x", last_attempt=attempt(RefreshStatus.NEEDS_REVIEW), proposals=1),
            "1 change to review",
            "review",
        ),
        (RefreshState("ws_x", proposals=2), "2 changes to review", "review"),
        # A refresh refused or failed after the proposal is not hidden by it.
        (
            RefreshState(
                "ws_x",
                last_attempt=attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150"),
                proposals=1,
            ),
            "1 change to review · last refresh refused: kept 12 of 150",
            "review",
        ),
        (
            RefreshState(
                "ws_x", last_attempt=attempt(RefreshStatus.FAILED, "rate limited"), proposals=1
            ),
            "1 change to review · last refresh failed: rate limited",
            "review",
        ),
        # A hand edit after the refusal is the newest word.
        (
            RefreshState(
                "ws_x",
                last_attempt=attempt(RefreshStatus.REFUSED_CEILING),
                document_updated_at=NOW + timedelta(seconds=5),
            ),
            "up to date",
            None,
        ),
        # Conversations still waiting to be folded in (a hand edit after the refusal, a
        # trimmed save, a restore) are not "up to date".
        (
            RefreshState(
                "ws_x",
                last_attempt=attempt(RefreshStatus.REFUSED_CEILING),
                document_updated_at=NOW + timedelta(seconds=5),
                unfolded=True,
            ),
            "new conversations not folded in yet",
            None,
        ),
        (RefreshState("ws_x", unfolded=True), "new conversations not folded in yet", None),
        # Memory switched off says so, whatever the last attempt was.
        (
            RefreshState("ws_x", last_attempt=attempt(RefreshStatus.APPLIED), memory_enabled=False),
            "memory off: not used in conversations nor refreshed",
            None,
        ),
        # Running wins over the last attempt.
        (
            RefreshState(
                "ws_x", state=QueueState.RUNNING, last_attempt=attempt(RefreshStatus.FAILED)
            ),
            "refreshing…",
            "stop",
        ),
        # No API key: automatic refreshes wait (advice, with a way to add one) …
        (RefreshState("ws_x", state=QueueState.PAUSED), PAUSED_TEXT, "add_key"),
        (
            RefreshState(
                "ws_x", state=QueueState.PAUSED, last_attempt=attempt(RefreshStatus.REFUSED_FLOOR)
            ),
            PAUSED_TEXT,
            "add_key",
        ),
        # … a forced refresh that failed for want of a key says so, as advice …
        (
            failed_for_want_of_a_key(state=QueueState.PAUSED),
            f"failed: {NO_KEY}",
            "add_key",
        ),
        (
            failed_for_want_of_a_key(key_available=False),
            f"failed: {NO_KEY}",
            "add_key",
        ),
        # … until a key is there: then it is a failure to retry like any other.
        (
            failed_for_want_of_a_key(key_available=True),
            f"failed: {NO_KEY}",
            "retry",
        ),
        # A pending run (a key was just added) wins over the pause.
        (
            failed_for_want_of_a_key(state=QueueState.PENDING, due_in=3.0),
            "pending in 3 s",
            None,
        ),
    ],
)
def test_status_line(state, text, action):
    line = refresh_status(state)
    assert (line.text, line.action) == (text, action)


def test_outcome_sentence():
    applied = RefreshOutcome(
        status=RefreshStatus.APPLIED, reason="", workspace_id="ws_x", version=4, lines=57
    )
    refused = RefreshOutcome(
        status=RefreshStatus.REFUSED_FLOOR,
        reason="kept 12 of 150 lines",
        workspace_id="ws_x",
        version=3,
        lines=150,
    )
    assert describe_outcome(applied) == "Refreshed: version 4, 57 lines"
    assert describe_outcome(refused) == "Refresh refused: kept 12 of 150 lines"


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(seconds=10), "just now"),
        (timedelta(minutes=1), "1 minute ago"),
        (timedelta(minutes=5), "5 minutes ago"),
        (timedelta(hours=3), "3 hours ago"),
        (timedelta(days=1, hours=2), "yesterday"),
        (timedelta(days=12), "12 days ago"),
    ],
)
def test_relative_time(delta, text):
    assert relative_time(NOW - delta, NOW) == text
    assert relative_time(None, NOW) == "never"


def test_counter_is_over_past_either_limit_and_not_at_it():
    assert counter_text("a\n" * 200) == ("200 / 200 lines · 400 / 25,000 characters", False)
    assert counter_text("a\n" * 201)[1] is True
    assert counter_text("x" * 25_000)[1] is False
    assert counter_text("x" * 25_001)[1] is True
    assert counter_text("")[0].startswith("0 / 200 lines")


@pytest.mark.parametrize(
    ("last", "kwargs", "cell"),
    [
        (None, {}, ("", "")),
        (None, {"paused": True}, ("paused", PAUSED_TEXT)),
        (
            attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150"),
            {},
            ("refused: too short", "kept 12 of 150"),
        ),
        (attempt(RefreshStatus.FAILED, "rate limited"), {}, ("failed", "rate limited")),
        (
            attempt(RefreshStatus.SUPERSEDED, "changed twice"),
            {},
            ("superseded", "changed twice"),
        ),
        (
            attempt(RefreshStatus.APPLIED, "folded 3 messages"),
            {},
            ("up to date", "folded 3 messages"),
        ),
        (
            attempt(RefreshStatus.UP_TO_DATE, "nothing new"),
            {},
            ("up to date", "nothing new"),
        ),
        # A hand edit after the refusal is the newest word …
        (
            attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150"),
            {"updated_at": NOW + timedelta(seconds=1)},
            ("up to date", "The memory was written after the last refresh."),
        ),
        # … an edit before it is not.
        (
            attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150"),
            {"updated_at": NOW - timedelta(seconds=1)},
            ("refused: too short", "kept 12 of 150"),
        ),
        # Waiting for a key wins over an older outcome.
        (
            attempt(RefreshStatus.FAILED, "rate limited"),
            {"paused": True},
            ("paused", PAUSED_TEXT),
        ),
        # Conversations not folded in yet are never "up to date": after a hand edit over a
        # refusal (a trimmed save), after an applied refresh, or before any refresh …
        (
            attempt(RefreshStatus.REFUSED_CEILING, "240 lines"),
            {"updated_at": NOW + timedelta(seconds=1), "unfolded": True},
            (UNFOLDED_TEXT, UNFOLDED_TIP),
        ),
        (
            attempt(RefreshStatus.APPLIED, "folded 3 messages"),
            {"unfolded": True},
            (UNFOLDED_TEXT, UNFOLDED_TIP),
        ),
        (None, {"unfolded": True}, (UNFOLDED_TEXT, UNFOLDED_TIP)),
        # … while a refusal still speaks for itself.
        (
            attempt(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150"),
            {"unfolded": True},
            ("refused: too short", "kept 12 of 150"),
        ),
    ],
)
def test_memory_list_status_cell(last, kwargs, cell):
    """The Settings list's Status cell and tooltip from the refresh snapshot: the newest
    attempt (an outcome by its label), the pause, the conversations still unfolded."""
    state = RefreshState(
        "ws_x",
        state=QueueState.PAUSED if kwargs.get("paused") else QueueState.IDLE,
        last_attempt=last,
        unfolded=kwargs.get("unfolded", False),
    )
    assert list_status(state, updated_at=kwargs.get("updated_at")) == cell


def test_a_failure_is_advice_only_when_the_snapshot_says_the_key_was_missing():
    """Whether a failure was for want of a key is the snapshot's ``missing_key``, not a flag
    read back from the attempt: without it, the no-key sentence is a failure to retry."""
    line = refresh_status(RefreshState("ws_x", last_attempt=no_key_attempt()))
    assert (line.kind, line.action) == ("failed", "retry")
    line = refresh_status(failed_for_want_of_a_key())
    assert (line.kind, line.action) == ("no_key", "add_key")
