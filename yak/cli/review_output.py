"""What ``yak memory blame``, ``review``, ``accept``, ``reject``, ``mode``, ``enable`` and
``disable`` print: the line origins, the proposals waiting with their diffs, the decisions, the
review mode and the memory switch (JSON objects or report lines, as in ``yak.cli.output``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from yak.cli.output import kept_file_error
from yak.cli.terminal import lines, print_json, write_stdout
from yak.domain import LineOrigin, MemoryDocument, Proposal, ProposalStatus, Workspace
from yak.events import SyncedFileFailed
from yak.linediff import unified_diff
from yak.memory import document as doc_rules
from yak.memory.freshness.age import LineAge
from yak.memory.freshness.stale import StaleLine
from yak.memory.history import placement
from yak.memory.history.provenance import evidence_json
from yak.presenters import (
    NO_EVIDENCE,
    dangerous_kept,
    evidence_words,
    held_json,
    landing_words,
    local_time,
    mode_words,
    proposal_origin,
    proposal_outcome,
    secrets_reason,
    source_label,
    stale_reason_words,
)
from yak.text import escape_controls


def blame(
    workspace: Workspace,
    origins: Sequence[LineOrigin],
    titles: dict[str, str],
    *,
    as_json: bool,
    ages: Sequence[LineAge] = (),
) -> None:
    """``blame``: one origin per line, a JSON array (each line's ``evidence``: the passage
    behind it, or ``null``; with ``ages``, one per origin: ``first_said``, ``last_confirmed``
    and ``entered``, ISO UTC) or ``v4  hand edit  2026-12-01 10:02  said 2026-11-20
    confirmed 2026-11-20  [1]  text`` lines: the version, its source in the window's words,
    when it entered the document, when it was first said and last confirmed (local dates), the
    markers of the conversations a refresh took the line from, the text. The markers' legend
    (``[1] 01JD…: title``) and why each line a refresh or a proposal wrote is there (``line 3:
    you said in "Set up CI": "…"``, ``lines 1-2, 5: no evidence recorded``;
    ``presenters.evidence_words``) follow on stderr, so stdout stays one line per document line."""
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
                    "evidence": evidence_json(o.evidence),
                    **_age_json(age),
                }
                for o, age in zip(origins, _ages_or_none(ages, origins), strict=True)
            ]
        )
        return
    if not origins:
        print(f"The memory document of {workspace.path} is empty.")
        return
    numbers: dict[str, int] = {}  # each conversation's marker, in order of first use
    for o in origins:
        for sid in o.sessions:
            numbers.setdefault(sid, len(numbers) + 1)
    marks = [
        "[" + ",".join(str(numbers[sid]) for sid in o.sessions) + "]" if o.sessions else ""
        for o in origins
    ]
    version_width = max(len(f"v{o.version}") for o in origins)
    source_width = max(len(source_label(str(o.source))) for o in origins)
    mark_width = max(len(mark) for mark in marks)
    for o, mark, age in zip(origins, marks, _ages_or_none(ages, origins), strict=True):
        cells = [
            f"v{o.version}".ljust(version_width),
            source_label(str(o.source)).ljust(source_width),
            local_time(o.created_at),
        ]
        if age is not None:
            cells.append(f"said {local_date(age.first_said)}")
            cells.append(f"confirmed {local_date(age.last_confirmed)}")
        if mark_width:
            cells.append(mark.ljust(mark_width))
        print("  ".join([*cells, o.text]))
    for sid, number in numbers.items():
        print(f"[{number}] {sid}: {titles.get(sid, '(deleted conversation)')}", file=sys.stderr)
    for said in why_lines(origins, titles):
        print(escape_controls(said), file=sys.stderr)


def stale(
    workspace: Workspace,
    found: Sequence[StaleLine],
    *,
    after_days: int,
    kept: Sequence[int],
    removed: Sequence[int],
    version: int | None,
    as_json: bool,
) -> None:
    """``stale``: a JSON object (``workspace``, ``workspace_id``, ``after_days``, ``kept``,
    ``removed``, ``version`` (after a removal, else null), ``lines``: each ``line``, ``text``,
    ``reasons``, ``last_confirmed``, ``missing``: the references gone) or ``line 3  confirmed
    2026-08-09  aged  text`` rows, what was kept or removed and how to act on the list on
    stderr."""
    if as_json:
        print_json(
            {
                "workspace": workspace.path,
                "workspace_id": workspace.id,
                "after_days": after_days,
                "kept": list(kept),
                "removed": list(removed),
                "version": version,
                "lines": [
                    {
                        "line": s.line,
                        "text": s.text,
                        "reasons": [str(r) for r in s.reasons],
                        "missing": list(s.missing),
                        "last_confirmed": doc_rules.iso_utc(s.last_confirmed),
                    }
                    for s in found
                ],
            }
        )
        return
    if kept:
        print(f"Kept {_numbers(kept)}: confirmed today.", file=sys.stderr)
    if removed:
        print(f"Removed {_numbers(removed)} (version {version}).", file=sys.stderr)
    if not found:
        print(
            f"No stale lines in the memory of {workspace.path}: every line a refresh wrote was "
            f"said or confirmed in the last {after_days} days, and every file or target a "
            "line names is there."
        )
        return
    width = max(len(str(s.line)) for s in found)
    for s in found:
        reasons = ", ".join(stale_reason_words(r) for r in s.reasons)
        if s.missing:
            reasons += f" ({', '.join(escape_controls(m) for m in s.missing)})"
        print(
            f"line {str(s.line).rjust(width)}  confirmed {local_date(s.last_confirmed)}  "
            f"{reasons}  {escape_controls(s.text)}"
        )
    print(
        "Keep a line with 'yak memory stale --keep N', remove it with '--remove N', or edit it "
        "with 'yak memory edit'.",
        file=sys.stderr,
    )


def _numbers(numbers: Sequence[int]) -> str:
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(str(n) for n in numbers)


def _ages_or_none(
    ages: Sequence[LineAge], origins: Sequence[LineOrigin]
) -> Sequence[LineAge | None]:
    """``ages`` (one per origin), or ``None`` for each origin when there are none."""
    return list(ages) if ages else [None] * len(origins)


def _age_json(age: LineAge | None) -> dict[str, str | None]:
    if age is None:
        return {}
    return {
        "first_said": doc_rules.iso_utc(age.first_said),
        "last_confirmed": doc_rules.iso_utc(age.last_confirmed),
        "entered": doc_rules.iso_utc(age.entered),
    }


def local_date(moment: datetime) -> str:
    """``2026-11-30``: the local date of ``moment``."""
    return moment.astimezone().date().isoformat()


def why_lines(origins: Sequence[LineOrigin], titles: Mapping[str, str]) -> list[str]:
    """Why each non-blank line that is not a person's is there, for text ``blame``: ``line
    3: you said in "Set up CI": "…"`` per line with evidence, then one ``lines 1-2, 5: no
    evidence recorded`` for those without (a person's lines say ``hand edit`` already)."""
    said = [
        f"line {o.line}: {evidence_words(o.evidence, titles=titles)}"
        for o in origins
        if o.evidence is not None and o.text.strip()
    ]
    bare = [o.line for o in origins if o.evidence is None and not o.by_person and o.text.strip()]
    if bare:
        said.append(f"{'line' if len(bare) == 1 else 'lines'} {_ranges(bare)}: {NO_EVIDENCE}")
    return said


def _ranges(numbers: Sequence[int]) -> str:
    """``1-2, 5, 7-9`` for ``[1, 2, 5, 7, 8, 9]`` (sorted, distinct)."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def redacted_kinds(flags: Sequence[str]) -> list[str]:
    """The kinds of secret a ``redacted:<kind>`` flag names (``["anthropic_key"]``)."""
    return [flag.removeprefix("redacted:") for flag in flags if flag.startswith("redacted:")]


def proposal_json(proposal: Proposal, *, base: str | None = None) -> dict[str, Any]:
    """A proposal as ``review --json`` lists it (``evidence``: the passages behind the lines it
    adds, as ``blame --json`` gives them); with ``base`` (``review ID``) also its
    ``content`` and ``diff`` (a unified line diff against the base version)."""
    item: dict[str, Any] = {
        "id": proposal.id,
        "status": str(proposal.status),
        "outcome": None
        if proposal.status is ProposalStatus.PENDING
        else proposal.status.outcome_code,
        "origin": str(proposal.origin),
        "client": proposal.client,
        "result_version": proposal.result_version,
        "superseded_by": proposal.superseded_by,
        "conflicts_with": proposal.conflicts_with,
        "base_version": proposal.base_version,
        "reasons": list(proposal.reasons),
        "held": [held_json(held) for held in proposal.held_lines],
        "added": proposal.added,
        "removed": proposal.removed,
        "created_at": doc_rules.iso_utc(proposal.created_at),
        "sessions": list(proposal.session_ids),
        "flags": list(proposal.flags),
        "evidence": [evidence_json(entry) for entry in proposal.evidence],
    }
    if base is not None:
        item["lands"] = lands_json(base, proposal)
        item["content"] = proposal.content
        item["diff"] = unified_diff(
            base,
            proposal.content,
            old_name=f"version {proposal.base_version}",
            new_name=f"proposal {proposal.id}",
        )
    return item


def lands_json(base: str, proposal: Proposal) -> dict[str, Any] | None:
    """Where the proposal's first added line lands: ``{"line", "section"}`` (``section``: the
    title of the section it joins, or null), or null when it adds no line."""
    lands = placement.landing(base, proposal.content)
    return None if lands is None else {"line": lands[0], "section": lands[1]}


def proposals(
    workspace: Workspace,
    found: Sequence[Proposal],
    bases: Mapping[str, str],
    *,
    as_json: bool,
) -> None:
    """``review``: the proposals waiting, oldest first, each with who made it, where its
    lines land and whether it conflicts (``bases``: each one's base text by id)."""
    if as_json:
        print_json(
            [
                {**proposal_json(p), "lands": lands_json(bases[p.id], p) if p.id in bases else None}
                for p in found
            ]
        )
        return
    if not found:
        print(f"No change waits for review in {workspace.path}.")
        return
    for p in found:
        print(
            f"{p.id}  {proposal_origin(p)}  on version {p.base_version}  "
            f"+{p.added} −{p.removed}  {local_time(p.created_at)}"
        )
        if p.conflicts_with is not None:
            print(
                f"  ! conflicts with version {p.conflicts_with}: lines it changes were changed "
                "since (accept it edited with --file, or reject it)"
            )
        lands = placement.landing(bases[p.id], p.content) if p.id in bases else None
        if lands is not None:
            print(f"  - {landing_words(*lands)}")
        for reason in p.reasons:
            print(f"  - {reason}")
        secrets = secrets_reason(p.flags)
        if secrets:
            print(f"  - {secrets}")
    print("See one with 'yak memory review ID'; then 'yak memory accept ID' or 'reject ID'.")


def proposal(proposal: Proposal, base: str, *, as_json: bool) -> None:
    """``review ID``: its reasons, then its diff against the base version."""
    if as_json:
        print_json(proposal_json(proposal, base=base))
        return
    item = proposal_json(proposal, base=base)
    print(
        f"Proposal {proposal.id} ({proposal_outcome(proposal)}) from "
        f"{_lower_first(proposal_origin(proposal))} on version {proposal.base_version}: "
        f"+{proposal.added} −{proposal.removed}"
    )
    if item["lands"] is not None:
        print(f"  - {landing_words(item['lands']['line'], item['lands']['section'])}")
    for reason in proposal.reasons:
        print(f"  - {reason}")
    print()
    write_stdout(item["diff"].encode("utf-8"))


def decided(workspace: Workspace, verb: str, found: Proposal, document: MemoryDocument) -> None:
    """``accept``/``reject``: one line; after an accept, each dangerous line it stored is
    named again on stderr ("Dangerous lines always wait" in docs/memory.md), so accepting
    without reading the review does not hide it."""
    print(
        f"{verb} proposal {found.id}; the memory of {workspace.path} is at version "
        f"{document.version} ({lines(document.lines)})."
    )
    if verb == "Accepted":
        for sentence in dangerous_kept(found, document.content):
            print(f"yak: note: {sentence}", file=sys.stderr)


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
    what = mode_words(workspace.review_mode)
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


def _lower_first(text: str) -> str:
    """``An agent (Claude Code over MCP)`` → ``an agent (Claude Code over MCP)``."""
    return text[:1].lower() + text[1:]
