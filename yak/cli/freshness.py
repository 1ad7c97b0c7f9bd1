"""``yak memory stale``: the lines a refresh wrote that nobody has said or confirmed for a while
("Age and staleness" in docs/memory.md).

- ``stale [--json]``: the stale lines, numbered as in the document, with when each was last said
  or confirmed and why it is stale.
- ``stale --keep N [N …]``: a person confirms those lines still hold (their age counts from
  now; the document is not written). ``stale --remove N [N …]``: a hand edit that removes them
  (each gets its tombstone, like any hand removal). Editing a line is ``yak memory edit``.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TYPE_CHECKING

from yak.cli import review_output
from yak.cli.context import Context, workspace_path, writable_workspace
from yak.cli.parsing import workspace_command
from yak.errors import UsageError

if TYPE_CHECKING:
    from yak.core import Core


def _stale_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--keep",
        metavar="N",
        type=int,
        nargs="+",
        default=[],
        help="confirm that lines N (numbers from this list or 'blame') still hold: they leave "
        "the list, and their age counts from now",
    )
    p.add_argument(
        "--remove",
        metavar="N",
        type=int,
        nargs="+",
        default=[],
        help="remove lines N from the document (a hand edit: a refresh will not bring them back)",
    )
    workspace_command(p, cmd_stale)


PARSERS = {"stale": _stale_parser}


def cmd_stale(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory stale [--keep N…] [--remove N…]``: keep or remove first, then the list."""
    both = set(args.keep) & set(args.remove)
    if both:
        raise UsageError(f"Line {min(both)} cannot be both kept and removed.")

    async def work(core: Core) -> int:
        if args.keep or args.remove:
            workspace = await writable_workspace(core, args)
            stored = True
        else:
            workspace, stored = await core.workspaces.for_read(workspace_path(args))
        after_days = core.settings.current().stale_after_days
        if args.keep:
            await core.memory.keep_lines(workspace.id, args.keep)
        version = None
        if args.remove:
            version = (await core.memory.remove_lines(workspace.id, args.remove)).version
        today = datetime.now().astimezone().date()
        found = (
            await core.memory.stale(workspace.id, today=today, after_days=after_days)
            if stored
            else []
        )
        review_output.stale(
            workspace,
            found,
            after_days=after_days,
            kept=args.keep,
            removed=args.remove,
            version=version,
            as_json=args.json,
        )
        return 0

    return ctx.run(work)
