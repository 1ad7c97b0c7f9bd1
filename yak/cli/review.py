"""``yak memory blame|review|accept|reject|mode|enable|disable``: where each line came from,
the review inbox, and the workspace's switches ("Provenance" and "Review" in
docs/memory.md).

- ``blame [--json]``: each line's origin (version, source, time, conversations) and age
  (first said, last confirmed, entered: ``yak.memory.freshness.age``).
- ``review [ID] [--json]``: the proposals waiting, oldest first, with who made them, where
  their lines land and any conflict; with ``ID``, its reasons and its diff against the version
  it was based on (``--json``: ``content`` and ``diff`` too).
- ``accept ID [--file F] [--json]``: apply it on its base version, the current one (waiting
  proposals are rebased on every write): exit 5 when it conflicts with the current version,
  exit 2 with what became of it when it no longer waits; ``--file`` accepts it as edited in
  ``F`` ("The inbox" in docs/memory.md).
- ``reject ID [--json]``: drop it; its added lines become tombstones (exit 2 when it no longer
  waits).
- ``mode [auto|review] [--json]``: print or set the review mode.
- ``enable`` / ``disable``: switch the workspace's memory on or off (no injection, no refresh).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from yak.cli import review_output
from yak.cli.context import Context, workspace_path, writable_workspace
from yak.cli.parsing import workspace_command
from yak.domain import ReviewMode
from yak.errors import UsageError
from yak.memory import document as doc_rules
from yak.memory.files import read_input_file

if TYPE_CHECKING:
    from yak.core import Core

PROPOSAL_ID = "a proposal id (or 6+ characters of it)"


def _blame_parser(p: argparse.ArgumentParser) -> None:
    workspace_command(p, cmd_blame, reads_only=True)


def _review_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID", nargs="?", help=PROPOSAL_ID)
    workspace_command(p, cmd_review, reads_only=True)


def _accept_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID", help=PROPOSAL_ID)
    p.add_argument(
        "--file",
        metavar="F",
        help="accept the proposal as edited in F (UTF-8): its lines count as yours",
    )
    workspace_command(p, cmd_accept)


def _reject_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", metavar="ID", help=PROPOSAL_ID)
    workspace_command(p, cmd_reject)


def _mode_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "mode", nargs="?", choices=[str(mode) for mode in ReviewMode], help="the mode to set"
    )
    workspace_command(p, cmd_mode)


def _enable_parser(p: argparse.ArgumentParser) -> None:
    workspace_command(p, cmd_enable)


def _disable_parser(p: argparse.ArgumentParser) -> None:
    workspace_command(p, cmd_disable)


PARSERS = {
    "blame": _blame_parser,
    "review": _review_parser,
    "accept": _accept_parser,
    "reject": _reject_parser,
    "mode": _mode_parser,
    "enable": _enable_parser,
    "disable": _disable_parser,
}


def cmd_blame(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory blame``: each line's origin.

    Raises:
        UnreadableDocument: the stored document is not UTF-8 (exit 1, as ``show``).
    """

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if stored:
            # The lines come from the revisions; a stored document that is not UTF-8 (written
            # by another program) is not what they say: its one-line error, as ``show``'s.
            await core.memory.read(workspace.id)
        origins = await core.memory.blame(workspace.id) if stored else []
        ages = await core.memory.line_ages(workspace.id) if origins else []
        titles: dict[str, str] = {}
        if origins and not args.json:
            titles = {s.id: s.title for s in await core.chat.sessions(workspace.id)}
        review_output.blame(workspace, origins, titles, as_json=args.json, ages=ages)
        return 0

    return ctx.run(work)


def cmd_review(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory review [ID]``: the inbox, or one proposal's reasons and diff."""

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.id is None:
            found = await core.review.proposals(workspace.id) if stored else []
            bases = {
                p.id: await core.memory.version_text(workspace.id, p.base_version) for p in found
            }
            review_output.proposals(workspace, found, bases, as_json=args.json)
            return 0
        if not stored:
            raise UsageError(f"{workspace.path} has no proposals.")
        proposal = await core.review.get_proposal(workspace.id, args.id)
        base = await core.memory.version_text(workspace.id, proposal.base_version)
        review_output.proposal(proposal, base, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_accept(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory accept ID [--file F]``."""

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        content = None
        if args.file is not None:
            content = doc_rules.decode_utf8(read_input_file(Path(args.file)), what=args.file)
        found = await core.review.get_proposal(workspace.id, args.id)
        document = await core.review.accept(workspace.id, found.id, content=content)
        if args.json:
            review_output.decided_json(
                workspace, "accepted", found, document, ctx.failed_sync(workspace.id)
            )
        else:
            review_output.decided(workspace, "Accepted", found, document)
        return 0

    return ctx.run(work)


def cmd_reject(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory reject ID``."""

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        found = await core.review.reject(workspace.id, args.id)
        document = await core.memory.read(workspace.id)
        if args.json:
            review_output.decided_json(workspace, "rejected", found, document)
        else:
            review_output.decided(workspace, "Rejected", found, document)
        return 0

    return ctx.run(work)


def cmd_mode(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory mode [auto|review]``."""

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args, folder_setting=args.mode is not None)
        changed = False
        if args.mode is not None and args.mode != str(workspace.review_mode):
            workspace = await core.memory.set_review_mode(workspace.id, args.mode)
            changed = True
        review_output.mode(workspace, changed=changed, as_json=args.json)
        return 0

    return ctx.run(work)


def _switch(args: argparse.Namespace, ctx: Context, *, enabled: bool) -> int:

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args, folder_setting=True)
        workspace = await core.workspaces.set_memory_enabled(workspace.id, enabled=enabled)
        review_output.memory_switch(workspace, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_enable(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory enable``: memory on (injection and refresh)."""
    return _switch(args, ctx, enabled=True)


def cmd_disable(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory disable``: memory off (no injection, no refresh; nothing is deleted)."""
    return _switch(args, ctx, enabled=False)
