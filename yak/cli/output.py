"""What the ``yak memory`` commands that read, write and refresh the document print: the JSON
objects, tables and report lines of ``list``, ``show``, ``set``, ``edit``, ``import``,
``restore``, ``delete``, ``export``, ``history`` and ``refresh``; with the terminal primitives
of ``yak.cli.terminal``, which every command reaches as ``output.error``, ``output.note``….
``yak.cli.review_output`` prints the review commands, ``yak.cli.turn_output`` ``yak ask``; the
words for states and outcomes are ``yak.presenters``'.

The JSON objects are contracts (scripts parse them; see ``docs/cli.md``, "The
command line"): ``show``, ``history`` and ``history --refreshes`` use the document rules'
shapes (the same as in a JSON export), ``list``, ``set`` and ``refresh`` are defined here.
Document bytes go to stdout unchanged; with ``--json`` stdout carries exactly one JSON
document, errors included; an error is one ``yak: …`` line on stderr.

Imported when a command runs or fails, never to print ``--help`` or ``--version`` (see
``yak.cli``); what it imports itself is light (the domain types, the document rules and the
presenters), so ``yak memory show`` loads no rewrite rules.
"""

from __future__ import annotations

import shlex
import sys
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from yak.cli.terminal import (
    MESSAGE_CHARS,
    error,
    lines,
    note,
    one_line_message,
    print_json,
    quiet_warnings,
    table,
    warnings_held_unless,
    write_stdout,
)
from yak.domain import (
    STORE_ERROR,
    MemoryDocument,
    MemorySummary,
    RefreshAttempt,
    RefreshOutcome,
    Revision,
    Workspace,
    count_lines,
)
from yak.linediff import line_changes, unified_diff
from yak.memory import document as doc_rules
from yak.presenters import (
    attempt_outcome,
    enclosing_words,
    forms_words,
    local_time,
    outcome_label,
    refresh_summary,
    renamed_words,
    waiting_for_you,
)

if TYPE_CHECKING:
    from yak.events import SyncedFileFailed

# The terminal primitives are part of this module's interface (``output.error``…).
__all__ = [
    "MESSAGE_CHARS",
    "error",
    "lines",
    "note",
    "one_line_message",
    "print_json",
    "quiet_warnings",
    "refresh_summary",
    "table",
    "warnings_held_unless",
    "write_stdout",
]


# --- yak memory list ----------------------------------------------------------------------------
def document_list(summaries: Sequence[MemorySummary], *, as_json: bool) -> None:
    """Every workspace with a memory: a JSON array, or a table (most recently updated first);
    each says how many changes wait for review (``proposals``, as ``show --json`` has it; the
    table's WAITING column, and "(2 changes waiting for you)" after the folder); a document
    that is not UTF-8 is marked (``valid_utf8`` false; in the table, a mark and a line on
    stderr saying how to look at it)."""
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
                    "proposals": s.proposals,
                    "valid_utf8": s.valid_utf8,
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
            f"{s.proposals}",
            local_time(s.updated_at, missing="-"),
            s.workspace.path
            + lookalikes.get(s.workspace.path, "")
            + ("  (memory off)" if not s.workspace.memory_enabled else "")
            + ("  (orphaned: folder missing)" if s.orphaned else "")
            + (f"  ({waiting_for_you(s.proposals)})" if s.proposals else "")
            + ("  (not UTF-8 text)" if not s.valid_utf8 else ""),
        ]
        for s in summaries
    ]
    header = ["LINES", "VERSION", "WAITING", "UPDATED", "WORKSPACE"]
    print(table(header, rows, right=frozenset({0, 1, 2})))
    for s in summaries:
        if not s.valid_utf8:
            where = shlex.quote(s.workspace.path)
            note(
                f"The memory of {s.workspace.path} is not UTF-8 text (written by another "
                f"program?): see its bytes with 'yak memory show --raw -w {where}', then "
                "restore a revision or save a new text."
            )


def _lookalike_paths(paths: Sequence[str]) -> dict[str, str]:
    """A note for each path that prints like another one: two folders whose names differ only
    in Unicode composition (``café`` typed as one letter or as ``e`` and an accent) are two
    folders here, and two workspaces, but look the same in a table."""
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


def versions_diff(
    workspace: Workspace, old: MemoryDocument, new: MemoryDocument, *, as_json: bool
) -> None:
    """``yak memory diff``: the unified line diff from ``old`` to ``new`` on stdout (nothing
    when they are equal), or its ``--json`` object: ``workspace``, ``from`` and ``to`` (each
    ``version``, ``lines``, ``updated_at``), ``added``, ``removed`` and ``diff`` (the same
    text)."""
    text = unified_diff(
        old.content,
        new.content,
        old_name=f"version {old.version}",
        new_name=f"version {new.version}",
    )
    if as_json:
        added, removed = line_changes(old.content, new.content)

        def side(shown: MemoryDocument) -> dict[str, Any]:
            return {
                "version": shown.version,
                "lines": shown.lines,
                "updated_at": doc_rules.iso_utc(shown.updated_at),
            }

        print_json(
            {
                "workspace": workspace.path,
                "from": side(old),
                "to": side(new),
                "added": added,
                "removed": removed,
                "diff": text,
            }
        )
        return
    if not new.version:
        note(f"{workspace.path} has no memory yet: there is no change to show.")
    elif not text:  # on stderr: stdout stays the diff, empty
        note(f"Versions {old.version} and {new.version} of the memory are the same.")
    write_stdout(text.encode("utf-8"))


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
    here = shlex.quote(workspace.path)
    if worktree_main is not None:
        note(
            f"{workspace.path} is a git worktree of {worktree_main.workspace.path}, which has a "
            f"memory of {lines(worktree_main.lines)}: 'yak memory link -w {here}' shares it here."
        )
    if renamed_from is not None:
        note(renamed_words(workspace.path, renamed_from))
    if enclosing is not None:
        note(enclosing_words(workspace.path, enclosing))


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
    """``refresh attempt ID kept no reply (failed: rate limited (HTTP 429))``, the status in
    the window's words (``yak.presenters.outcome_label``)."""
    label = outcome_label(attempt.status)
    why = f"{label}: {attempt.reason}" if attempt.reason else label
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


# --- yak memory history -------------------------------------------------------------------------
def revisions(
    workspace: Workspace, found: Sequence[Revision], *, as_json: bool, dated: bool = False
) -> None:
    """Revisions newest first (``id`` is what ``restore`` takes): JSON array or a table;
    ``dated``: only those of the dates asked for (``--as-of`` / ``--since``)."""
    if as_json:
        print_json([doc_rules.revision_json(r) for r in found])
        return
    if not found:
        print(
            f"No revisions of {workspace.path} in those dates."
            if dated
            else f"No revisions yet for {workspace.path}."
        )
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
            outcome_label(a.status) if a.outcome is None else attempt_outcome(a),
            lines(count_lines(a.reply)) if a.reply else "-",
            a.model or "-",
            forms_words(a.flags),
            f"{a.usage.input_tokens:,} in / {a.usage.output_tokens:,} out",
            a.reason or "-",
        ]
        for a in found
    ]
    print(
        table(
            ["ID", "CREATED", "STATUS", "REPLY", "MODEL", "FORM", "TOKENS", "REASON"],
            rows,
            right=frozenset({3}),
        )
    )


# --- yak memory refresh -------------------------------------------------------------------------
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

    With ``--json`` one object on stdout (and, when the exit code is not 0, the report line on
    stderr, as every failing command says one line there); otherwise one line, on stdout when
    the exit code is 0, else on stderr."""
    code = refresh_exit_code(outcome)
    if code != 0:
        print(f"yak: {one_line_message(refresh_summary(outcome))}", file=sys.stderr)
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
    return code
