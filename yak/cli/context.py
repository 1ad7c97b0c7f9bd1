"""Running a parsed command: its log, its :class:`Context` (the data directory and the
application core, opened on first use) and its errors as one line with an exit code; and what
the command modules share (the workspace a command acts on, ``--timeout``).

Imported once a command line has parsed (``yak.cli.main``), never for ``--help``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from yak.aio import run_in_place
from yak.cli import output
from yak.config import MAX_TIMEOUT_S, MIN_TIMEOUT_S
from yak.errors import YakError
from yak.logfile import close_log, open_log
from yak.paths import data_dir
from yak.text import shown

if TYPE_CHECKING:
    from yak.core import Core
    from yak.domain import Workspace
    from yak.events import SyncedFileFailed

log = logging.getLogger("yak.cli")  # the log file names the command line
# Seconds a command has, after Ctrl-C, to keep what was said and close before it just ends.
INTERRUPT_GRACE_S = 10.0
T = TypeVar("T")


class Context:
    """What a command needs: the data directory and the application core, opened on first use.

    ``reads_only`` is set for commands that never write (a parser's ``reads_only=True``
    default): their database may be opened read-only when it cannot be written (an immutable
    or read-only folder), so ``show``/``list``/``history``/``export`` still work there.
    ``in_place`` is set for those four (``in_place=True``): they need nothing but the memory
    service and the workspace registry, and run their core without an event loop (:meth:`run`).
    ``overrides`` are this command's settings (``Settings`` field → value, from its flags:
    ``yak ask --model``, ``--timeout``), applied over the environment and ``settings.json``
    through the settings service; set them before the core is opened.
    """

    def __init__(
        self,
        data_dir: Path,
        json: bool = False,
        reads_only: bool = False,
        database_url: str | None = None,
        in_place: bool = False,
    ) -> None:
        self.data_dir = data_dir
        self.database_url = database_url
        self.json = json
        self.reads_only = reads_only
        self.in_place = in_place and reads_only
        self.overrides: dict[str, Any] = {}
        self._core: Core | None = None
        self.failed_syncs: list[SyncedFileFailed] = []  # said on stderr as they came
        self._interrupted = False  # Ctrl-C cancelled the work (see _stop_on_ctrl_c)
        self._skippable: Any = None  # the task a Ctrl-C skips instead (see skippable)

    @property
    def core(self) -> Core:
        """The application core (opened, and its database migrated, on first use).

        Raises:
            SchemaTooNew: a newer Yak wrote the database. StoreError: it cannot be opened.
        """
        if self._core is None:
            # The core and its adapters: only for a command that opens the database.
            from yak.bootstrap import open_core

            self._core = open_core(
                self.data_dir,
                database_url=self.database_url,
                read_only_fallback=self.reads_only,
                in_place=self.in_place,
            )
            if self.overrides:
                self._core.settings.override(**self.overrides)
        return self._core

    def run(self, work: Callable[[Core], Awaitable[int]]) -> int:
        """Run a command's work as one coroutine against the core, then close the core on the
        same event loop; returns the work's exit status.

        A command marked ``in_place`` (``show``, ``list``, ``history``, ``export``) runs
        without an event loop: its core reads in place (``yak.aio.run_in_place``), which
        spares it ``asyncio``'s import and a worker thread. Ctrl-C cancels the work
        (``KeyboardInterrupt`` is raised once it has stopped)."""

        async def main() -> int:
            core = self.core
            # Paused by ``main`` while the command started: what start-up built lives until
            # exit, so it is frozen out of later collections (as the app does, yak/ui/heap.py).
            gc.freeze()
            gc.enable()
            unsubscribe = None if self.reads_only else self._say_failed_syncs(core)
            try:
                return await work(core)
            finally:
                if unsubscribe is not None:
                    unsubscribe()
                self._core = None
                await core.aclose()

        if self.in_place:
            return run_in_place(main())
        import asyncio  # an event loop: only for a command that writes or talks to a model

        async def interruptible() -> int:
            self._stop_on_ctrl_c(asyncio.current_task())
            return await main()

        try:
            return asyncio.run(interruptible())
        except asyncio.CancelledError:
            if self._interrupted:
                raise KeyboardInterrupt from None
            raise

    def _stop_on_ctrl_c(self, task: Any) -> None:
        """Ctrl-C cancels the command's work, which keeps what was said and closes the core; if
        that has not ended within ``INTERRUPT_GRACE_S`` seconds, or at a second Ctrl-C, the
        process ends at once with exit 130 and its one ``interrupted`` line, so a cleanup that
        waits on the network can never keep the terminal (docs/cli.md, "Exit codes"). Stored
        writes are whole transactions, so ending there loses nothing written."""
        import asyncio
        import signal
        import threading

        def end_now() -> None:
            output.error("interrupted", 130, as_json=self.json)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)

        def on_ctrl_c() -> None:
            skippable, self._skippable = self._skippable, None
            if skippable is not None and not skippable.done() and not self._interrupted:
                skippable.cancel()  # only this step: the command goes on (see skippable)
                return
            if self._interrupted:
                end_now()
            self._interrupted = True
            task.cancel()
            timer = threading.Timer(INTERRUPT_GRACE_S, end_now)
            timer.daemon = True
            timer.start()

        # Where the loop takes no signal handlers (not the main thread), asyncio's own stays.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, on_ctrl_c)

    async def skippable(
        self, work: Coroutine[Any, Any, T], *, announce: Callable[[], None]
    ) -> T | None:
        """Run ``work``, a step the person may skip (the memory refresh after ``yak ask``):
        a first Ctrl-C while it runs cancels only it, and the command goes on; returns its
        result, or ``None`` when it was skipped. ``announce`` is called once the step can be
        skipped (to say so on stderr). A Ctrl-C before or after it, or a second one, stops
        the command as :meth:`run` says.

        Raises:
            Whatever ``work`` raises; ``asyncio.CancelledError`` when the command itself is
            cancelled.
        """
        import asyncio

        task = asyncio.ensure_future(work)
        self._skippable = task
        announce()
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and current is not None and not current.cancelling():
                return None  # skipped: only the step was cancelled
            raise
        finally:
            self._skippable = None

    def _say_failed_syncs(self, core: Core) -> Callable[[], None]:
        """A revision applied but not written into the kept-in-sync file: one stderr line, and
        kept in :attr:`failed_syncs` for the command's ``--json`` (:meth:`failed_sync`).
        Returns the unsubscribe. (A command that only reads writes no revision, and skips this
        and the import of every event class.)"""
        from yak.events import SyncedFileFailed

        def said(event: SyncedFileFailed) -> None:
            self.failed_syncs.append(event)
            output.note(event.message)

        return core.bus.subscribe(SyncedFileFailed, said)

    def failed_sync(self, workspace_id: str) -> SyncedFileFailed | None:
        """The latest failure, during this command, to write ``workspace_id``'s document into
        the file it keeps in sync (``yak memory sync --keep``), or ``None``."""
        found = [event for event in self.failed_syncs if event.workspace_id == workspace_id]
        return found[-1] if found else None

    def close(self) -> None:
        """Close a core that :meth:`run` did not (opened but never run)."""
        core, self._core = self._core, None
        if core is not None:
            core.close()


def workspace_path(args: argparse.Namespace) -> str:
    """The folder a command acts on: its ``-w DIR``, else the current directory. Every
    command resolves it through the core's workspace registry (``for_write`` or
    ``for_read``), so a bad ``-w`` gives the same error everywhere."""
    chosen = getattr(args, "workspace", None)
    return chosen if chosen is not None else os.getcwd()


async def writable_workspace(
    core: Core, args: argparse.Namespace, *, folder_setting: bool = False
) -> Workspace:
    """The workspace a writing command acts on (``for_write`` of :func:`workspace_path`). When
    it shares another folder's memory (a linked git worktree), a line on stderr says so first:
    a document write changes that shared document; a ``folder_setting`` (review mode, memory
    on or off) is this folder's alone."""
    workspace = await core.workspaces.for_write(workspace_path(args))
    linked = await core.workspaces.linked_to(workspace.id)
    if linked is not None:
        said = (
            f"this setting is for {workspace.path} only"
            if folder_setting
            else "this changes that shared document"
        )
        print(f"{workspace.path} shares the memory of {linked.path}: {said}.", file=sys.stderr)
    return workspace


def _seconds(text: str) -> float:
    """``--timeout``'s value: seconds from ``MIN_TIMEOUT_S`` to ``MAX_TIMEOUT_S``."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not MIN_TIMEOUT_S <= value <= MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(
            f"--timeout takes a number of seconds from {MIN_TIMEOUT_S:g} to "
            f"{MAX_TIMEOUT_S:g}, not {text!r}"
        )
    return value


def add_timeout_option(parser: argparse.ArgumentParser) -> None:
    """``--timeout SECONDS``: how long a model request may take to start answering (the SDK's
    retries included) and the longest pause inside a reply, for this command; the default is
    the request time limit in Settings (:func:`apply_timeout` makes it the command's)."""
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=_seconds,
        help="give up on the model after this many seconds without an answer, retries "
        "included (default: the time limit in Settings, 120)",
    )


def apply_timeout(args: argparse.Namespace, ctx: Context) -> None:
    """Make ``--timeout`` this command's request time limit (a settings override)."""
    if getattr(args, "timeout", None) is not None:
        ctx.overrides["request_timeout_s"] = args.timeout


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command's handler with its log open; returns the exit status (errors as
    one line).

    The data directory is resolved (and created) first: one that cannot be is one line and
    exit 1, like a database that cannot be written (docs/cli.md). The log follows a chosen
    data directory (``yak.paths.log_dir``); a log that cannot be written is said in one line
    only when the command itself succeeded: an error line is the one line of a failure."""
    as_json = bool(getattr(args, "json", False))
    folder: Path | None = None
    if getattr(args, "needs_core", True):
        try:
            folder = data_dir(args.data_dir)
        except OSError as exc:
            where = exc.filename or args.data_dir or os.environ.get("YAK_DATA_DIR") or ""
            why = (
                "it is a file, not a folder"
                if isinstance(exc, FileExistsError | NotADirectoryError)
                else (exc.strerror or str(exc))
            )
            return output.error(
                f"cannot use data directory {shown(where)}: {why}", 1, as_json=as_json
            )
    log_failures: list[str] = []
    # Every command logs, but printing a completion script (run at each shell start) stays
    # light, and a command that only reads writes its lines only when a warning or an error
    # comes.
    log_handler = (
        open_log(
            getattr(args, "data_dir", None),
            deferred=bool(getattr(args, "reads_only", False)),
            on_failure=log_failures.append,
        )
        if getattr(args, "writes_log", True)
        else None
    )
    code = 1
    try:
        code = _run_handler(args, folder)
        return code
    finally:
        close_log(log_handler)
        if log_failures and code == 0:
            output.note(f"yak: {log_failures[0]}")


def _run_handler(args: argparse.Namespace, folder: Path | None) -> int:
    command = " ".join(
        word for word in (args.command, getattr(args, "memory_command", None)) if word
    )
    log.info("yak %s", command)  # never the arguments: a prompt
    if folder is None:  # a command that never opens the database
        try:
            return int(args.func(args, None))
        except YakError as exc:
            return output.error(str(exc), exc.exit_code, as_json=False)
    ctx = Context(
        data_dir=folder,
        json=bool(getattr(args, "json", False)),
        reads_only=bool(getattr(args, "reads_only", False)),
        in_place=bool(getattr(args, "in_place", False)),
        database_url=getattr(args, "database_url", None),
    )
    try:
        return int(args.func(args, ctx))
    except YakError as exc:
        return output.error(
            str(exc), exc.exit_code, as_json=ctx.json, status=getattr(exc, "status", None)
        )
    except KeyboardInterrupt:
        return output.error("interrupted", 130, as_json=ctx.json)
    except BrokenPipeError:
        # The reader went away (``yak memory show | head``): stop quietly, like other tools.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:
        if exc.filename is None:  # writing the output failed: ``yak.cli.main`` says so
            raise
        # A file Yak needed beside the database (a lock, a kept file) could not be used.
        return output.error(
            f"cannot use {exc.filename}: {exc.strerror or exc}", 1, as_json=ctx.json
        )
    finally:
        ctx.close()
