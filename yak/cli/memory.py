"""``yak memory …``: list, show, set, edit, refresh, history, restore, export, import, delete.

Every subcommand acts on one workspace, ``-w DIR`` (default: the current directory), through
``MemoryStore``; the GUI shares the same database. Commands that only read (``show``,
``history``, ``export``) find a stored workspace by its key even when its folder is gone
(orphaned); commands that write need the folder to exist. Document bytes go to stdout exactly as
stored (``yak memory show > f`` gives the stored UTF-8 bytes); ``--json`` prints one JSON
document on stdout; errors are one line on stderr (see ``yak.cli``).
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
from yak.domain import MemoryDocument, Workspace
from yak.errors import CeilingExceeded, ConflictError, UsageError, WorkspaceNotFound
from yak.memory import document as doc_rules
from yak.memory.store import MemoryStore


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``memory`` command and its subcommands."""
    memory = sub.add_parser("memory", help="read and write workspace memory documents",
                            description="Read and write the memory document of a workspace.")
    memory.set_defaults(func=lambda _args, _ctx: _usage(memory))
    cmds = memory.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")

    def workspace_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-w", "--workspace", metavar="DIR", default=None,
                            help="the workspace folder (default: the current directory)")

    def json_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="print one JSON document")

    p = cmds.add_parser("list", help="every workspace with a memory document")
    json_option(p)
    p.set_defaults(func=cmd_list)

    p = cmds.add_parser("show", help="print the memory document exactly as stored")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_show)

    p = cmds.add_parser("set", help="replace the document with a file or stdin (UTF-8)")
    workspace_option(p)
    p.add_argument("--file", metavar="F", help="read the new document from F (default: stdin)")
    p.add_argument("--expect-version", metavar="N", type=int, default=None,
                   help="refuse (exit 5) unless the stored version is N")
    json_option(p)
    p.set_defaults(func=cmd_set)

    p = cmds.add_parser("edit", help="edit the document in $VISUAL / $EDITOR")
    workspace_option(p)
    p.set_defaults(func=cmd_edit)

    p = cmds.add_parser("refresh", help="rewrite the document from conversations now")
    workspace_option(p)
    p.add_argument("--rebuild", action="store_true",
                   help="rewrite from the most recent conversations, ignoring watermarks")
    json_option(p)
    p.set_defaults(func=cmd_refresh)

    p = cmds.add_parser("history", help="the document's revisions, newest first")
    workspace_option(p)
    json_option(p)
    p.set_defaults(func=cmd_history)

    p = cmds.add_parser("restore", help="make a revision current again (a new revision)")
    p.add_argument("revision", metavar="REVISION", help="a revision id from 'history' "
                   "(or a unique prefix of at least 6 characters)")
    workspace_option(p)
    p.set_defaults(func=cmd_restore)

    p = cmds.add_parser("export", help="write the document to a file or stdout")
    workspace_option(p)
    p.add_argument("-o", "--output", metavar="FILE", default="-",
                   help="the file to write ('-' or omitted: stdout)")
    p.add_argument("--format", choices=doc_rules.EXPORT_FORMATS, default="text",
                   help="text (exact bytes), markdown (under a title), json (with history)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.set_defaults(func=cmd_export)

    p = cmds.add_parser("import", help="replace the document with a text file "
                        "(UTF-8/16/32, any line endings)")
    p.add_argument("file", metavar="FILE")
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


def _no_such_folder(path: str) -> WorkspaceNotFound:
    return WorkspaceNotFound(f"no such folder: {path}")


def _workspace_to_write(store: MemoryStore, args: argparse.Namespace) -> Workspace:
    """The workspace of ``-w`` for a command that writes: the folder must exist; it is
    registered when new (without marking it opened in the app's recent list)."""
    path = _path_arg(args)
    if paths.folder_identity(_normalize(path)) is None:
        raise _no_such_folder(path)
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
        raise _no_such_folder(path)
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
    """``yak memory show``: the document's bytes exactly as stored, or ``--json``."""
    store = MemoryStore(ctx.db)
    workspace, stored = _workspace_to_read(store, args)
    document = _read(store, workspace, stored)
    if args.json:
        _print_json(doc_rules.document_json(workspace, document))
        return 0
    if not document.content and sys.stdout.isatty():
        print(f"(the memory document of {workspace.path} is empty)", file=sys.stderr)
    _write_stdout(doc_rules.export_text(document))
    return 0


def cmd_set(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory set``: replace the document with UTF-8 text from ``--file`` or stdin."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    if args.file is not None and args.file != "-":
        data = _read_input_file(args.file)
        what = args.file
    else:
        if sys.stdin.isatty():
            print("Reading the memory document from the terminal; end it with Ctrl-D.",
                  file=sys.stderr)
        data = sys.stdin.buffer.read()
        what = "The input"
    text = doc_rules.decode_utf8(data, what=what)
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
        print(f"Saved version {document.version} ({document.lines} lines) for {workspace.path}.")
    else:
        print(f"No changes: version {document.version} already has this text.")
    return 0


def _editor_command() -> list[str]:
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(editor, posix=os.name != "nt")


def cmd_edit(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory edit``: edit a copy in ``$VISUAL``/``$EDITOR`` (else ``vi``) and save it.

    The copy is a temporary file. When the save is refused (over the ceiling, or the memory
    changed meanwhile) or the editor fails, the file is kept and its path printed, so nothing
    typed is lost."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    document = store.read(workspace.id)
    handle, name = tempfile.mkstemp(prefix=f"yak-memory-{workspace.name}-", suffix=".txt")
    with os.fdopen(handle, "wb") as out:
        out.write(doc_rules.export_text(document))
    command = [*_editor_command(), name]
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
    print(f"Saved version {saved.version} ({saved.lines} lines) for {workspace.path}.")
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
    """``yak memory history``: revisions newest first (``id`` is what ``restore`` takes)."""
    store = MemoryStore(ctx.db)
    workspace, stored = _workspace_to_read(store, args)
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


def cmd_restore(args: argparse.Namespace, ctx: Any) -> int:
    """``yak memory restore REVISION``: a new ``restore`` revision with that content."""
    store = MemoryStore(ctx.db)
    workspace = _workspace_to_write(store, args)
    before = store.read(workspace.id).version
    revision = store.get_revision(workspace.id, args.revision)
    document = store.restore(workspace.id, revision.id, expected_version=before)
    if document.version == before:
        print(f"No changes: version {before} already has the text of revision {revision.id}.")
    else:
        print(f"Restored revision {revision.id} (version {revision.version}) as version "
              f"{document.version} ({document.lines} lines).")
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
    """``yak memory import FILE``: UTF-8/16/32 text, through the ceiling check."""
    store = MemoryStore(ctx.db)
    data = _read_input_file(args.file)
    workspace = _workspace_to_write(store, args)
    before = store.read(workspace.id).version
    document = store.import_bytes(workspace.id, data, expected_version=before,
                                  source_name=args.file)
    if document.version == before:
        print(f"No changes: version {before} already has the text of {args.file}.")
    else:
        print(f"Imported {args.file} as version {document.version} ({document.lines} lines).")
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
                      f"({document.lines} lines)? It stays restorable from history. [y/N] ")
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
