"""``yak memory sync|search``: the memory shared beyond Yak ("Sharing the memory" in
docs/memory.md).

- ``sync FILE [-w DIR] [--json]``: write the workspace's document into FILE's managed block
  (between ``<!-- yak:memory -->`` and ``<!-- /yak:memory -->``), creating the file or the block
  when missing; everything outside the block is kept byte for byte; a second run writes nothing
  and says "already in sync". A block holding text Yak did not write there (an edit by hand) or
  git conflict markers is left as it is: exit 3, one line; ``--force`` replaces it.
- ``sync FILE --keep``: the same, and FILE's block is rewritten after every applied revision
  from now on (stored per workspace); ``sync --stop`` ends it.
- ``search QUERY [--json]``: every line of every workspace's document containing QUERY, case
  aside (the documents chosen by the database's full-text index; a plain scan, said on stderr,
  where there is none); ``--json``: a list of ``workspace``, ``line``, ``text``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from yak.cli import output
from yak.cli.context import Context, workspace_path
from yak.cli.parsing import json_option, workspace_command
from yak.errors import UsageError
from yak.memory.search import search_documents
from yak.memory.sharing.sync import check_inside, sync_file

if TYPE_CHECKING:
    from yak.core import Core


def _sync_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", nargs="?", help="the file to write into (UTF-8 text)")
    keeping = p.add_mutually_exclusive_group()
    keeping.add_argument(
        "--keep",
        action="store_true",
        help="also rewrite FILE's block after every change to the memory from now on",
    )
    keeping.add_argument(
        "--stop",
        action="store_true",
        help="stop keeping a file in sync (no FILE needed; the file stays as it is)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the block even when it was edited by hand or holds conflict markers",
    )
    workspace_command(p, cmd_sync, reads_only=True)


def _search_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="the text to find")
    json_option(p)
    p.set_defaults(func=cmd_search, reads_only=True)


PARSERS = {"sync": _sync_parser, "search": _search_parser}


def cmd_sync(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory sync FILE [--keep] [--force]`` / ``sync --stop``: exit 0 written, already
    in sync or stopped; 2 no FILE, a file that cannot be read or written, not UTF-8, or whose
    markers are not one block, or ``--stop`` with no file kept in sync; 3 the block was edited
    by hand or holds conflict markers (without ``--force``)."""
    if args.stop:
        return _stop_sync(args, ctx)
    if args.file is None:
        raise UsageError("give the FILE to write the memory into (e.g. AGENTS.md)")
    try:  # bytes that are not UTF-8 arrive as surrogates; such a name cannot be stored
        args.file.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"the file name is not UTF-8 text (invalid byte at offset {exc.start}); "
            "nothing was written"
        ) from None

    async def work(core: Core) -> int:
        if args.keep:
            workspace, stored = await core.workspaces.for_write(workspace_path(args)), True
        else:
            workspace, stored = await core.workspaces.for_read(workspace_path(args))
        target = str(check_inside(args.file, workspace.path))
        if stored:
            document = await core.memory.read(workspace.id)
            content, version, count = document.content, document.version, document.lines
        else:
            content, version, count = "", 0, 0
        if args.keep:
            result = await core.kept_file.keep_in_sync(workspace.id, target, force=args.force)
        else:
            past = [r.content for r in await core.memory.history(workspace.id)] if stored else []
            # a command that reads runs in place
            result = sync_file(target, content, written=lambda: past, force=args.force)
        if args.json:
            output.print_json(
                {
                    "file": str(result.path),
                    "created": result.created,
                    "changed": result.changed,
                    "version": version,
                    "lines": count,
                    "workspace": workspace.path,
                    "workspace_id": workspace.id,
                    "kept_in_sync": bool(args.keep),
                }
            )
            return 0
        if not result.changed:
            print(f"{target} is already in sync with version {version} of the memory.")
        else:
            verb = "Created" if result.created else "Updated"
            print(f"{verb} {target} with version {version} of the memory ({output.lines(count)}).")
        if args.keep:
            print("It is kept in sync after every change from now on ('sync --stop' ends it).")
        return 0

    return ctx.run(work)


def _stop_sync(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory sync --stop``: exit 0 stopped; 2 no file was kept in sync."""

    async def work(core: Core) -> int:
        workspace, stored = await core.workspaces.for_read(workspace_path(args))
        path = await core.kept_file.stop_keeping_in_sync(workspace.id) if stored else None
        if path is None:
            raise UsageError(f"{workspace.path} keeps no file in sync")
        if args.json:
            output.print_json({"workspace": workspace.path, "stopped": path})
        else:
            print(f"{path} is no longer kept in sync (the file stays as it is).")
        return 0

    return ctx.run(work)


def cmd_search(args: argparse.Namespace, ctx: Context) -> int:
    """``yak memory search QUERY``: exit 0 whether or not anything matched (``--json``: ``[]``);
    2 a blank query. A plain scan says so on stderr."""

    async def work(core: Core) -> int:
        found = await search_documents(core.memory, args.query)
        if found.why_scan:
            output.note(f"Searched by plain scan: {found.why_scan}.")
        hits = found.hits
        if args.json:
            output.print_json(
                [{"workspace": h.workspace.path, "line": h.line, "text": h.text} for h in hits]
            )
        elif not hits:
            print(f"No memory document contains {args.query!r}.")
        else:
            for hit in hits:
                print(f"{hit.workspace.path}:{hit.line}: {hit.text}")
        return 0

    return ctx.run(work)
