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
from yak.refresh.state import (
    PAUSED_TEXT,
    UNFOLDED_TEXT,
    UNFOLDED_TIP,
    LastRefresh,
    describe_outcome,
    list_status,
    refresh_status,
)
from yak.ui.formatting import counter_text, relative_time

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


NO_KEY = "No Anthropic API key is set. Set ANTHROPIC_API_KEY or add a key in Settings > Provider."


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


@pytest.mark.parametrize(
    ("state", "text", "action"),
    [
        (RefreshState("ws_x"), "up to date", None),
        (RefreshState("ws_x", state=QueueState.PENDING, due_in=8.2), "pending in 9 s", None),
        (RefreshState("ws_x", state=QueueState.PENDING, due_in=0.0), "pending in 0 s", None),
        (RefreshState("ws_x", state=QueueState.RUNNING), "refreshing…", None),
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
            None,
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
            RefreshState("ws_x", state=QueueState.PAUSED, last_attempt=no_key_attempt()),
            f"failed: {NO_KEY}",
            "add_key",
        ),
        (
            RefreshState("ws_x", last_attempt=no_key_attempt(), key_available=False),
            f"failed: {NO_KEY}",
            "add_key",
        ),
        # … until a key is there: then it is a failure to retry like any other.
        (
            RefreshState("ws_x", last_attempt=no_key_attempt(), key_available=True),
            f"failed: {NO_KEY}",
            "retry",
        ),
        # A pending run (a key was just added) wins over the pause.
        (
            RefreshState(
                "ws_x", state=QueueState.PENDING, due_in=3.0, last_attempt=no_key_attempt()
            ),
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
            LastRefresh(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150", NOW),
            {},
            ("refused_floor", "kept 12 of 150"),
        ),
        (LastRefresh(RefreshStatus.FAILED, "rate limited", NOW), {}, ("failed", "rate limited")),
        (
            LastRefresh(RefreshStatus.SUPERSEDED, "changed twice", NOW),
            {},
            ("superseded", "changed twice"),
        ),
        (
            LastRefresh(RefreshStatus.APPLIED, "folded 3 messages", NOW),
            {},
            ("up to date", "folded 3 messages"),
        ),
        (
            LastRefresh(RefreshStatus.UP_TO_DATE, "nothing new", NOW),
            {},
            ("up to date", "nothing new"),
        ),
        # A hand edit after the refusal is the newest word …
        (
            LastRefresh(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150", NOW),
            {"updated_at": NOW + timedelta(seconds=1)},
            ("up to date", "The memory was written after the last refresh."),
        ),
        # … an edit before it is not.
        (
            LastRefresh(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150", NOW),
            {"updated_at": NOW - timedelta(seconds=1)},
            ("refused_floor", "kept 12 of 150"),
        ),
        # Waiting for a key wins over an older outcome.
        (
            LastRefresh(RefreshStatus.FAILED, "rate limited", NOW),
            {"paused": True},
            ("paused", PAUSED_TEXT),
        ),
        # Conversations not folded in yet are never "up to date": after a hand edit over a
        # refusal (a trimmed save), after an applied refresh, or before any refresh …
        (
            LastRefresh(RefreshStatus.REFUSED_CEILING, "240 lines", NOW),
            {"updated_at": NOW + timedelta(seconds=1), "unfolded": True},
            (UNFOLDED_TEXT, UNFOLDED_TIP),
        ),
        (
            LastRefresh(RefreshStatus.APPLIED, "folded 3 messages", NOW),
            {"unfolded": True},
            (UNFOLDED_TEXT, UNFOLDED_TIP),
        ),
        (None, {"unfolded": True}, (UNFOLDED_TEXT, UNFOLDED_TIP)),
        # … while a refusal still speaks for itself.
        (
            LastRefresh(RefreshStatus.REFUSED_FLOOR, "kept 12 of 150", NOW),
            {"unfolded": True},
            ("refused_floor", "kept 12 of 150"),
        ),
    ],
)
def test_memory_list_status_cell(last, kwargs, cell):
    """The Settings list's Status cell and tooltip from the newest attempt."""
    assert list_status(last, **kwargs) == cell
