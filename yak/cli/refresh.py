"""``yak memory refresh [-w DIR] [--rebuild] [--timeout SECONDS] [--json]``: a forced refresh of
one workspace (``--timeout`` bounds each model request, retries included).

Goes through the core's refresh scheduler like the app's Refresh button: the debounce and the
API-key gate are bypassed, the guarded rewrite runs once (plus its one re-run when a hand edit
lands meanwhile) and the outcome is reported (``yak.cli.output.refresh_outcome``). Exit codes
come from ``output.refresh_exit_code``: 0 applied / up to date, 1 database failure, 3 refused
by a guard, 4 provider failure, 5 superseded. With ``--json`` stdout carries one object:
``status``, ``reason``, ``version``, ``lines``, and ``workspace``, ``workspace_id``,
``flags``, ``model``, ``input_tokens``, ``output_tokens``, ``duration_s``, ``session_ids``,
``attempt_id``, ``rebuild``. The one-line report goes to stdout when the exit code is 0
(without ``--json``), else to stderr (with or without it).

The workspace is resolved like a command that reads: a stored workspace is refreshed even when
its folder is gone (its conversations are stored); a folder Yak has never stored has no
conversations, so it is ``up_to_date`` and nothing is created. The command acts only on the
workspace it names.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, add_timeout_option, apply_timeout, workspace_path
from yak.cli.parsing import json_option, workspace_option
from yak.domain import RefreshOutcome, RefreshStatus
from yak.events import RefreshWaiting

if TYPE_CHECKING:
    from yak.core import Core
    from yak.domain import Workspace

NEVER_STORED = "no conversation in this workspace yet"


def _refresh_parser(p: argparse.ArgumentParser) -> None:
    add_timeout_option(p)
    workspace_option(p)
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="rewrite from the most recent conversations, ignoring watermarks",
    )
    json_option(p)
    p.set_defaults(func=run)


PARSERS = {"refresh": _refresh_parser}


def run(args: argparse.Namespace, ctx: Context) -> int:
    """Run ``yak memory refresh``; returns the exit status.

    Args:
        args: parsed arguments with ``workspace`` (``-w``; ``None`` for the current directory),
            ``rebuild`` and ``json``.
        ctx: the command line's context.

    Raises:
        WorkspaceNotFound: the folder does not exist and no stored workspace has its key.
        StoreError: the database cannot be read or written.
    """
    rebuild = bool(getattr(args, "rebuild", False))
    apply_timeout(args, ctx)

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        code: list[int] = []
        with output.warnings_held_unless(lambda: code == [0]):
            code.append(await _refresh(core, workspace, stored))
        return code[0]

    async def _refresh(core: Core, workspace: Workspace, stored: bool) -> int:
        if stored:
            waiting = core.bus.subscribe(
                RefreshWaiting,
                lambda event: (
                    output.note(
                        "Another refresh of this workspace is running (a window, a command or "
                        "another machine); waiting for it to finish…"
                    )
                    if event.workspace_id == workspace.id
                    else None
                ),
            )
            try:
                with output.quiet_warnings():
                    outcome = await core.refresh.refresh_now(workspace.id, rebuild=rebuild)
            finally:
                waiting()
        else:
            outcome = RefreshOutcome(
                status=RefreshStatus.UP_TO_DATE,
                reason=NEVER_STORED,
                workspace_id=workspace.id,
                version=0,
                lines=0,
            )
        return output.refresh_outcome(
            outcome,
            workspace_path=workspace.path,
            rebuild=rebuild,
            as_json=args.json,
            failed_sync=ctx.failed_sync(workspace.id),
        )

    return ctx.run(work)
