"""``yak memory reattach``: a folder's memory found elsewhere ("Scopes" in
docs/workspaces.md).

- ``reattach OLD [-w DIR] [--json]``: move the memory, history and conversations of the
  workspace at OLD (a folder that no longer exists: renamed or moved) to DIR; exit 2 when DIR
  already has a memory of its own.
- ``reattach OLD --decline [-w DIR]``: OLD is not DIR's predecessor; ``show`` and the app stop
  offering it there.
- ``link [-w DIR] [--to FOLDER] [--json]``: DIR (a git worktree, by default of FOLDER's
  repository) uses FOLDER's memory document from now on; ``unlink`` ends that.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, workspace_path
from yak.cli.parsing import workspace_command
from yak.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable

    from yak.core import Core
    from yak.domain import Workspace


def _reattach_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the folder's previous path (as 'show' names it)")
    p.add_argument(
        "--decline",
        action="store_true",
        help="OLD is not this folder renamed: stop offering it here",
    )
    workspace_command(p, cmd_reattach)


def _link_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--to",
        metavar="FOLDER",
        default=None,
        help="the folder whose memory to share (default: the worktree's main checkout)",
    )
    workspace_command(p, cmd_link)


def _unlink_parser(p: argparse.ArgumentParser) -> None:
    workspace_command(p, cmd_unlink)


PARSERS = {"reattach": _reattach_parser, "link": _link_parser, "unlink": _unlink_parser}


def cmd_reattach(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory reattach OLD``: exit 0 moved (or declined); 2 OLD is not a stored
    workspace, its folder still exists, or the folder here already has a memory."""

    async def work(core: Core) -> int:
        here = await core.workspaces.for_write(workspace_path(args))
        old = await core.workspaces.find(args.old)
        if old is None:
            raise UsageError(f"no workspace was stored for {args.old}")
        if old.id == here.id:
            raise UsageError(f"{args.old} is this workspace already")
        if os.path.isdir(old.path):
            raise UsageError(
                f"{old.path} still exists; re-attach only the memory of a folder that is gone "
                "(Settings › Memory re-attaches any orphan)"
            )
        if args.decline:
            await core.workspaces.decline_rename(here.path, old.id)
            if args.json:
                output.print_json({"declined": old.path, "workspace": here.path})
            else:
                print(f"{old.path} will no longer be offered to {here.path}.")
            return 0
        moved = await core.workspaces.reattach(old.id, here.path)

        def sentence(size: str) -> str:
            return f"Moved the memory of {old.path} ({size}) and its history to {moved.path}."

        return await _said(core, args, moved, {"from": old.path}, sentence)

    return ctx.run(work)


def cmd_link(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory link``: exit 0 linked; 2 no main checkout found and no ``--to``, the same
    folder, a folder with a memory of its own, or a target that shares another's itself."""

    async def work(core: Core) -> int:
        known = await core.workspaces.find(workspace_path(args))
        before = None if known is None else await core.workspaces.linked_to(known.id)
        workspace, target = await core.workspaces.link(workspace_path(args), args.to)
        verb = "already shares" if before is not None and before.id == target.id else "now shares"

        def sentence(size: str) -> str:
            return f"{workspace.path} {verb} the memory of {target.path} ({size})."

        return await _said(core, args, workspace, {"linked_to": target.path}, sentence)

    return ctx.run(work)


def cmd_unlink(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory unlink``: exit 0 unlinked; 2 the folder shared no other memory."""

    async def work(core: Core) -> int:
        target = await core.workspaces.unlink(workspace_path(args))
        workspace, _stored = await core.workspaces.for_read(workspace_path(args))
        if args.json:
            output.print_json({"workspace": workspace.path, "unlinked_from": target.path})
        else:
            print(f"{workspace.path} no longer shares the memory of {target.path}.")
        return 0

    return ctx.run(work)


async def _said(
    core: Core,
    args: argparse.Namespace,
    workspace: Workspace,
    fields: dict[str, str],
    sentence: Callable[[str], str],
) -> int:
    """What ``reattach`` or ``link`` did to ``workspace``: with ``--json`` its path and id,
    ``fields``, and its memory's version and lines; else ``sentence`` of the memory's size
    (``12 lines, version 3``). Returns 0."""
    document = await core.memory.read(workspace.id)
    if args.json:
        output.print_json(
            {
                "workspace": workspace.path,
                "workspace_id": workspace.id,
                **fields,
                "version": document.version,
                "lines": document.lines,
            }
        )
    else:
        print(sentence(f"{output.lines(document.lines)}, version {document.version}"))
    return 0
