"""``yak memory …``: list, show, set, edit, refresh, history, restore, export, import, delete.

Every subcommand acts on one workspace, ``-w DIR`` (default: the current directory), resolved
by the core's workspace registry like in every other command: commands that only read
(``show``, ``history``, ``export``) find a stored workspace by its key even when its folder is
gone (orphaned); commands that write need the folder to exist. Commands that only read (and
``list``) also work on a database that cannot be written (an immutable or read-only folder):
it is opened read-only. Document bytes go to stdout exactly as stored (``yak memory show > f``
gives the stored UTF-8 bytes); ``--json`` prints one JSON document on stdout; errors are one
line on stderr (see ``yak.cli``). What is printed is shaped in ``yak.cli.output``.

Refresh attempts, refused ones included, are listed by ``history --refreshes``; the reply an
attempt kept is printed exactly by ``show --reply ATTEMPT_ID``, so a refused reply can be
trimmed and saved with ``set --file``.

Building the parser imports nothing beyond ``argparse`` (``yak --help`` must start fast; see
``yak.cli``): each command imports the document rules, the output shapes and the modules it
runs (an editor, a temporary file) when it runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from yak.cli import add_timeout_option, workspace_path, writable_workspace
from yak.errors import UsageError, YakError

TYPE_CHECKING = False  # not ``typing``'s: importing it would slow ``yak --help`` (see yak.cli)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

    from yak.cli import Context
    from yak.core import Core
    from yak.domain import MemoryDocument, Workspace

# The ``--format`` choices of ``export``: ``yak.memory.document.EXPORT_FORMATS``, spelled here so
# that building the parser does not import the document rules (a test keeps the two equal);
# the suffixes and the format a file name asks for are the document rules' alone.
EXPORT_FORMATS = ("text", "markdown", "json")


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``memory`` command and its subcommands."""
    memory = sub.add_parser(
        "memory",
        help="read and write workspace memory documents",
        description="Read and write the memory document of a workspace. "
        "Options such as --json and -w go after the subcommand "
        "(yak memory list --json).",
    )
    memory.set_defaults(func=lambda _args, _ctx: _usage(memory))
    cmds = memory.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")

    def workspace_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "-w",
            "--workspace",
            metavar="DIR",
            default=None,
            help="the workspace folder (default: the current directory)",
        )

    def json_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON document")

    p = cmds.add_parser("list", help="every workspace with a memory document")
    json_option(p)
    p.set_defaults(func=cmd_list, reads_only=True, in_place=True)

    p = cmds.add_parser(
        "show",
        help="print the memory document exactly as stored",
        description="Print the memory document exactly as stored, or with --reply the reply a "
        "refresh attempt kept (a refused one, for example) exactly as kept: "
        "'yak memory show --reply ID > reply.txt', trim it, then "
        "'yak memory set --file reply.txt'. The ids are in 'yak memory history --refreshes'.",
    )
    workspace_option(p)
    p.add_argument(
        "--raw",
        action="store_true",
        help="print the stored bytes with anything that is not UTF-8 escaped (\\xNN): the way "
        "to look at a document that cannot be read as text",
    )
    p.add_argument(
        "--reply",
        metavar="ATTEMPT_ID",
        default=None,
        help="print the reply kept by this refresh attempt instead (an id from "
        "'history --refreshes', or a unique prefix of at least 6 characters)",
    )
    json_option(p)
    p.set_defaults(func=cmd_show, reads_only=True, in_place=True)

    p = cmds.add_parser("set", help="replace the document with a file or stdin (UTF-8)")
    workspace_option(p)
    p.add_argument("--file", metavar="F", help="read the new document from F (default: stdin)")
    p.add_argument(
        "--expect-version",
        metavar="N",
        type=int,
        default=None,
        help="refuse (exit 5) unless the stored version is N (0 or more)",
    )
    json_option(p)
    p.set_defaults(func=cmd_set)

    p = cmds.add_parser(
        "edit",
        help="edit the document in $VISUAL / $EDITOR",
        description="Edit the document in $VISUAL or $EDITOR (vi when neither "
        "is set and this runs in a terminal). Without a terminal, set one of "
        "them or use 'yak memory set'.",
    )
    workspace_option(p)
    p.set_defaults(func=cmd_edit)

    p = cmds.add_parser("refresh", help="rewrite the document from conversations now")
    add_timeout_option(p)
    workspace_option(p)
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="rewrite from the most recent conversations, ignoring watermarks",
    )
    json_option(p)
    p.set_defaults(func=cmd_refresh)

    p = cmds.add_parser(
        "history",
        help="the document's revisions (or refresh attempts), newest first",
        description="The document's revisions, newest first (the ids 'restore' takes). With "
        "--refreshes: every refresh attempt instead, applied or not, with its status, reason, "
        "the lines of the reply it kept, model and tokens; open a kept reply with "
        "'yak memory show --reply ID'.",
    )
    workspace_option(p)
    p.add_argument(
        "--refreshes",
        action="store_true",
        help="list refresh attempts (refused and failed ones too) instead of revisions",
    )
    json_option(p)
    p.set_defaults(func=cmd_history, reads_only=True, in_place=True)

    p = cmds.add_parser(
        "restore",
        help="make a revision current again (a new revision)",
        description="Make a revision current again, as a new revision. "
        "REVISION is a revision id from 'history' (or a unique prefix of at "
        "least 6 characters), or a version number: 'restore 3' restores the "
        "revision that produced version 3.",
    )
    p.add_argument(
        "revision",
        metavar="REVISION",
        help="a revision id from 'history' "
        "(or a unique prefix of at least 6 characters), or a version number",
    )
    workspace_option(p)
    p.set_defaults(func=cmd_restore)

    p = cmds.add_parser("export", help="write the document to a file or stdout")
    workspace_option(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="-",
        help="the file to write ('-' or omitted: stdout)",
    )
    p.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        default=None,
        help="text (exact bytes), markdown (under a title), json (with history); default: "
        "json for an output file named *.json, markdown for *.md, else text",
    )
    p.add_argument("-f", "--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=cmd_export, reads_only=True, in_place=True)

    p = cmds.add_parser(
        "import", help="replace the document with a text file (UTF-8/16/32, any line endings)"
    )
    p.add_argument("file", metavar="FILE", help="the file to import ('-': read it from stdin)")
    workspace_option(p)
    p.set_defaults(func=cmd_import)

    p = cmds.add_parser("delete", help="empty the document (restorable from history)")
    workspace_option(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_delete)

    from yak.cli import review, scopes, share

    review.register(cmds, workspace_option, json_option)
    share.register(cmds, workspace_option, json_option)
    scopes.register(cmds, workspace_option, json_option)


def _usage(parser: argparse.ArgumentParser) -> int:
    """``yak memory`` without a subcommand: one line, exit 2."""
    from yak.cli import output

    return output.error(f"name a subcommand (see '{parser.prog} --help')", 2, as_json=False)


# --- input and output files ---------------------------------------------------------------------
def _read_stdin(what: str) -> bytes:
    """All of stdin as bytes; says how to end the input when stdin is a terminal."""
    from yak.cli import output

    if sys.stdin.isatty():
        output.note(f"Reading {what} from the terminal; end it with Ctrl-D.")
    from yak.memory.document import read_capped

    return read_capped(sys.stdin.buffer, f"The input on stdin ({what})")


async def _read(core: Core, workspace: Workspace, stored: bool) -> MemoryDocument:
    """The document of a workspace from ``for_read``: empty for a folder never stored."""
    from yak.domain import MemoryDocument

    if stored:
        return await core.memory.read(workspace.id)
    return MemoryDocument(workspace_id=workspace.id, content="", version=0, updated_at=None)


async def _review_state(core: Core, workspace: Workspace, stored: bool) -> dict[str, object]:
    """``show --json``'s ``last_refresh``, ``proposals``, ``mode`` and ``memory_enabled``."""
    from yak.memory.document import iso_utc

    if not stored:
        return {
            "last_refresh": None,
            "proposals": 0,
            "mode": str(workspace.review_mode),
            "memory_enabled": workspace.memory_enabled,
        }
    attempt = await core.memory.last_attempt(workspace.id)
    pending = await core.review.proposals(workspace.id)
    return {
        "last_refresh": None
        if attempt is None
        else {
            "status": str(attempt.status),
            "reason": attempt.reason,
            "at": iso_utc(attempt.created_at),
        },
        "proposals": len(pending),
        "mode": str(workspace.review_mode),
        "memory_enabled": workspace.memory_enabled,
    }


# --- subcommands --------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory list``: every workspace with a memory, most recently updated first."""
    from yak.cli import output

    async def work(core: Core) -> int:
        output.document_list(await core.memory.list_documents(), as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_show(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory show``: the document's bytes exactly as stored, or ``--json``; with
    ``--reply ATTEMPT_ID`` the reply that refresh attempt kept, exactly as kept. An empty
    document prints nothing on stdout and says so on stderr. A folder
    without a memory of its own gets a line on stderr (``--json``: ``enclosing``,
    ``renamed_from``, ``worktree_main``) naming the enclosing workspace's memory, an orphan's
    it looks like, or its git main checkout's."""
    from yak.cli import output

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.raw:
            raw = await core.memory.read_raw(workspace.id) if stored else b""
            output.raw_document(workspace, raw, as_json=args.json)
            return 0
        if args.reply is None:
            document = await _read(core, workspace, stored)
            enclosing = renamed_from = main = None
            if not document.content:  # each is None for a folder with a memory (or a link)
                enclosing = await core.workspaces.enclosing(workspace.path)
                renamed_from = await core.workspaces.renamed_from(workspace.path)
                main = await core.workspaces.worktree_main(workspace.path)
            if args.json:
                extras = await _review_state(core, workspace, stored)
                extras["enclosing"] = output.memory_elsewhere(enclosing)
                extras["renamed_from"] = output.memory_elsewhere(renamed_from)
                extras["worktree_main"] = output.memory_elsewhere(main)
                linked = await core.workspaces.linked_to(workspace.id) if stored else None
                extras["linked_to"] = None if linked is None else linked.path
                output.document(workspace, document, as_json=True, extras=extras)
            else:
                output.scope_notes(
                    workspace, enclosing=enclosing, renamed_from=renamed_from, worktree_main=main
                )
                if not workspace.memory_enabled:
                    output.note(
                        f"Memory is off for {workspace.path}: conversations do not get it and "
                        "no refresh runs ('yak memory enable' turns it back on)."
                    )
                elif not document.content and document.version:  # deleted (or emptied)
                    output.note(
                        f"The memory of {workspace.path} is empty since version "
                        f"{document.version}: 'yak memory history' lists the versions before, "
                        "'yak memory restore VERSION' brings one back."
                    )
                elif not document.content and not (enclosing or renamed_from or main):
                    output.note(
                        f"{workspace.path} has no memory yet: it is written after a "
                        "conversation here, or with 'yak memory set'."
                    )
                output.document(workspace, document, as_json=False)
            return 0
        if not stored:
            raise UsageError(f"{workspace.path} has no refresh attempts yet.")
        attempt = await core.memory.get_attempt(workspace.id, args.reply)
        if not attempt.reply and not args.json:
            raise UsageError(output.no_reply_message(attempt))
        output.attempt_reply(attempt, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_set(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory set``: replace the document with UTF-8 text from ``--file`` or stdin."""
    from pathlib import Path

    from yak.cli import output
    from yak.memory import document as doc_rules

    if args.expect_version is not None and args.expect_version < 0:
        raise UsageError("--expect-version must be 0 or more")

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        if args.file is not None and args.file != "-":
            from yak.memory.files import read_input_file

            data, what = read_input_file(Path(args.file)), args.file
        else:
            data, what = _read_stdin("the memory document"), "The input"
        text = doc_rules.decode_utf8(data, what=what)
        before = args.expect_version
        if before is None:
            before = await core.memory.current_version(workspace.id)
        # Emptying the memory is ``delete``; an empty input is a mistake here.
        document = await core.memory.save(
            workspace.id, text, expected_version=before, require_text=True
        )
        output.saved(
            workspace,
            document,
            changed=document.version != before,
            as_json=args.json,
            failed_sync=ctx.failed_sync(workspace.id),
        )
        return 0

    return ctx.run(work)


def _editor_command() -> list[str]:
    """The editor from ``$VISUAL``, else ``$EDITOR``, else ``vi`` when run in a terminal.

    Raises:
        UsageError: neither variable is set and stdin or stdout is not a terminal (``vi``
            would draw its screen into a pipe or a file).
    """
    import shlex

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
    import signal
    import threading

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
    import subprocess

    with _ctrl_c(lambda _signum, _frame: None):
        return subprocess.run(command, check=False).returncode


def cmd_edit(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory edit``: edit a copy in ``$VISUAL``/``$EDITOR`` (else ``vi`` in a terminal)
    and save it.

    The copy is a temporary file. When the save is refused (over the ceiling, or the memory
    changed meanwhile) or the editor fails, the file is kept and its path printed, so nothing
    typed is lost. Without an editor variable and without a terminal it refuses (exit 2)."""
    import tempfile
    from pathlib import Path

    from yak.cli import output
    from yak.memory import document as doc_rules

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


def cmd_refresh(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory refresh``: run by ``yak.cli.refresh`` when this build has it."""
    try:
        from yak.cli.refresh import run as run_refresh
    except ImportError as exc:
        if exc.name != "yak.cli.refresh":
            raise
        raise UsageError("memory refresh is not available in this build") from None
    return run_refresh(args, ctx)


def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory history``: revisions newest first (``id`` is what ``restore`` takes); with
    ``--refreshes`` the refresh attempts newest first."""
    from yak.cli import output

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.refreshes:
            attempts = await core.memory.attempts(workspace.id, limit=None) if stored else []
            output.attempts(workspace, attempts, as_json=args.json)
        else:
            revisions = await core.memory.history(workspace.id) if stored else []
            output.revisions(workspace, revisions, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_restore(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory restore REVISION``: a new ``restore`` revision with that content.
    ``REVISION`` is a revision id (or a prefix of at least 6 characters) or a version number."""
    from yak.cli import output

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        before = await core.memory.current_version(workspace.id)
        revision = await core.memory.get_revision(workspace.id, args.revision)
        document = await core.memory.restore(workspace.id, revision.id, expected_version=before)
        output.restored(revision, before, document)
        return 0

    return ctx.run(work)


def cmd_export(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory export``: text (exact bytes), markdown or json, to a file or stdout."""
    from pathlib import Path

    from yak.cli import output
    from yak.memory.document import export_format_for

    if not args.output:
        raise UsageError("give a file name after -o (or - for standard output)")
    fmt = args.format or export_format_for(args.output)

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        data = await core.memory.export_bytes(workspace, fmt, stored=stored)
        if args.output == "-":
            output.write_stdout(data)
            return 0
        target = Path(args.output)
        from yak.memory.files import write_output_file

        write_output_file(target, data, force=args.force)
        output.exported(workspace, fmt, len(data), str(target))
        return 0

    return ctx.run(work)


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory import FILE``: UTF-8/16/32 text, through the ceiling check; ``-`` reads the
    file's bytes from stdin (decoded the same way)."""
    from pathlib import Path

    from yak.cli import output

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        if args.file == "-":
            data, name = _read_stdin("the file to import"), "stdin"
        else:
            from yak.memory.files import read_input_file

            data, name = read_input_file(Path(args.file)), args.file
        before = await core.memory.current_version(workspace.id)
        document = await core.memory.import_bytes(
            workspace.id, data, expected_version=before, source_name=name
        )
        output.imported(name, before, document)
        return 0

    return ctx.run(work)


def cmd_delete(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory delete``: empty the document as a ``clear`` revision (restorable)."""
    from yak.cli import output

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
    import signal

    print(prompt, end="", file=sys.stderr, flush=True)
    with _ctrl_c(signal.default_int_handler):
        try:
            return sys.stdin.readline()
        except KeyboardInterrupt:
            return ""
