"""What the ``yak`` commands print: every JSON object, table and report line in one place.

The JSON objects are contracts (scripts parse them; see ``docs/architecture.md``, "The
command line"): ``show``, ``history`` and ``history --refreshes`` use the document rules'
shapes (the same as in a JSON export), ``list``, ``set`` and ``refresh`` are defined here.
Document bytes go to stdout unchanged; with ``--json`` stdout carries exactly one JSON
document, errors included; an error is one ``yak: …`` line on stderr.

Imported when a command runs or fails, never to print ``--help`` or ``--version`` (see
``yak.cli``); what it imports itself is light (the domain types and the document rules).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from yak.domain import (
    STORE_ERROR,
    LineOrigin,
    MemoryDocument,
    MemorySummary,
    Proposal,
    RefreshAttempt,
    RefreshOutcome,
    RefreshStatus,
    Revision,
    Workspace,
    count_lines,
)
from yak.memory import document as doc_rules
from yak.text import escape_controls, middle, plural

MESSAGE_CHARS = 400  # the longest error line (a longer sentence is shortened in the middle)

if TYPE_CHECKING:
    from yak.agent.types import AgentEvent
    from yak.events import SyncedFileFailed


# --- primitives ---------------------------------------------------------------------------------
def write_stdout(data: bytes) -> None:
    """Write bytes to stdout unchanged (no newline translation, no encoding)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def print_json(value: Any) -> None:
    """One indented UTF-8 JSON document on stdout."""
    write_stdout((json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def lines(count: int) -> str:
    """``1 line``, ``12 lines``, ``1,234 lines``."""
    return plural(count, "line")


def local_time(moment: datetime | None) -> str:
    """``2026-11-30 04:09`` in the local time zone, or ``-``."""
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def table(headers: list[str], rows: list[list[str]], *, right: frozenset[int] = frozenset()) -> str:
    """Plain columns separated by two spaces; the last column is not padded."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    out = []
    for row in [headers, *rows]:
        cells = []
        for i, cell in enumerate(row):
            if i == len(row) - 1:
                cells.append(str(cell))
            elif i in right:
                cells.append(str(cell).rjust(widths[i]))
            else:
                cells.append(str(cell).ljust(widths[i]))
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def one_line_message(message: str) -> str:
    """An error sentence as exactly one line: control characters escaped and at most
    :data:`MESSAGE_CHARS` characters (shortened in the middle)."""
    return middle(escape_controls(message.strip()), MESSAGE_CHARS)


def error(message: str, code: int, *, as_json: bool, status: str | None = None) -> int:
    """Report a failure: one ``yak: …`` line on stderr (and, with ``--json``, the error
    document ``{"error", "exit_code", "status"}`` on stdout); returns ``code``. The message is
    made one line first (:func:`one_line_message`)."""
    message = one_line_message(message)
    print(f"yak: {message}", file=sys.stderr)
    if as_json:
        print(json.dumps({"error": message, "exit_code": code, "status": status}))
    return code


def note(message: str) -> None:
    """A hint for a person at a terminal, on stderr (never part of a contract)."""
    print(message, file=sys.stderr, flush=True)


# --- yak memory list ----------------------------------------------------------------------------
def document_list(summaries: Sequence[MemorySummary], *, as_json: bool) -> None:
    """Every workspace with a memory: a JSON array, or a table (most recently updated first)."""
    if as_json:
        print_json(
            [
                {
                    "workspace": s.workspace.path,
                    "workspace_id": s.workspace.id,
                    "version": s.version,
                    "lines": s.lines,
                    "chars": s.chars,
                    "flags": list(s.flags),
                    "updated_at": doc_rules.iso_utc(s.updated_at),
                    "orphaned": s.orphaned,
                    "memory_enabled": s.workspace.memory_enabled,
                }
                for s in summaries
            ]
        )
        return
    if not summaries:
        print("No workspace has a memory document yet.")
        return
    lookalikes = _lookalike_paths([s.workspace.path for s in summaries])
    rows = [
        [
            f"{s.lines}",
            f"{s.version}",
            local_time(s.updated_at),
            s.workspace.path
            + lookalikes.get(s.workspace.path, "")
            + ("  (memory off)" if not s.workspace.memory_enabled else "")
            + ("  (orphaned: folder missing)" if s.orphaned else ""),
        ]
        for s in summaries
    ]
    print(table(["LINES", "VERSION", "UPDATED", "WORKSPACE"], rows, right=frozenset({0, 1})))


def _lookalike_paths(paths: Sequence[str]) -> dict[str, str]:
    """A note for each path that prints like another one: two folders whose names differ only
    in Unicode composition (``café`` typed as one letter or as ``e`` and an accent) are two
    folders here, and two workspaces, but look the same in a table."""
    import unicodedata

    by_look: dict[str, list[str]] = {}
    for path in paths:
        by_look.setdefault(unicodedata.normalize("NFC", path), []).append(path)
    notes = {}
    for group in by_look.values():
        if len(set(group)) > 1:
            for path in group:
                composed = unicodedata.is_normalized("NFC", path)
                notes[path] = "  (composed accents)" if composed else "  (decomposed accents)"
    return notes


# --- yak memory show ----------------------------------------------------------------------------
def document(
    workspace: Workspace,
    shown: MemoryDocument,
    *,
    as_json: bool,
    extras: dict[str, Any] | None = None,
) -> None:
    """The document's bytes exactly as stored, or its ``show --json`` object (with ``extras``:
    ``last_refresh``, ``proposals``, ``mode``)."""
    if as_json:
        print_json({**doc_rules.document_json(workspace, shown), **(extras or {})})
        return
    if not shown.content and sys.stdout.isatty():
        note(f"(the memory document of {workspace.path} is empty)")
    write_stdout(doc_rules.export_text(shown))


def memory_elsewhere(summary: MemorySummary | None) -> dict[str, Any] | None:
    """``show --json``'s ``enclosing`` or ``renamed_from``: the other workspace's ``path``,
    ``workspace_id``, ``lines`` and ``version``, or ``None``."""
    if summary is None:
        return None
    return {
        "path": summary.workspace.path,
        "workspace_id": summary.workspace.id,
        "lines": summary.lines,
        "version": summary.version,
    }


def scope_notes(
    workspace: Workspace,
    *,
    enclosing: MemorySummary | None,
    renamed_from: MemorySummary | None,
    worktree_main: MemorySummary | None = None,
) -> None:
    """The lines on stderr saying that a folder without a memory of its own could use another
    one, with the command that does it (plain ``show``; its stdout stays the document)."""
    import shlex

    here = shlex.quote(workspace.path)
    if worktree_main is not None:
        note(
            f"{workspace.path} is a git worktree of {worktree_main.workspace.path}, which has a "
            f"memory of {lines(worktree_main.lines)}: 'yak memory link -w {here}' shares it here."
        )
    if renamed_from is not None:
        old = renamed_from.workspace.path
        note(
            f"{workspace.path} looks like {old}, which no longer exists and has a memory of "
            f"{lines(renamed_from.lines)}: 'yak memory reattach {shlex.quote(old)} -w {here}' "
            "moves it here."
        )
    if enclosing is not None:
        note(
            f"{workspace.path} has no memory of its own; the enclosing workspace "
            f"{enclosing.workspace.path} has {lines(enclosing.lines)}: "
            f"'yak memory show -w {shlex.quote(enclosing.workspace.path)}'"
        )


def raw_document(workspace: Workspace, raw: bytes, *, as_json: bool) -> None:
    """``show --raw``: the stored bytes as text with every byte that is not UTF-8 escaped
    (``\\xNN``), or a JSON object with ``raw`` (that text), ``bytes`` and ``valid_utf8``."""
    try:
        raw.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    shown = raw.decode("utf-8", "backslashreplace")
    if as_json:
        print_json(
            {
                "workspace": workspace.path,
                "workspace_id": workspace.id,
                "bytes": len(raw),
                "valid_utf8": valid,
                "raw": shown,
            }
        )
        return
    write_stdout(shown.encode("utf-8"))


def attempt_reply(attempt: RefreshAttempt, *, as_json: bool) -> None:
    """``show --reply``: the kept reply's UTF-8 bytes exactly, or the attempt's JSON object
    with ``reply``. The caller refuses an attempt without a reply (see
    :func:`no_reply_message`)."""
    if as_json:
        print_json({**doc_rules.attempt_json(attempt), "reply": attempt.reply})
        return
    write_stdout((attempt.reply or "").encode("utf-8"))


def no_reply_message(attempt: RefreshAttempt) -> str:
    """``refresh attempt ID kept no reply (failed: rate limited (HTTP 429))``."""
    why = f"{attempt.status}: {attempt.reason}" if attempt.reason else str(attempt.status)
    return f"refresh attempt {attempt.id} kept no reply ({why.rstrip('. ')})"


# --- yak memory set / edit / import / restore / delete / export ---------------------------------
def kept_file_error(failure: SyncedFileFailed | None) -> dict[str, str] | None:
    """The ``kept_file_error`` of a writing command's ``--json``: ``null``, or the file kept in
    sync that the new version could not be written into, and why (``path``, ``reason``; the
    version itself is stored)."""
    return None if failure is None else {"path": failure.path, "reason": failure.reason}


def saved(
    workspace: Workspace,
    document: MemoryDocument,
    *,
    changed: bool,
    as_json: bool,
    failed_sync: SyncedFileFailed | None = None,
) -> None:
    """The result of ``set`` (and ``edit``): the ``set --json`` object, or one line (a failed
    sync of the kept file has had its own stderr line)."""
    if as_json:
        print_json(
            {
                "version": document.version,
                "lines": document.lines,
                "chars": document.chars,
                "changed": changed,
                "workspace": workspace.path,
                "workspace_id": workspace.id,
                "kept_file_error": kept_file_error(failed_sync),
            }
        )
    elif changed:
        print(f"Saved version {document.version} ({lines(document.lines)}) for {workspace.path}.")
    else:
        print(f"No changes: version {document.version} already has this text.")


def no_edit() -> None:
    """``edit`` when the editor left the text as it was."""
    print("No changes.")


def edit_kept(message: str, name: str) -> None:
    """``edit`` refused or failed: the reason and where the typed text is kept, one line."""
    print(f"yak: {one_line_message(f'{message} Your text is kept in {name}')}", file=sys.stderr)


def imported(name: str, before: int, document: MemoryDocument) -> None:
    if document.version == before:
        print(f"No changes: version {before} already has the text of {name}.")
    else:
        print(f"Imported {name} as version {document.version} ({lines(document.lines)}).")


def restored(revision: Revision, before: int, document: MemoryDocument) -> None:
    if document.version == before:
        print(f"No changes: version {before} already has the text of revision {revision.id}.")
    else:
        print(
            f"Restored revision {revision.id} (version {revision.version}) as version "
            f"{document.version} ({lines(document.lines)})."
        )


def already_empty(workspace: Workspace) -> None:
    print(f"The memory document of {workspace.path} is already empty.")


def delete_question(workspace: Workspace, document: MemoryDocument) -> str:
    return (
        f"Delete the memory document of {workspace.path} ({lines(document.lines)})? "
        "It stays restorable from history. [y/N] "
    )


def nothing_deleted() -> None:
    print("Nothing was deleted.")


def deleted(workspace: Workspace, cleared: MemoryDocument, kept: Revision | None) -> None:
    hint = f" Restore it with: yak memory restore {kept.id}" if kept else ""
    print(
        f"Deleted the memory document of {workspace.path} (now version {cleared.version})." + hint
    )


def exported(workspace: Workspace, fmt: str, size: int, target: str) -> None:
    print(f"Exported {workspace.path} ({fmt}, {size:,} bytes) to {target}.")


# --- yak memory blame / review / accept / reject / mode / enable / disable ----------------------
def blame(
    workspace: Workspace,
    origins: Sequence[LineOrigin],
    titles: dict[str, str],
    *,
    as_json: bool,
) -> None:
    """``blame``: one origin per line, a JSON array or ``v4  hand     2026-12-01 10:02  text``
    lines (a refresh names its conversations)."""
    if as_json:
        print_json(
            [
                {
                    "line": o.line,
                    "text": o.text,
                    "version": o.version,
                    "source": str(o.source),
                    "created_at": doc_rules.iso_utc(o.created_at),
                    "sessions": list(o.sessions),
                    "by_person": o.by_person,
                }
                for o in origins
            ]
        )
        return
    if not origins:
        print(f"The memory document of {workspace.path} is empty.")
        return
    width = max(len(f"v{o.version}") for o in origins)
    for o in origins:
        where = f"v{o.version}".ljust(width)
        source = str(o.source).ljust(8)
        print(f"{where}  {source} {local_time(o.created_at)}  {o.text}")
    named = sorted({sid for o in origins for sid in o.sessions}, key=str)
    for sid in named:
        print(f"  {sid}: {titles.get(sid, '(deleted conversation)')}", file=sys.stderr)


def redacted_kinds(flags: Sequence[str]) -> list[str]:
    """The kinds of secret a ``redacted:<kind>`` flag names (``["anthropic_key"]``)."""
    return [flag.removeprefix("redacted:") for flag in flags if flag.startswith("redacted:")]


def proposal_json(proposal: Proposal, *, base: str | None = None) -> dict[str, Any]:
    """A proposal as ``review --json`` lists it; with ``base`` (``review ID``) also its
    ``content`` and ``diff`` (a unified line diff against the base version)."""
    from yak.memory.provenance import unified_diff

    item: dict[str, Any] = {
        "id": proposal.id,
        "status": str(proposal.status),
        "base_version": proposal.base_version,
        "reasons": list(proposal.reasons),
        "added": proposal.added,
        "removed": proposal.removed,
        "created_at": doc_rules.iso_utc(proposal.created_at),
        "sessions": list(proposal.session_ids),
        "flags": list(proposal.flags),
    }
    if base is not None:
        item["content"] = proposal.content
        item["diff"] = unified_diff(
            base,
            proposal.content,
            old_name=f"version {proposal.base_version}",
            new_name=f"proposal {proposal.id}",
        )
    return item


def proposals(workspace: Workspace, found: Sequence[Proposal], *, as_json: bool) -> None:
    """``review``: the proposals waiting, oldest first."""
    if as_json:
        print_json([proposal_json(p) for p in found])
        return
    if not found:
        print(f"No change waits for review in {workspace.path}.")
        return
    for p in found:
        print(
            f"{p.id}  on version {p.base_version}  +{p.added} −{p.removed}  "
            f"{local_time(p.created_at)}"
        )
        for reason in p.reasons:
            print(f"  - {reason}")
        hidden = redacted_kinds(p.flags)
        if hidden:
            print(f"  - secrets replaced by [REDACTED:…] markers: {', '.join(hidden)}")
    print("See one with 'yak memory review ID'; then 'yak memory accept ID' or 'reject ID'.")


def proposal(proposal: Proposal, base: str, *, as_json: bool) -> None:
    """``review ID``: its reasons, then its diff against the base version."""
    if as_json:
        print_json(proposal_json(proposal, base=base))
        return
    item = proposal_json(proposal, base=base)
    print(
        f"Proposal {proposal.id} ({proposal.status}) on version {proposal.base_version}: "
        f"+{proposal.added} −{proposal.removed}"
    )
    for reason in proposal.reasons:
        print(f"  - {reason}")
    print()
    write_stdout(item["diff"].encode("utf-8"))


def decided(workspace: Workspace, verb: str, found: Proposal, document: MemoryDocument) -> None:
    """``accept``/``reject``: one line."""
    print(
        f"{verb} proposal {found.id}; the memory of {workspace.path} is at version "
        f"{document.version} ({lines(document.lines)})."
    )


def decided_json(
    workspace: Workspace,
    status: str,
    found: Proposal,
    document: MemoryDocument,
    failed_sync: SyncedFileFailed | None = None,
) -> None:
    print_json(
        {
            "proposal": found.id,
            "status": status,
            "version": document.version,
            "lines": document.lines,
            "workspace": workspace.path,
            "workspace_id": workspace.id,
            "kept_file_error": kept_file_error(failed_sync),
        }
    )


def mode(workspace: Workspace, *, changed: bool, as_json: bool) -> None:
    """``mode``: the workspace's review mode (and memory switch)."""
    if as_json:
        print_json(
            {
                "mode": str(workspace.review_mode),
                "memory_enabled": workspace.memory_enabled,
                "workspace": workspace.path,
                "workspace_id": workspace.id,
            }
        )
        return
    what = {
        "auto": "auto (rewrites apply; risky ones wait for review)",
        "review": "review (every rewrite waits for review)",
    }[str(workspace.review_mode)]
    print(("Review mode is now " if changed else "Review mode: ") + what + ".")


def memory_switch(workspace: Workspace, *, as_json: bool) -> None:
    """``enable``/``disable``: where the memory switch now stands."""
    if as_json:
        print_json(
            {
                "memory_enabled": workspace.memory_enabled,
                "workspace": workspace.path,
                "workspace_id": workspace.id,
            }
        )
        return
    if workspace.memory_enabled:
        print(f"Memory is on for {workspace.path}: new conversations get the document.")
    else:
        print(
            f"Memory is off for {workspace.path}: no conversation gets the document and no "
            "refresh runs (the document and its history are kept)."
        )


# --- yak memory history -------------------------------------------------------------------------
def revisions(workspace: Workspace, found: Sequence[Revision], *, as_json: bool) -> None:
    """Revisions newest first (``id`` is what ``restore`` takes): JSON array or a table."""
    if as_json:
        print_json([doc_rules.revision_json(r) for r in found])
        return
    if not found:
        print(f"No revisions yet for {workspace.path}.")
        return
    rows = [
        [
            r.id,
            f"{r.version}",
            str(r.source),
            f"{r.lines}",
            f"{r.chars}",
            f"+{r.added} −{r.removed}",
            local_time(r.created_at),
            ", ".join(r.flags),
        ]
        for r in found
    ]
    print(
        table(
            ["ID", "VERSION", "SOURCE", "LINES", "CHARS", "CHANGE", "CREATED", "FLAGS"],
            rows,
            right=frozenset({1, 3, 4}),
        )
    )


def attempts(workspace: Workspace, found: Sequence[RefreshAttempt], *, as_json: bool) -> None:
    """``history --refreshes``: every refresh attempt newest first, JSON array or a table."""
    if as_json:
        print_json([doc_rules.attempt_json(a) for a in found])
        return
    if not found:
        print(f"No refresh attempts yet for {workspace.path}.")
        return
    rows = [
        [
            a.id,
            local_time(a.created_at),
            str(a.status),
            lines(count_lines(a.reply)) if a.reply else "-",
            a.model or "-",
            f"{a.usage.input_tokens:,} in / {a.usage.output_tokens:,} out",
            a.reason or "-",
        ]
        for a in found
    ]
    print(
        table(
            ["ID", "CREATED", "STATUS", "REPLY", "MODEL", "TOKENS", "REASON"],
            rows,
            right=frozenset({3}),
        )
    )


# --- yak memory refresh -------------------------------------------------------------------------
def refresh_summary(outcome: RefreshOutcome) -> str:
    """The one-line human report, e.g. ``applied: version 4, 57 lines`` or
    ``refused_floor: the reply kept 12 of 150 lines (8%; …); the document is unchanged.``"""
    status, reason = outcome.status, outcome.reason.rstrip(". ")
    size = f"version {outcome.version}, {plural(outcome.lines, 'line')}"
    if status is RefreshStatus.APPLIED:
        changes = f"+{outcome.added} −{outcome.removed}"
        return f"applied: {size}, {changes}" + (f" ({reason})" if reason else "")
    if status is RefreshStatus.UP_TO_DATE:
        return f"up_to_date: {reason}; {size}" if reason else f"up_to_date: {size}"
    if status is RefreshStatus.NEEDS_REVIEW:
        return (
            f"needs_review: {reason}; the document is unchanged ({size}). See it with "
            f"'yak memory review {outcome.proposal_id}', then accept or reject it."
        )
    if STORE_ERROR in outcome.flags:  # the document may not even be readable: no size to give
        return f"{status}: {reason}; nothing was changed."
    return f"{status}: {reason}; the document is unchanged ({size})."


def refresh_exit_code(outcome: RefreshOutcome) -> int:
    """``RefreshStatus.exit_code``, except that a failure of the database itself (flag
    ``store_error``: unreadable, unwritable, an unreadable document) is exit 1, like every
    command's database error, not 4 (the provider)."""
    if STORE_ERROR in outcome.flags:
        return 1
    return outcome.status.exit_code


def refresh_outcome(
    outcome: RefreshOutcome,
    *,
    workspace_path: str,
    rebuild: bool,
    as_json: bool,
    failed_sync: SyncedFileFailed | None = None,
) -> int:
    """Report ``yak memory refresh``; returns its exit code (``refresh_exit_code``).

    With ``--json`` one object on stdout; otherwise one line, on stdout when the exit code is
    0, else on stderr."""
    code = refresh_exit_code(outcome)
    if as_json:
        print_json(
            {
                "status": str(outcome.status),
                "reason": outcome.reason,
                "version": outcome.version,
                "lines": outcome.lines,
                "added": outcome.added,
                "removed": outcome.removed,
                "proposal": outcome.proposal_id,
                "workspace": workspace_path,
                "workspace_id": outcome.workspace_id,
                "flags": list(outcome.flags),
                "kept_file_error": kept_file_error(failed_sync),
                "model": outcome.model,
                "input_tokens": outcome.usage.input_tokens,
                "output_tokens": outcome.usage.output_tokens,
                "duration_s": round(outcome.duration_s, 3),
                "session_ids": list(outcome.session_ids),
                "attempt_id": outcome.attempt_id,
                "rebuild": rebuild,
            }
        )
    elif code == 0:
        print(refresh_summary(outcome))
    else:
        print(f"yak: {one_line_message(refresh_summary(outcome))}", file=sys.stderr)
    return code


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    """The report line already says why a refresh failed; the model client's and the
    refresher's warning log lines would make it a second line on stderr, so they are held
    back here."""
    loggers = [logging.getLogger(name) for name in ("yak.llm", "yak.memory", "yak.refresh")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


# --- yak ask ------------------------------------------------------------------------------------
class TurnPrinter:
    """Streams a turn's reply text to stdout and each finished tool call to stderr as one
    ``[tool] target: summary`` line, keeping the two apart; the instruction files a new
    conversation read are one ``Instructions: AGENTS.md, …`` line on stderr."""

    def __init__(self) -> None:
        from yak.agent.types import InstructionsLoaded, TextDelta, ToolCallFinished

        self._text, self._tool, self._loaded = TextDelta, ToolCallFinished, InstructionsLoaded
        self.mid_line = False  # stdout has text without its newline yet

    def __call__(self, event: AgentEvent) -> None:
        if isinstance(event, self._text):
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, self._tool):
            self.end_line()
            print(f"[{event.tool}] {event.target}: {event.summary}", file=sys.stderr, flush=True)
        elif isinstance(event, self._loaded):
            from yak.agent.instructions import loaded_line

            self.end_line()
            print(loaded_line(event.files), file=sys.stderr, flush=True)

    def end_line(self) -> None:
        """End a reply line left open (before an error line, or at the end of the turn)."""
        if self.mid_line:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self.mid_line = False


def turn_problem(message: str) -> None:
    """A turn that failed or was cut short: one ``yak: …`` line on stderr."""
    print(f"yak: {one_line_message(message)}", file=sys.stderr)


def refresh_after_turn(outcome: RefreshOutcome) -> None:
    """The memory refresh that follows ``yak ask``, one line on stderr (never its exit code)."""
    if outcome.status in (RefreshStatus.APPLIED, RefreshStatus.UP_TO_DATE):
        print(
            f"memory: {outcome.status}, version {outcome.version}, {lines(outcome.lines)}",
            file=sys.stderr,
        )
    else:
        reason = outcome.reason.rstrip(". ")
        print(
            f"yak: memory refresh {outcome.status}: {reason}; the memory document is unchanged.",
            file=sys.stderr,
        )


def refresh_after_turn_failed(message: str) -> None:
    print(f"yak: memory refresh failed: {one_line_message(message)}", file=sys.stderr)
