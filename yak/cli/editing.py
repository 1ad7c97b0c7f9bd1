"""``yak memory edit`` and ``yak memory delete``: the commands that use the terminal, handing it
to an editor or asking on it.

- ``edit``: a copy of the document in ``$VISUAL`` / ``$EDITOR`` (``vi`` in a terminal), saved
  when the editor exits 0; a refused save keeps the file and prints its path.
- ``delete [--yes]``: empty the document as a ``clear`` revision (restorable); without
  ``--yes`` it asks on the terminal, and refuses without one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, writable_workspace
from yak.cli.parsing import workspace_option
from yak.errors import UsageError, YakError
from yak.memory import document as doc_rules

if TYPE_CHECKING:
    from yak.core import Core


def _edit_parser(p: argparse.ArgumentParser) -> None:
    workspace_option(p)
    p.set_defaults(func=cmd_edit)


def _delete_parser(p: argparse.ArgumentParser) -> None:
    workspace_option(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_delete)


PARSERS = {"edit": _edit_parser, "delete": _delete_parser}


def _editor_command() -> list[str]:
    """The editor from ``$VISUAL``, else ``$EDITOR``, else ``vi`` when run in a terminal.

    Raises:
        UsageError: neither variable is set and stdin or stdout is not a terminal (``vi``
            would draw its screen into a pipe or a file).
    """
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or ""
    command = shlex.split(editor, posix=os.name != "nt") if editor.strip() else []
    if command:
        return command
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError("no editor: set $VISUAL or $EDITOR, or use yak memory set")
    return ["vi"]


@contextlib.contextmanager
def _ctrl_c(handler: Callable[[int, FrameType | None], object]) -> Iterator[None]:
    """Inside the block Ctrl-C goes to ``handler`` instead of cancelling the command (only
    the main thread can change it; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_editor(command: list[str]) -> int:
    """Run the editor and wait for it; returns its exit status.

    Ctrl-C belongs to the editor meanwhile (many use it), so here it is caught and ignored;
    the editor itself gets the default handling (a caught signal is reset when it starts)."""
    with _ctrl_c(lambda _signum, _frame: None):
        return subprocess.run(command, check=False).returncode


def cmd_edit(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory edit``: edit a copy in ``$VISUAL``/``$EDITOR`` (else ``vi`` in a terminal)
    and save it.

    The copy is a temporary file. When the save is refused (over the ceiling, or the memory
    changed meanwhile) or the editor fails, the file is kept and its path printed, so nothing
    typed is lost. Without an editor variable and without a terminal it refuses (exit 2)."""
    editor = _editor_command()

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        document = await core.memory.read(workspace.id)
        handle, name = tempfile.mkstemp(prefix=f"yak-memory-{workspace.name}-", suffix=".txt")
        with os.fdopen(handle, "wb") as out:
            out.write(doc_rules.export_text(document))
        command = [*editor, name]
        try:
            status = _run_editor(command)
        except OSError as exc:
            os.unlink(name)
            raise UsageError(
                f"cannot start the editor {command[0]!r} ({exc.strerror or exc}); set "
                "VISUAL or EDITOR to an editor that waits until you close the file"
            ) from None
        if status != 0:
            output.edit_kept(f"the editor exited with status {status}; nothing was saved.", name)
            return 2
        try:
            text = doc_rules.decode_utf8(Path(name).read_bytes(), what="The edited file")
        except UsageError as exc:
            output.edit_kept(str(exc), name)
            return exc.exit_code
        if text == document.content:
            os.unlink(name)
            output.no_edit()
            return 0
        try:
            # An emptied file is refused like an empty `set`: emptying is `delete`, which asks.
            saved = await core.memory.save(
                workspace.id, text, expected_version=document.version, require_text=True
            )
        except YakError as exc:  # over the ceiling, changed meanwhile, read-only…: keep the text
            output.edit_kept(str(exc), name)
            return exc.exit_code
        os.unlink(name)
        output.saved(workspace, saved, changed=saved.version != document.version, as_json=False)
        return 0

    return ctx.run(work)


def cmd_delete(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory delete``: empty the document as a ``clear`` revision (restorable)."""

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        document = await core.memory.read(workspace.id)
        if not document.content:
            output.already_empty(workspace)
            return 0
        if not args.yes:
            if not sys.stdin.isatty():
                raise UsageError(
                    "refusing to delete without --yes (no terminal to ask for confirmation)"
                )
            answer = _ask(output.delete_question(workspace, document))
            if answer.strip().lower() not in {"y", "yes"}:
                output.nothing_deleted()
                return 0
        cleared = await core.memory.clear(workspace.id, expected_version=document.version)
        previous = await core.memory.history(workspace.id)
        kept = next((r for r in previous if r.version == document.version), None)
        output.deleted(workspace, cleared, kept)
        return 0

    return ctx.run(work)


def _ask(prompt: str) -> str:
    """The answer typed on the terminal; Ctrl-C at the prompt answers no."""
    print(prompt, end="", file=sys.stderr, flush=True)
    with _ctrl_c(signal.default_int_handler):
        try:
            return sys.stdin.readline()
        except KeyboardInterrupt:
            return ""
