"""The hot reads of the refresh attempts and of the memory's upkeep: one SQL text and one
decoding each, for the plain ``sqlite3`` reader and the SQLAlchemy repository alike (the rules
of :mod:`yak.db.reads`, whose :class:`~yak.db.reads.Query` they run on)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from yak.db.reads import Query, Row, by_prefix, stored_at, strings
from yak.domain import (
    UPKEEP_WINDOWS_DAYS,
    ProposalStatus,
    RefreshAttempt,
    RefreshStatus,
    RewriteForm,
    TokenUsage,
    UpkeepFigures,
    UpkeepStats,
)
from yak.ids import ATTEMPT_IDS, id_prefix, only_match

# --- refresh attempts -------------------------------------------------------------------------
_ATTEMPT_COLUMNS = (
    "id, workspace_id, status, reason, base_version, result_version, model, {reply}, "
    "input_tokens, output_tokens, duration_s, CAST(session_ids AS VARCHAR), "
    "CAST(flags AS VARCHAR), CAST(created_at AS VARCHAR), added, removed, proposal_id, "
    "cache_write_tokens, cache_read_tokens, "
    # What became of the proposal an attempt made (one primary-key lookup each).
    + ", ".join(
        f"(SELECT p.{column} FROM memory_proposals p WHERE p.id = refresh_attempts.proposal_id)"
        for column in ("status", "result_version", "superseded_by")
    )
)
ATTEMPT = f"SELECT {_ATTEMPT_COLUMNS.format(reply='reply')} FROM refresh_attempts"


_BECAME_VERSION = (ProposalStatus.ACCEPTED, ProposalStatus.EDITED)


def attempt_of(row: Row) -> RefreshAttempt:
    """A refresh attempt from the columns of :data:`ATTEMPT`."""
    (a_id, ws_id, status, reason, base, result, model, reply, tokens_in, tokens_out) = row[:10]
    duration, session_ids, flags, created_at, added, removed, proposal_id = row[10:17]
    cache_write, cache_read, decided, decided_version, superseded_by = row[17:22]
    outcome = None if decided in (None, ProposalStatus.PENDING) else ProposalStatus(decided)
    if status != RefreshStatus.NEEDS_REVIEW:  # applied in part: its held lines' fate is their own
        outcome = None
    return RefreshAttempt(
        id=a_id,
        workspace_id=ws_id,
        status=RefreshStatus(status),
        reason=reason or "",
        base_version=int(base),
        result_version=decided_version if outcome in _BECAME_VERSION else result,
        model=model,
        reply=reply,
        usage=TokenUsage(
            input_tokens=tokens_in or 0,
            output_tokens=tokens_out or 0,
            cache_creation_input_tokens=cache_write or 0,
            cache_read_input_tokens=cache_read or 0,
        ),
        duration_s=duration or 0.0,
        session_ids=strings(session_ids),
        flags=strings(flags),
        created_at=stored_at(created_at),
        added=added or 0,
        removed=removed or 0,
        proposal_id=proposal_id,
        outcome=outcome,
        superseded_by=superseded_by if outcome is not None else None,
    )


def attempts(query: Query, workspace_id: str, limit: int | None = 50) -> list[RefreshAttempt]:
    """Refresh attempts newest first; at most ``limit`` of them (``None``: all)."""
    sql = ATTEMPT + " WHERE workspace_id = :workspace ORDER BY created_at DESC, id DESC"
    parameters: dict[str, object] = {"workspace": workspace_id}
    if limit is not None:
        sql += " LIMIT :limit"
        parameters["limit"] = limit
    return [attempt_of(row) for row in query.rows(sql, parameters)]


def attempt(query: Query, workspace_id: str, attempt_id: str) -> RefreshAttempt:
    """One attempt of the workspace, by full id or a unique prefix (at least
    ``MIN_ID_PREFIX`` characters) of one.

    Raises:
        UsageError: no attempt of this workspace matches, several do, or the prefix is too
            short.
    """
    rows = by_prefix(query, ATTEMPT, workspace_id, id_prefix(attempt_id, ATTEMPT_IDS))
    return attempt_of(only_match(rows, attempt_id, ATTEMPT_IDS))


# The newest time per workspace comes from the ``(workspace_id, created_at)`` index alone; only
# those rows are then read (without the reply), because scanning the replies is what is slow.
_LATEST = f"""
SELECT {_ATTEMPT_COLUMNS.format(reply="NULL")}
FROM refresh_attempts JOIN (
    SELECT workspace_id AS newest_workspace, max(created_at) AS newest_at
    FROM refresh_attempts GROUP BY workspace_id
) AS newest ON workspace_id = newest_workspace AND created_at = newest_at
ORDER BY id
"""


def latest_attempts(query: Query) -> dict[str, RefreshAttempt]:
    """The newest attempt of every workspace that has one, without its reply, by workspace id
    (two in the same instant: the later id wins)."""
    return {row[1]: attempt_of(row) for row in query.rows(_LATEST, {})}


# --- the memory's upkeep ----------------------------------------------------------------------
# Per workspace and outcome, the attempts of the longest window and, flagged ``recent``, of the
# shortest: one pass over the ``(workspace_id, created_at)`` index. Times compare as their stored
# text (``YYYY-MM-DD HH:MM:SS[.ffffff]``, naive UTC, on both dialects), like every read here. A
# call is an attempt whose usage is not all zero; a retry (``edits_retry``, ``condense_retry``
# in its flags) is one more. The attempts that read a reply in each rewrite form (its ``form:*``
# flag, a JSON string in the stored list) follow, in ``RewriteForm``'s order.
_FORMS = tuple(RewriteForm)
_UPKEEP = (
    """
SELECT workspace_id, status,
    CASE WHEN CAST(created_at AS VARCHAR) >= :recent THEN 1 ELSE 0 END AS recent,
    COUNT(*),
    SUM(CASE WHEN input_tokens + output_tokens + cache_write_tokens + cache_read_tokens > 0
        THEN 1 ELSE 0 END),
    SUM(CASE WHEN CAST(flags AS VARCHAR) LIKE '%retry%' THEN 1 ELSE 0 END),
    SUM(input_tokens), SUM(output_tokens), SUM(cache_write_tokens), SUM(cache_read_tokens),
"""
    + ",\n".join(
        f"    SUM(CASE WHEN CAST(flags AS VARCHAR) LIKE '%\"{form.flag}\"%' THEN 1 ELSE 0 END)"
        for form in _FORMS
    )
    + """
FROM refresh_attempts
WHERE CAST(created_at AS VARCHAR) >= :since {workspace}
GROUP BY 1, 2, 3
"""
)


def upkeep(
    query: Query,
    now: datetime,
    *,
    workspace_id: str | None = None,
    windows_days: tuple[int, int] = UPKEEP_WINDOWS_DAYS,
) -> dict[str, UpkeepStats]:
    """The memory's upkeep per workspace with an attempt in the longer window: refreshes,
    model calls, tokens and outcomes over the last ``windows_days`` days before ``now`` (an
    aware time), by workspace id; only ``workspace_id``'s when given."""
    short, long = sorted(windows_days)
    parameters: dict[str, object] = {
        "recent": _stored_time(now - timedelta(days=short)),
        "since": _stored_time(now - timedelta(days=long)),
    }
    where = ""
    if workspace_id is not None:
        where, parameters["workspace"] = "AND workspace_id = :workspace", workspace_id
    figures: dict[str, dict[int, UpkeepFigures]] = {}
    for row in query.rows(_UPKEEP.format(workspace=where), parameters):
        ws_id, status, recent, count, asked, retried = row[:6]
        tokens_in, tokens_out, written, read = (int(n or 0) for n in row[6:10])
        in_form = zip(_FORMS, (int(n or 0) for n in row[10:]), strict=True)
        part = UpkeepFigures(
            refreshes=int(count),
            calls=int(asked or 0) + int(retried or 0),
            usage=TokenUsage(tokens_in, tokens_out, written, read),
            outcomes=((RefreshStatus(status), int(count)),),
            forms=tuple((form, n) for form, n in in_form if n),
        )
        windows = figures.setdefault(ws_id, {short: UpkeepFigures(), long: UpkeepFigures()})
        windows[long] = windows[long] + part
        if int(recent):
            windows[short] = windows[short] + part
    return {
        ws_id: UpkeepStats(ws_id, tuple(sorted(windows.items())))
        for ws_id, windows in figures.items()
    }


def _stored_time(moment: datetime) -> str:
    """``moment`` as a stored time's text (naive UTC, to the microsecond)."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
