"""``yak memory stats [-w DIR | --all] [--json]``: what the memory costs ("Cost" in
docs/memory.md).

For one workspace (``-w DIR``, default the current directory), or with ``--all`` every
workspace with a refresh attempt in the last 30 days: the document's size in tokens (an
estimate, ``MemoryDocument.tokens``), which every chat request in the workspace carries, and
its refreshes over the last 7 and 30 days (``MemoryReader.upkeep``): attempts, model calls,
tokens, outcomes and the rewrite forms their replies were read in (an attempt that fell back
from the tool to edits counts in both). Reads only (the database may be read-only); the lines
are worded by ``yak.presenters.upkeep_line`` and ``form_counts``.

``--json`` prints one object per workspace (``--all``: ``{"workspaces": [...]}``, most tokens in
30 days first)::

    {"workspace": PATH, "workspace_id": ID, "lines": N, "tokens": N,
     "last_7_days": {"refreshes": N, "calls": N, "input_tokens": N,
                     "cache_write_tokens": N, "cache_read_tokens": N, "output_tokens": N,
                     "outcomes": {"applied": N, ...},
                     "forms": {"tool": N, "edits": N, "whole": N}},
     "last_30_days": {...}}
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from yak import presenters
from yak.cli.context import Context, workspace_path
from yak.cli.parsing import workspace_command
from yak.cli.terminal import lines, print_json
from yak.domain import UPKEEP_WINDOWS_DAYS, UpkeepFigures, UpkeepStats
from yak.errors import UsageError

if TYPE_CHECKING:
    from yak.core import Core
    from yak.domain import Workspace


def _stats_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--all",
        action="store_true",
        help="every workspace with a refresh in the last 30 days (not with -w)",
    )
    workspace_command(p, cmd_stats, reads_only=True, in_place=True)


PARSERS = {"stats": _stats_parser}


def cmd_stats(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory stats``: the document's size in tokens and its refreshes' cost; exit 2
    for ``--all`` with ``-w`` (one workspace or all of them, not both)."""
    if args.all and getattr(args, "workspace", None) is not None:
        raise UsageError("give -w DIR or --all, not both")

    async def work(core: Core) -> int:
        if args.all:
            upkeep = await core.memory.upkeep()
            rows = []
            for workspace_id, stats in upkeep.items():
                workspace = await core.workspaces.get(workspace_id)
                rows.append(await _row(core, workspace, True, stats))
            rows.sort(key=lambda row: -_tokens(row[3].window(UPKEEP_WINDOWS_DAYS[-1])))
        else:
            workspace, stored = await core.workspaces.for_read(workspace_path(args))
            upkeep = await core.memory.upkeep(workspace.id) if stored else {}
            stats = upkeep.get(workspace.id, UpkeepStats(workspace.id))
            rows = [await _row(core, workspace, stored, stats)]
        if args.json:
            objects = [_json(*row) for row in rows]
            print_json({"workspaces": objects} if args.all else objects[0])
        elif args.all and not rows:
            print("No workspace had a memory refresh in the last 30 days.")
        else:
            for n, row in enumerate(rows):
                if n:
                    print()
                _print(*row)
        return 0

    return ctx.run(work)


async def _row(
    core: Core, workspace: Workspace, stored: bool, stats: UpkeepStats
) -> tuple[Workspace, int, int, UpkeepStats]:
    """The workspace, its document's lines and estimated tokens, and its upkeep."""
    if not stored:
        return workspace, 0, 0, stats
    document = await core.memory.read(workspace.id)
    return workspace, document.lines, document.tokens, stats


def _tokens(figures: UpkeepFigures) -> int:
    return figures.usage.total_input_tokens + figures.usage.output_tokens


def _print(workspace: Workspace, document_lines: int, tokens: int, stats: UpkeepStats) -> None:
    print(
        f"{workspace.path}: memory of {lines(document_lines)}, "
        f"{presenters.token_size(tokens)} in every chat request"
    )
    for days in UPKEEP_WINDOWS_DAYS:
        label = f"last {days} days:"
        figures = stats.window(days)
        forms = presenters.form_counts(figures)
        print(f"  {label:<14}{presenters.upkeep_line(figures)}{' · ' + forms if forms else ''}")


def _json(
    workspace: Workspace, document_lines: int, tokens: int, stats: UpkeepStats
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "workspace": workspace.path,
        "workspace_id": workspace.id,
        "lines": document_lines,
        "tokens": tokens,
    }
    for days in UPKEEP_WINDOWS_DAYS:
        figures = stats.window(days)
        usage = figures.usage
        item[f"last_{days}_days"] = {
            "refreshes": figures.refreshes,
            "calls": figures.calls,
            "input_tokens": usage.input_tokens,
            "cache_write_tokens": usage.cache_creation_input_tokens,
            "cache_read_tokens": usage.cache_read_input_tokens,
            "output_tokens": usage.output_tokens,
            "outcomes": {str(status): count for status, count in figures.outcomes},
            "forms": {str(form): count for form, count in figures.forms},
        }
    return item
