"""``yak memory list|show|set|history|diff|restore|export|import``: the document itself
(``edit`` and ``delete`` are in ``yak.cli.editing``, the review inbox in ``yak.cli.review``,
sharing in ``yak.cli.share`` and ``yak.cli.scopes``).

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
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, workspace_path, writable_workspace
from yak.cli.parsing import json_option, workspace_command, workspace_option
from yak.domain import MemoryDocument
from yak.errors import RevisionNotFound, UsageError
from yak.memory import document as doc_rules
from yak.memory.document import EXPORT_FORMATS, export_format_for
from yak.memory.files import read_input_file, write_output_file
from yak.memory.freshness.dates import parse_moment

if TYPE_CHECKING:
    from yak.core import Core
    from yak.domain import Workspace


def _list_parser(p: argparse.ArgumentParser) -> None:
    json_option(p)
    p.set_defaults(func=cmd_list, reads_only=True, in_place=True)


def _show_parser(p: argparse.ArgumentParser) -> None:
    workspace_option(p)
    p.add_argument(
        "--raw",
        action="store_true",
        help="print the stored bytes with anything that is not UTF-8 escaped (\\xNN): the way "
        "to look at a document that cannot be read as text",
    )
    p.add_argument(
        "--version",
        metavar="N",
        default=None,
        help="print version N of the document as it was (a version number from 'history', or "
        "a revision id or a unique prefix of at least 6 characters)",
    )
    p.add_argument(
        "--as-of",
        metavar="DATE",
        default=None,
        help="print the document as it stood at the end of DATE (YYYY-MM-DD) or at a time "
        "(YYYY-MM-DDTHH:MM), local time",
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


def _set_parser(p: argparse.ArgumentParser) -> None:
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


def _history_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--refreshes",
        action="store_true",
        help="list refresh attempts (refused and failed ones too) instead of revisions",
    )
    p.add_argument(
        "--as-of",
        metavar="DATE",
        default=None,
        help="start at what was current at the end of DATE (YYYY-MM-DD) or at a time "
        "(YYYY-MM-DDTHH:MM): that and older",
    )
    p.add_argument(
        "--since",
        metavar="DATE",
        default=None,
        help="only what was written from the start of DATE (or from a time) on",
    )
    workspace_command(p, cmd_history, reads_only=True, in_place=True)


def _diff_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "old",
        metavar="A",
        nargs="?",
        default=None,
        help="the version to compare from: a version number, or a revision id or a unique prefix "
        "(default: the version before the last change)",
    )
    p.add_argument(
        "new",
        metavar="B",
        nargs="?",
        default=None,
        help="the version to compare to, given the same way (default: the current version)",
    )
    workspace_command(p, cmd_diff, reads_only=True, in_place=True)


def _restore_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "revision",
        metavar="REVISION",
        help="a revision id from 'history' "
        "(or a unique prefix of at least 6 characters), or a version number",
    )
    workspace_option(p)
    p.set_defaults(func=cmd_restore)


def _export_parser(p: argparse.ArgumentParser) -> None:
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


def _import_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the file to import ('-': read it from stdin)")
    workspace_option(p)
    p.set_defaults(func=cmd_import)


PARSERS = {
    "list": _list_parser,
    "show": _show_parser,
    "set": _set_parser,
    "history": _history_parser,
    "diff": _diff_parser,
    "restore": _restore_parser,
    "export": _export_parser,
    "import": _import_parser,
}


# --- input and output files ---------------------------------------------------------------------
def read_stdin(what: str) -> bytes:
    """All of stdin as bytes; says how to end the input when stdin is a terminal."""
    if sys.stdin.isatty():
        output.note(f"Reading {what} from the terminal; end it with Ctrl-D.")
    return doc_rules.read_capped(sys.stdin.buffer, f"The input on stdin ({what})")


async def _read(core: Core, workspace: Workspace, stored: bool) -> MemoryDocument:
    """The document of a workspace from ``for_read``: empty for a folder never stored."""
    if stored:
        return await core.memory.read(workspace.id)
    return MemoryDocument.never_written(workspace.id)


async def _review_state(core: Core, workspace: Workspace, stored: bool) -> dict[str, object]:
    """``show --json``'s ``last_refresh``, ``proposals``, ``mode`` and ``memory_enabled``."""
    attempt = await core.memory.last_attempt(workspace.id) if stored else None
    pending = await core.review.proposals(workspace.id) if stored else []
    return {
        "last_refresh": None
        if attempt is None
        else {
            # An attempt that waited for review ends with its proposal's outcome.
            "status": doc_rules.attempt_json(attempt)["status"],
            "reason": attempt.reason,
            "at": doc_rules.iso_utc(attempt.created_at),
            "result_version": attempt.result_version,
        },
        "proposals": len(pending),
        "mode": str(workspace.review_mode),
        "memory_enabled": workspace.memory_enabled,
    }


# --- subcommands --------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory list``: every workspace with a memory, most recently updated first."""

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

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.raw:
            raw = await core.memory.read_raw(workspace.id) if stored else b""
            output.raw_document(workspace, raw, as_json=args.json)
            return 0
        if args.as_of is not None:
            if args.version is not None or args.reply is not None:
                raise UsageError("give one of --as-of, --version and --reply")
            moment = parse_moment(args.as_of, option="--as-of")
            found = await core.memory.revision_as_of(workspace.id, moment) if stored else None
            if found is None:
                if not args.json:
                    output.note(f"The memory of {workspace.path} was not written yet then.")
                document = MemoryDocument(
                    workspace_id=workspace.id, content="", version=0, updated_at=None
                )
            else:
                document = await _version(core, workspace, found.id, stored=stored)
            output.document(workspace, document, as_json=args.json)
            return 0
        if args.version is not None:
            if args.reply is not None:
                raise UsageError("give --version or --reply, not both")
            document = await _version(core, workspace, args.version, stored=stored)
            if not document.version and not args.json:
                output.note("Version 0 is the empty memory before its first save.")
            output.document(workspace, document, as_json=args.json)
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


async def _version(
    core: Core, workspace: Workspace, wanted: str, *, stored: bool
) -> MemoryDocument:
    """Version ``wanted`` of the document (a version number, a revision id or a unique prefix)
    as that revision wrote it; ``"0"`` is the empty document before the first write.

    Raises:
        RevisionNotFound: no revision of the workspace matches ``wanted``.
    """
    if wanted.strip() == "0":
        return MemoryDocument.never_written(workspace.id)
    if not stored:
        raise RevisionNotFound(f"{workspace.path} has no memory, so no version {wanted}")
    return (await core.memory.get_revision(workspace.id, wanted.strip())).document


def cmd_diff(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory diff [A [B]]``: a unified line diff from version A to version B (default:
    the current version); without A, the last change (the version before it to the current
    one). Prints nothing when the two are equal; exit 0 either way."""

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.new is not None:
            new = await _version(core, workspace, args.new, stored=stored)
        else:
            new = await _read(core, workspace, stored)
        if args.old is not None:
            old = await _version(core, workspace, args.old, stored=stored)
        else:
            old = await _version(core, workspace, str(max(new.version - 1, 0)), stored=stored)
        output.versions_diff(workspace, old, new, as_json=args.json)
        return 0

    return ctx.run(work)


def cmd_set(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory set``: replace the document with UTF-8 text from ``--file`` or stdin."""
    if args.expect_version is not None and args.expect_version < 0:
        raise UsageError("--expect-version must be 0 or more")

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        if args.file is not None and args.file != "-":
            data, what = read_input_file(Path(args.file)), args.file
        else:
            data, what = read_stdin("the memory document"), "The input"
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


def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory history``: revisions newest first (``id`` is what ``restore`` takes); with
    ``--refreshes`` the refresh attempts newest first; ``--as-of`` / ``--since`` keep those
    stored up to the end of a date / from its start (record time)."""
    until = parse_moment(args.as_of, option="--as-of") if args.as_of is not None else None
    since = (
        parse_moment(args.since, option="--since", end_of_day=False)
        if args.since is not None
        else None
    )

    def within(moment: datetime) -> bool:
        return (until is None or moment <= until) and (since is None or moment >= since)

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        if args.refreshes:
            attempts = await core.memory.attempts(workspace.id, limit=None) if stored else []
            attempts = [a for a in attempts if within(a.created_at)]
            output.attempts(workspace, attempts, as_json=args.json)
        else:
            revisions = await core.memory.history(workspace.id) if stored else []
            revisions = [r for r in revisions if within(r.created_at)]
            dated = until is not None or since is not None
            output.revisions(workspace, revisions, as_json=args.json, dated=dated)
        return 0

    return ctx.run(work)


def cmd_restore(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory restore REVISION``: a new ``restore`` revision with that content.
    ``REVISION`` is a revision id (or a prefix of at least 6 characters) or a version number."""

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

        write_output_file(target, data, force=args.force)
        output.exported(workspace, fmt, len(data), str(target))
        return 0

    return ctx.run(work)


def cmd_import(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory import FILE``: UTF-8/16/32 text, through the ceiling check; ``-`` reads the
    file's bytes from stdin (decoded the same way)."""

    async def work(core: Core) -> int:
        workspace = await writable_workspace(core, args)
        if args.file == "-":
            data, name = read_stdin("the file to import"), "stdin"
        else:
            data, name = read_input_file(Path(args.file)), args.file
        before = await core.memory.current_version(workspace.id)
        document = await core.memory.import_bytes(
            workspace.id, data, expected_version=before, source_name=name
        )
        output.imported(name, before, document)
        return 0

    return ctx.run(work)
