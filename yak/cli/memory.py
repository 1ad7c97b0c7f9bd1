"""``yak memory …``: list, show, set, edit, refresh, history, restore, export, import, delete.

Every subcommand acts on one workspace, ``-w DIR`` (default: the current directory), through
``MemoryStore``; the GUI shares the same database. Commands that only read (``show``,
``history``, ``export``) find a stored workspace by its key even when its folder is gone
(orphaned); commands that write need the folder to exist. Commands that only read (and
``list``) also work on a database that cannot be written (an immutable or read-only folder):
it is opened read-only. Document bytes go to stdout exactly as stored (``yak memory show > f``
gives the stored UTF-8 bytes); ``--json`` prints one JSON document on stdout; errors are one
line on stderr (see ``yak.cli``).

Refresh attempts, refused ones included, are listed by ``history --refreshes``; the reply an
attempt kept is printed exactly by ``show --reply ATTEMPT_ID``, so a refused reply can be
trimmed and saved with ``set --file``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yak import paths
from yak.domain import MemoryDocument, RefreshAttempt, Workspace, count_lines
from yak.errors import CeilingExceeded, ConflictError, UsageError, WorkspaceNotFound
from yak.memory import document as doc_rules
from yak.memory.store import MemoryStore


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``memory`` command and its subcommands."""
    memory = sub.add_parser("memory", help="read and write workspace memory documents",
                            description="Read and write the memory document of a workspace. "
                            "Options such as --json and -w go after the subcommand "
                            "(yak memory list --json).")
    memory.set_defaults(func=lambda _args, _ctx: _usage(memory))
    cmds = memory.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")

    def workspace_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-w", "--workspace", metavar="DIR", default=None,
                            help="the workspace folder (default: the current directory)")

    def json_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON document")

    p = cmds.add_parser("list", help="every workspace with a memory document")
    json_option(p)
    p.set_defaults(func=cmd_list, reads_only=True)

    p = cmds.add_parser(
        "show", help="print the memory document exactly as stored",
        description="Print the memory document exactly as stored, or with --reply the reply a "
        "refresh attempt kept (a refused one, for example) exactly as kept: "
        "'yak memory show --reply ID > reply.txt', trim it, then "
        "'yak memory set --file reply.txt'. The ids are in 'yak memory history --refreshes'.")
    workspace_option(p)
    p.add_argument("--reply", metavar="ATTEMPT_ID", default=None,
                   help="print the reply kept by this refresh attempt instead (an id from "
                   "'history --refreshes', or a unique prefix of at least 6 characters)")
    json_option(p)
    p.set_defaults(func=cmd_show, reads_only=True)

    p = cmds.add_parser("set", help="replace the document with a file or stdin (UTF-8)")
    workspace_option(p)
    p.add_argument("--file", metavar="F", help="read the new document from F (default: stdin)")
    p.add_argument("--expect-version", metavar="N", type=int, default=None,
                   help="refuse (exit 5) unless the stored version is N (0 or more)")
    json_option(p)
    p.set_defaults(func=cmd_set)

    p = cmds.add_parser("edit", help="edit the document in $VISUAL / $EDITOR",
                        description="Edit the document in $VISUAL or $EDITOR (vi when neither "
                        "is set and this runs in a terminal). Without a terminal, set one of "
                        "them or use 'yak memory set'.")
    workspace_option(p)
    p.set_defaults(func=cmd_edit)

    p = cmds.add_parser("refresh", help="rewrite the document from conversations now")
    workspace_option(p)
    p.add_argument("--rebuild", action="store_true",
                   help="rewrite from the most recent conversations, ignoring watermarks")
    json_option(p)
    p.set_defaults(func=cmd_refresh)

    p = cmds.add_parser(
        "history", help="the document's revisions (or refresh attempts), newest first",
        description="The document's revisions, newest first (the ids 'restore' takes). With "
        "--refreshes: every refresh attempt instead, applied or not, with its status, reason, "
        "the lines of the reply it kept, model and tokens; open a kept reply with "
        "'yak memory show --reply ID'.")
    workspace_option(p)
    p.add_argument("--refreshes", action="store_true",
                   help="list refresh attempts (refused and failed ones too) instead of "
                   "revisions")
    json_option(p)
    p.set_defaults(func=cmd_history, reads_only=True)

    p = cmds.add_parser("restore", help="make a revision current again (a new revision)",
                        description="Make a revision current again, as a new revision. "
                        "REVISION is a revision id from 'history' (or a unique prefix of at "
                        "least 6 characters), or a version number: 'restore 3' restores the "
                        "revision that produced version 3.")
    p.add_argument("revision", metavar="REVISION", help="a revision id from 'history' "
                   "(or a unique prefix of at least 6 characters), or a version number")
    workspace_option(p)
    p.set_defaults(func=cmd_restore)

    p = cmds.add_parser("export", help="write the document to a file or stdout")
    workspace_option(p)
    p.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="the file to write ('-' or omitted: stdout)")
    p.add_argument("--format", choices=doc_rules.EXPORT_FORMATS, default="text",
                   help="text (exact bytes), markdown (under a title), json (with history)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=cmd_export, reads_only=True)

    p = cmds.add_parser("import", help="replace the document with a text file "
                        "(UTF-8/16/32, any line endings)")
    p.add_argument("file", metavar="FILE", help="the file to import ('-': read it from stdin)")
    workspace_option(p)
    p.set_defaults(func=cmd_import)

    p = cmds.add_parser("delete", help="empty the document (restorable from history)")
    workspace_option(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_delete)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


# --- finding the workspace ----------------------------------------------------------------------
def _path_arg(args: argparse.Namespace) -> str:
    return args.workspace if args.workspace is not None else os.getcwd()


def folder_error(path: str) -> WorkspaceNotFound:
    """The error for a ``-w`` that names no folder: a file (or a link to one), or nothing."""
    target = os.path.expanduser(path)
    if os.path.exists(target) and not os.path.isdir(target):
        return WorkspaceNotFound(f"{path} is a file, not a folder")
    return WorkspaceNotFound(f"no such folder: {path}")


def _workspace_to_write(store: MemoryStore, args: argparse.Namespace) -> Workspace:
    """The workspace of ``-w`` for a command that writes: the folder must exist; it is
    registered when new (without marking it opened in the app's recent list)."""
    path = _path_arg(args)
    if paths.folder_identity(_normalize(path)) is None:
        raise folder_error(path)
    return store.find_workspace(path) or store.open_workspace(path, mark_opened=False)


def _workspace_to_read(store: MemoryStore, args: argparse.Namespace
                       ) -> tuple[Workspace, bool]:
    """The workspace of ``-w`` for a command that only reads, and whether it is stored.

    A stored workspace is found by key even when its folder is gone; an existing folder Yak has
    never stored reads as an empty document (nothing is created)."""
    path = _path_arg(args)
    found = store.find_workspace(path)
    if found is not None:
        return found, True
    key = _normalize(path)
    if paths.folder_identity(key) is None:
        raise folder_error(path)
    return Workspace(id=paths.workspace_id_for(key), path=key,
                     created_at=datetime.now(UTC)), False


def _normalize(path: str) -> str:
    try:
        return paths.normalize_workspace_path(path)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _read(store: MemoryStore, workspace: Workspace, stored: bool) -> MemoryDocument:
    if stored:
        return store.read(workspace.id)
    return MemoryDocument(workspace_id=workspace.id, content="", version=0, updated_at=None)


# --- output -------------------------------------------------------------------------------------
def _write_stdout(data: bytes) -> None:
    """Write bytes to stdout unchanged (no newline translation, no encoding)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _print_json(value: Any) -> None:
    _write_stdout((json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))


def _lines(count: int) -> str:
    """``1 line``, ``12 lines``."""
    return f"{count:,} line" + ("" if count == 1 else "s")


def _local_time(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone().strftime("%Y-%m-%d %H:%M")


def _table(headers: list[str], rows: list[list[str]], *, right: set[int] = frozenset()) -> str:
    """Plain columns separated by two spaces; the last column is not padded."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for row in [headers, *rows]:
        cells = []
        for i, cell in enumerate(row):
            if i == len(row) - 1:
                cells.append(str(cell))
            elif i in right:
                cells.append(str(cell).rjust(widths[i]))
            else:
                cells.append(str(cell).ljust(widths[i]))
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _read_stdin(what: str) -> bytes:
    """All of stdin as bytes; says how to end the input when stdin is a terminal."""
    if sys.stdin.isatty():
        print(f"Reading {what} from the terminal; end it with Ctrl-D.", file=sys.stderr)
    return sys.stdin.buffer.read()


def _read_input_file(name: str) -> bytes:
    try:
        return Path(name).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"no such file: {name}") from None
    except IsADirectoryError:
        raise UsageError(f"{name} is a folder, not a file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from None


# --- subcommands --------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory list``: every workspace with a memory, most recently updated first."""
    summaries = MemoryStore(ctx.db).list_documents()
    if args.json:
        _print_json([{
            "workspace": s.workspace.path, "workspace_id": s.workspace.id, "version": s.version,
            "lines": s.lines, "chars": s.chars, "flags": list(s.flags),
            "updated_at": doc_rules.iso_utc(s.updated_at), "orphaned": s.orphaned,
        } for s in summaries])
        return 0
    if not summaries:
        print("No workspace has a memory document yet.")
        return 0
    rows = [[f"{s.lines}", f"{s.version}", _local_time(s.updated_at),
             s.workspace.path + ("  (orphaned: folder missing)" if s.orphaned else "")]
            for s in summaries]
    print(_table(["LINES", "VERSION", "UPDATED", "WORKSPACE"], rows, right={0, 1}))
    return 0


def cmd_show(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory show``: the document's bytes exactly as stored, or ``--json``; with
    ``--reply ATTEMPT_ID`` the reply that refresh attempt kept, exactly as kept."""
    store = MemoryStore(ctx.db)
    workspace, stored = _workspace_to_read(store, args)
    if args.reply is not None:
        return _show_reply(store, workspace, stored, args)
    document = _read(store, workspace, stored)
    if args.json:
        _print_json(doc_rules.document_json(workspace, document))
        return 0
    if not document.content and sys.stdout.isatty():
        print(f"(the memory document of {workspace.path} is empty)", file=sys.stderr)
    _write_stdout(doc_rules.export_text(document))
    return 0


def _show_reply(store: MemoryStore, workspace: Workspace, stored: bool,
                args: argparse.Namespace) -> int:
    """``show --reply ATTEMPT_ID``: the kept reply's UTF-8 bytes, or ``--json`` with it."""
    if not stored:
        raise UsageError(f"{workspace.path} has no refresh attempts yet.")
    attempt = store.get_attempt(workspace.id, args.reply)
    if args.json:
        _print_json({**doc_rules.attempt_json(attempt), "reply": attempt.reply})
        return 0
    if not attempt.reply:
        why = f"{attempt.status}: {attempt.reason}" if attempt.reason else str(attempt.status)
        raise UsageError(f"refresh attempt {attempt.id} kept no reply ({why.rstrip('. ')})")
    _write_stdout(attempt.reply.encode("utf-8"))
    return 0


def cmd_set(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory set``: replace the document with UTF-8 text from ``--file`` or stdin."""
    if args.expect_version is not None and args.expect_version < 0:
        raise UsageError("--expect-version must be 0 or more")
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    if args.file is not None and args.file != "-":
        data = _read_input_file(args.file)
        what = args.file
    else:
        data = _read_stdin("the memory document")
        what = "The input"
    text = doc_rules.decode_utf8(data, what=what)
    doc_rules.check_not_empty(text)  # here, not in the store: the editor may clear on purpose
    expected = args.expect_version
    if expected is None:
        expected = store.read(workspace.id).version
    before = expected
    document = store.write(workspace.id, text, expected_version=expected)
    changed = document.version != before
    if args.json:
        _print_json({"version": document.version, "lines": document.lines,
                     "chars": document.chars, "changed": changed,
                     "workspace": workspace.path, "workspace_id": workspace.id})
    elif changed:
        print(f"Saved version {document.version} ({_lines(document.lines)}) for "
              f"{workspace.path}.")
    else:
        print(f"No changes: version {document.version} already has this text.")
    return 0


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


def cmd_edit(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory edit``: edit a copy in ``$VISUAL``/``$EDITOR`` (else ``vi`` in a terminal)
    and save it.

    The copy is a temporary file. When the save is refused (over the ceiling, or the memory
    changed meanwhile) or the editor fails, the file is kept and its path printed, so nothing
    typed is lost. Without an editor variable and without a terminal it refuses (exit 2)."""
    editor = _editor_command()
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    document = store.read(workspace.id)
    handle, name = tempfile.mkstemp(prefix=f"yak-memory-{workspace.name}-", suffix=".txt")
    with os.fdopen(handle, "wb") as out:
        out.write(doc_rules.export_text(document))
    command = [*editor, name]
    try:
        status = subprocess.run(command, check=False).returncode
    except OSError as exc:
        os.unlink(name)
        raise UsageError(f"cannot start the editor {command[0]!r} ({exc.strerror or exc}); set "
                         "VISUAL or EDITOR to an editor that waits until you close the file")
    if status != 0:
        return _kept(f"the editor exited with status {status}; nothing was saved.", name, 2)
    try:
        text = doc_rules.decode_utf8(Path(name).read_bytes(), what="The edited file")
    except UsageError as exc:
        return _kept(str(exc), name, exc.exit_code)
    if text == document.content:
        os.unlink(name)
        print("No changes.")
        return 0
    try:
        saved = store.write(workspace.id, text, expected_version=document.version)
    except (CeilingExceeded, ConflictError, UsageError) as exc:
        return _kept(str(exc), name, exc.exit_code)
    os.unlink(name)
    print(f"Saved version {saved.version} ({_lines(saved.lines)}) for {workspace.path}.")
    return 0


def _kept(message: str, name: str, code: int) -> int:
    print(f"yak: {message} Your text is kept in {name}", file=sys.stderr)
    return code


def cmd_refresh(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory refresh``: run by ``yak.cli.refresh`` when this build has it."""
    try:
        from yak.cli.refresh import run as run_refresh
    except ImportError as exc:
        if exc.name != "yak.cli.refresh":
            raise
        raise UsageError("memory refresh is not available in this build") from None
    return run_refresh(args, ctx)


def cmd_history(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory history``: revisions newest first (``id`` is what ``restore`` takes); with
    ``--refreshes`` the refresh attempts newest first."""
    store = MemoryStore(ctx.db)
    workspace, stored = _workspace_to_read(store, args)
    if args.refreshes:
        return _history_of_refreshes(store, workspace, stored, as_json=args.json)
    revisions = store.history(workspace.id) if stored else []
    if args.json:
        _print_json([doc_rules.revision_json(r) for r in revisions])
        return 0
    if not revisions:
        print(f"No revisions yet for {workspace.path}.")
        return 0
    rows = [[r.id, f"{r.version}", str(r.source), f"{r.lines}", f"{r.chars}",
             _local_time(r.created_at), ", ".join(r.flags)] for r in revisions]
    print(_table(["ID", "VERSION", "SOURCE", "LINES", "CHARS", "CREATED", "FLAGS"], rows,
                 right={1, 3, 4}))
    return 0


def _history_of_refreshes(store: MemoryStore, workspace: Workspace, stored: bool, *,
                          as_json: bool) -> int:
    """``history --refreshes``: every refresh attempt, newest first."""
    attempts = store.attempts(workspace.id, limit=None) if stored else []
    if as_json:
        _print_json([doc_rules.attempt_json(a) for a in attempts])
        return 0
    if not attempts:
        print(f"No refresh attempts yet for {workspace.path}.")
        return 0
    rows = [[a.id, _local_time(a.created_at), str(a.status), _reply_lines(a), a.model or "-",
             f"{a.usage.input_tokens:,} in / {a.usage.output_tokens:,} out", a.reason or "-"]
            for a in attempts]
    print(_table(["ID", "CREATED", "STATUS", "REPLY", "MODEL", "TOKENS", "REASON"], rows,
                 right={3}))
    return 0


def _reply_lines(attempt: RefreshAttempt) -> str:
    """The kept reply's size for the table: ``12 lines``, or ``-`` when none was kept."""
    return _lines(count_lines(attempt.reply)) if attempt.reply else "-"


def cmd_restore(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory restore REVISION``: a new ``restore`` revision with that content.
    ``REVISION`` is a revision id (or a prefix of at least 6 characters) or a version number."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    before = store.read(workspace.id).version
    revision = store.get_revision(workspace.id, args.revision)
    document = store.restore(workspace.id, revision.id, expected_version=before)
    if document.version == before:
        print(f"No changes: version {before} already has the text of revision {revision.id}.")
    else:
        print(f"Restored revision {revision.id} (version {revision.version}) as version "
              f"{document.version} ({_lines(document.lines)}).")
    return 0


def cmd_export(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory export``: text (exact bytes), markdown or json, to a file or stdout."""
    store = MemoryStore(ctx.db)
    workspace, stored = _workspace_to_read(store, args)
    if stored:
        data = store.export_bytes(workspace.id, args.format)
    else:
        data = doc_rules.export_document(workspace, _read(store, workspace, False), [],
                                         args.format, exported_at=datetime.now(UTC))
    if args.output == "-":
        _write_stdout(data)
        return 0
    target = Path(args.output)
    try:
        with open(target, "wb" if args.force else "xb") as out:
            out.write(data)
    except FileExistsError:
        raise UsageError(f"{target} already exists; use --force to overwrite it") from None
    except IsADirectoryError:
        raise UsageError(f"{target} is a folder; give a file name") from None
    except FileNotFoundError:
        raise UsageError(f"cannot write {target}: its folder does not exist") from None
    except OSError as exc:
        raise UsageError(f"cannot write {target}: {exc.strerror or exc}") from None
    print(f"Exported {workspace.path} ({args.format}, {len(data):,} bytes) to {target}.")
    return 0


def cmd_import(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory import FILE``: UTF-8/16/32 text, through the ceiling check; ``-`` reads the
    file's bytes from stdin (decoded the same way)."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    if args.file == "-":
        data, name = _read_stdin("the file to import"), "stdin"
    else:
        data, name = _read_input_file(args.file), args.file
    before = store.read(workspace.id).version
    document = store.import_bytes(workspace.id, data, expected_version=before,
                                  source_name=name)
    if document.version == before:
        print(f"No changes: version {before} already has the text of {name}.")
    else:
        print(f"Imported {name} as version {document.version} ({_lines(document.lines)}).")
    return 0


def cmd_delete(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory delete``: empty the document as a ``clear`` revision (restorable)."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    document = store.read(workspace.id)
    if not document.content:
        print(f"The memory document of {workspace.path} is already empty.")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError("refusing to delete without --yes (no terminal to ask for "
                             "confirmation)")
        answer = _ask(f"Delete the memory document of {workspace.path} "
                      f"({_lines(document.lines)})? It stays restorable from history. [y/N] ")
        if answer.strip().lower() not in {"y", "yes"}:
            print("Nothing was deleted.")
            return 0
    cleared = store.clear(workspace.id, expected_version=document.version)
    previous = store.history(workspace.id)
    kept = next((r for r in previous if r.version == document.version), None)
    hint = f" Restore it with: yak memory restore {kept.id}" if kept else ""
    print(f"Deleted the memory document of {workspace.path} (now version {cleared.version})."
          + hint)
    return 0


def _ask(prompt: str) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    try:
        return sys.stdin.readline()
    except KeyboardInterrupt:
        return ""
