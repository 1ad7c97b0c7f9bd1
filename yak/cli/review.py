"""``yak memory blame|review|accept|reject|mode|enable|disable``: where each line came from,
the review inbox, and the workspace's switches ("Provenance" and "Review" in
docs/architecture.md).

- ``blame [--json]``: each line's origin (version, source, time, conversations).
- ``review [ID] [--json]``: the proposals waiting, oldest first; with ``ID``, its reasons and
  its diff against the version it was based on (``--json``: ``content`` and ``diff`` too).
- ``accept ID [--file F] [--json]``: apply it on its base version (exit 5 when the memory
  changed since, or it no longer waits); ``--file`` accepts it as edited in ``F``.
- ``reject ID [--json]``: drop it; its added lines become tombstones.
- ``mode [auto|review] [--json]``: print or set the review mode.
- ``enable`` / ``disable``: switch the workspace's memory on or off (no injection, no refresh).

Building the parser imports nothing beyond ``argparse`` (see ``yak.cli``).
"""

from __future__ import annotations

import argparse

from yak.cli import workspace_path, writable_workspace

TYPE_CHECKING = False  # not ``typing``'s: importing it would slow ``yak --help`` (see yak.cli)
if TYPE_CHECKING:
    from collections.abc import Callable

    from yak.cli import Context
    from yak.core import Core

MODES = ("auto", "review")  # ``yak.domain.ReviewMode``, spelled here for a light parser


def register(
    cmds: argparse._SubParsersAction,
    workspace_option: Callable[[argparse.ArgumentParser], None],
    json_option: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``blame``, ``review``, ``accept``, ``reject``, ``mode``, ``enable`` and ``disable``
    to ``yak memory``."""
    p = cmds.add_parser("blame", help="where each line of the document came from")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_blame, reads_only=True)

    p = cmds.add_parser(
        "review",
        help="rewrites waiting for review; with ID, its reasons and diff",
        description="List the proposals waiting for review, oldest first; with ID, show its "
        "reasons and its diff against the version it was based on. Accept it with "
        "'yak memory accept ID' or drop it with 'yak memory reject ID'.",
    )
    p.add_argument("id", metavar="ID", nargs="?", help="a proposal id (or 6+ characters of it)")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_review, reads_only=True)

    p = cmds.add_parser("accept", help="apply a proposal (optionally as edited in a file)")
    p.add_argument("id", metavar="ID", help="a proposal id (or 6+ characters of it)")
    p.add_argument(
        "--file",
        metavar="F",
        help="accept the proposal as edited in F (UTF-8): its lines count as yours",
    )
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_accept)

    p = cmds.add_parser("reject", help="drop a proposal; its added lines stay out")
    p.add_argument("id", metavar="ID", help="a proposal id (or 6+ characters of it)")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_reject)

    p = cmds.add_parser(
        "mode",
        help="print or set the review mode (auto or review)",
        description="auto: rewrites apply, but risky ones wait for review (removing or "
        "changing your lines, bringing back a line you deleted or rejected, removing over a "
        "quarter of the lines, risky standing instructions). review: every rewrite waits.",
    )
    p.add_argument("mode", nargs="?", choices=MODES, help="the mode to set")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_mode)

    for name, on in (("enable", True), ("disable", False)):
        p = cmds.add_parser(
            name,
            help="switch this workspace's memory "
            + ("on" if on else "off (no injection, no refresh)"),
        )
        workspace_option(p)
        json_option(p)
        p.set_defaults(func=cmd_enable if on else cmd_disable)


def cmd_blame(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory blame``: each line's origin."""
    from yak.cli import review_output

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        origins = await core.memory.blame(workspace.id) if stored else []
        titles: dict[str, str] = {}
        if origins and not args.json:
            titles = {s.id: s.title for s in await core.chat.sessions(workspace.id)}
        review_output.blame(workspace, origins, titles, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_review(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory review [ID]``: the inbox, or one proposal's reasons and diff."""
    from yak.cli import review_output
    from yak.errors import UsageError

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.id is None:
            found = await core.review.proposals(workspace.id) if stored else []
            review_output.proposals(workspace, found, as_json=args.json)
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
    from pathlib import Path

    from yak.cli import review_output
    from yak.memory import document as doc_rules

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        content = None
        if args.file is not None:
            from yak.memory.files import read_input_file

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
    from yak.cli import review_output

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
    from yak.cli import review_output

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
    from yak.cli import review_output

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
