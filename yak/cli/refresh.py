"""``yak memory refresh [-w DIR] [--rebuild] [--json]``: a forced refresh of one workspace.

Bypasses the debounce (there is no queue in the CLI), runs the guarded rewrite once (plus its
one re-run when a hand edit lands meanwhile) and reports the outcome. Exit codes come from
``RefreshStatus.exit_code``: 0 applied / up to date, 3 refused by a guard, 4 provider failure,
5 superseded. With ``--json`` stdout carries one object: ``status``, ``reason``, ``version``,
``lines``, and ``workspace``, ``workspace_id``, ``flags``, ``model``, ``input_tokens``,
``output_tokens``, ``duration_s``, ``session_ids``, ``attempt_id``, ``rebuild``. Without it, one
line: on stdout when the exit code is 0, else on stderr.

A folder Yak has never stored has no conversations: it is ``up_to_date`` and nothing is
created. The command acts only on the workspace it names (DESIGN.md section 4).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from yak import paths
from yak.cli.memory import folder_error
from yak.domain import RefreshOutcome, RefreshStatus
from yak.errors import UsageError


def run(args: argparse.Namespace, ctx: Any) -> int:
    """Run ``yak memory refresh``; returns the exit status.

    Args:
        args: parsed arguments with ``workspace`` (``-w``; ``None`` for the current directory),
            ``rebuild`` and ``json``.
        ctx: the CLI context (``db``, ``settings``).

    Raises:
        WorkspaceNotFound: the folder does not exist and no stored workspace has its key.
        StoreError: the database cannot be read or written.
    """
    from yak.db.conversations import ConversationStore
    from yak.memory.store import MemoryStore

    store = MemoryStore(ctx.db)
    path = args.workspace if getattr(args, "workspace", None) is not None else os.getcwd()
    try:
        key = paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    rebuild = bool(getattr(args, "rebuild", False))
    workspace = store.find_workspace(path)
    if workspace is None:
        if paths.folder_identity(key) is None:
            raise folder_error(path)
        outcome = RefreshOutcome(status=RefreshStatus.UP_TO_DATE,
                                 reason="no conversation in this workspace yet",
                                 workspace_id=paths.workspace_id_for(key), version=0, lines=0)
        return _report(outcome, workspace_path=key, rebuild=rebuild, as_json=args.json)

    refresher_args = {"store": store, "conversations": ConversationStore(ctx.db),
                      "settings": lambda: ctx.settings}
    with _quiet_warnings():
        outcome = asyncio.run(_refresh(workspace.id, rebuild=rebuild,
                                       base_url=ctx.settings.base_url,
                                       refresher_args=refresher_args))
    return _report(outcome, workspace_path=workspace.path, rebuild=rebuild, as_json=args.json)


async def _refresh(workspace_id: str, *, rebuild: bool, base_url: str | None,
                   refresher_args: dict[str, Any]) -> RefreshOutcome:
    """One refresh on this loop, with one provider closed before the loop ends."""
    from yak.llm.provider import Provider
    from yak.memory.refresh import MemoryRefresher

    provider = Provider(base_url=base_url)
    try:
        refresher = MemoryRefresher(provider_factory=lambda: provider, **refresher_args)
        return await refresher.refresh(workspace_id, rebuild=rebuild)
    finally:
        await provider.aclose()


@contextlib.contextmanager
def _quiet_warnings() -> Iterator[None]:
    """The outcome line already says why a refresh failed; the provider's and the refresher's
    warning log lines would make it a second line on stderr, so they are held back here."""
    loggers = [logging.getLogger(name) for name in ("yak.llm", "yak.memory")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def summary_line(outcome: RefreshOutcome) -> str:
    """The one-line human report, e.g. ``applied: version 4, 57 lines`` or
    ``refused_floor: the reply kept 12 of 150 lines (8%; …); the document is unchanged.``"""
    status, reason = outcome.status, outcome.reason.rstrip(". ")
    size = f"version {outcome.version}, {outcome.lines} line{'s' if outcome.lines != 1 else ''}"
    if status is RefreshStatus.APPLIED:
        return f"applied: {size}" + (f" ({reason})" if reason else "")
    if status is RefreshStatus.UP_TO_DATE:
        return f"up_to_date: {reason}; {size}" if reason else f"up_to_date: {size}"
    return f"{status}: {reason}; the document is unchanged ({size})."


def _report(outcome: RefreshOutcome, *, workspace_path: str, rebuild: bool,
            as_json: bool) -> int:
    code = outcome.status.exit_code
    if as_json:
        payload = {
            "status": str(outcome.status), "reason": outcome.reason,
            "version": outcome.version, "lines": outcome.lines,
            "workspace": workspace_path, "workspace_id": outcome.workspace_id,
            "flags": list(outcome.flags), "model": outcome.model,
            "input_tokens": outcome.usage.input_tokens,
            "output_tokens": outcome.usage.output_tokens,
            "duration_s": round(outcome.duration_s, 3),
            "session_ids": list(outcome.session_ids), "attempt_id": outcome.attempt_id,
            "rebuild": rebuild,
        }
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    elif code == 0:
        print(summary_line(outcome))
    else:
        print(f"yak: {summary_line(outcome)}", file=sys.stderr)
    return code
