"""The agent's file tools (read_file, list_directory, glob, grep, write_file, edit_file) over
one workspace root; :class:`yak.agent.tools.WorkspaceTools` names them and guards every call.

Every path must stay inside the root (``yak.agent.confinement``) and every file is opened
race-free beneath it. Walking tools (glob, grep) walk from the root's descriptor, never enter a
linked folder, and never report an entry whose real location is outside. Outputs are capped
(``yak.agent.tool_specs``). A bad call raises :class:`~yak.agent.confinement.ToolError`, an
``OSError`` or a ``UnicodeError``; the caller turns each into an error result.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from yak.agent.confinement import (
    DRIVE_PATH,
    Escape,
    ToolError,
    ToolResult,
    WorkspaceRoot,
    is_link,
    walk_beneath,
)
from yak.agent.tool_specs import (
    MAX_GLOB_RESULTS,
    MAX_GREP_FILE_BYTES,
    MAX_GREP_MATCHES,
    MAX_LINE_CHARS,
    MAX_LIST_ENTRIES,
    MAX_OUTPUT_CHARS,
    MAX_READ_BYTES,
    MAX_READ_LINES,
    MAX_WRITE_CHARS,
    SKIPPED_DIRS,
)
from yak.text import head_and_tail, plural, shorten

O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class FileTools:
    """The file tools bound to one workspace root; each takes the model's input (a dict)."""

    def __init__(self, paths: WorkspaceRoot) -> None:
        self.paths = paths

    @property
    def root(self) -> Path:
        """The resolved workspace root."""
        return self.paths.root

    def read_file(self, args: dict[str, Any]) -> ToolResult:
        path = self.paths.resolve(args.get("path"))
        rel = self.paths.relative(path)
        try:
            # One byte more than the limit tells a file that was cut from one that fits.
            data = self.paths.read_file(path, shown=str(args.get("path")), limit=MAX_READ_BYTES + 1)
        except FileNotFoundError:
            raise ToolError(f"{rel} does not exist.") from None
        cut_at_bytes = len(data) > MAX_READ_BYTES
        data = data[:MAX_READ_BYTES]
        if b"\0" in data[:8192]:
            return ToolResult(
                ok=True,
                output=f"{rel} is a binary file ({len(data)} bytes).",
                summary="binary file",
                target=rel,
            )
        lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
        if cut_at_bytes and len(lines) > 1:
            lines.pop()  # the last line was cut in the middle
        offset = _positive_int(args.get("offset"), 1, "offset")
        limit = min(_positive_int(args.get("limit"), MAX_READ_LINES, "limit"), MAX_READ_LINES)
        chosen = lines[offset - 1 : offset - 1 + limit]
        text = "".join(chosen)
        more = len(lines) - (offset - 1 + len(chosen))
        if more > 0:
            text += f"\n[{more} more lines; read again with offset={offset + len(chosen)}]"
        elif cut_at_bytes:
            text += (
                f"\n[{rel} is larger than the {MAX_READ_BYTES:,} bytes read_file reads; "
                "the rest of it was not read (grep or a command can search it)]"
            )
        if not lines:
            text = f"({rel} is empty)"
        elif not chosen:
            text = f"(no lines from offset {offset}; {rel} has {len(lines)} lines)"
        return ToolResult(
            ok=True,
            output=head_and_tail(text, MAX_OUTPUT_CHARS),
            summary=f"read {plural(len(chosen), 'line')}",
            target=rel,
        )

    def list_directory(self, args: dict[str, Any]) -> ToolResult:
        path = self.paths.resolve(args.get("path"), default=".")
        rel = self.paths.relative(path)
        try:
            fd = self.paths.open(path, os.O_RDONLY | O_DIRECTORY, shown=str(args.get("path")))
        except (NotADirectoryError, FileNotFoundError):
            raise ToolError(f"{rel} is not a folder.") from None
        entries = []
        try:
            for name in sorted(os.listdir(fd)):
                if is_link(name, fd) and not self.paths.inside(path / name):
                    entries.append(f"{name} -> (outside the workspace)")
                elif _is_dir(name, fd):
                    entries.append(name + "/")
                else:
                    entries.append(name)
        finally:
            os.close(fd)
        shown = entries[:MAX_LIST_ENTRIES]
        return _listing(shown, len(entries), "entries", empty="(empty folder)", target=rel)

    def glob(self, args: dict[str, Any]) -> ToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            raise ToolError("A glob pattern is required.")
        pattern = pattern.replace("\\", "/")
        if os.path.isabs(pattern) or DRIVE_PATH.match(pattern) or ".." in Path(pattern).parts:
            raise ToolError(
                f"Refused: the pattern {pattern!r} reaches outside the workspace; "
                "use a pattern relative to it."
            )
        base = self.paths.resolve(args.get("path"), default=".")
        base_rel = self.paths.relative(base)
        segments = [part for part in pattern.split("/") if part not in ("", ".")]
        found: list[str] = []
        total = 0
        start = "" if base_rel == "." else base_rel + "/"
        for folder, dirs, files, dir_fd in self._walk(base, str(args.get("path") or ".")):
            inner = folder[len(start) :] if folder != base_rel else ""
            prefix = inner + "/" if inner else ""
            for name, is_folder in [(d, True) for d in dirs] + [(f, False) for f in files]:
                if not _glob_match(segments, (prefix + name).split("/")):
                    continue
                if is_link(name, dir_fd) and not self.paths.inside(self.root / folder / name):
                    continue
                total += 1
                if len(found) < MAX_GLOB_RESULTS:
                    where = f"{folder}/{name}" if folder else name
                    found.append(where + ("/" if is_folder else ""))
        return _listing(sorted(found), total, "matches", empty="(no matches)", target=pattern)

    def grep(self, args: dict[str, Any]) -> ToolResult:
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("A search pattern is required.")
        try:
            regex = re.compile(pattern, re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            raise ToolError(f"The pattern is not a valid regular expression: {exc}.") from None
        include = args.get("include")
        base = self.paths.resolve(args.get("path"), default=".")
        matches: list[str] = []
        total = 0
        for rel, data in self._files(base, str(args.get("path") or ".")):
            if include and not fnmatch.fnmatch(rel.rsplit("/", 1)[-1], str(include)):
                continue
            if b"\0" in data[:8192]:
                continue
            for number, line in enumerate(
                data.decode("utf-8", errors="replace").splitlines(), start=1
            ):
                if regex.search(line):
                    total += 1
                    if len(matches) < MAX_GREP_MATCHES:
                        matches.append(f"{rel}:{number}: {shorten(line.rstrip(), MAX_LINE_CHARS)}")
        return _listing(matches, total, "matches", empty="(no matches)", target=pattern)

    def _walk(self, base: Path, shown: str) -> Iterator[tuple[str, list[str], list[str], int]]:
        """The folders under ``base`` (skipping :data:`SKIPPED_DIRS`), walked race-free."""
        try:
            walk = walk_beneath(self.root, self.paths.relative(base))
            for folder, dirs, files, dir_fd in walk:
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                files.sort()
                yield folder, dirs, files, dir_fd
        except Escape:
            raise ToolError(f"Refused: {shown!r} is outside the workspace.") from None
        except (NotADirectoryError, FileNotFoundError):
            raise ToolError(f"{self.paths.relative(base)} is not a folder.") from None

    def _files(self, base: Path, shown: str) -> Iterator[tuple[str, bytes]]:
        """``(workspace-relative path, bytes)`` of each regular file under ``base`` (or
        ``base`` itself) of at most :data:`MAX_GREP_FILE_BYTES`, every one opened race-free; a
        link is followed only while it stays inside."""
        try:
            yield self.paths.relative(base), self.paths.read_file(base, shown=shown)
            return
        except FileNotFoundError:
            raise ToolError(f"{self.paths.relative(base)} does not exist.") from None
        except ToolError as exc:
            if "is a folder" not in str(exc):
                raise
        for folder, _dirs, files, dir_fd in self._walk(base, shown):
            for name in files:
                rel = f"{folder}/{name}" if folder else name
                try:
                    fd = os.open(name, os.O_RDONLY | O_NOFOLLOW | O_NONBLOCK, dir_fd=dir_fd)
                except OSError:  # a link (followed below, inside only) or gone
                    try:
                        data = self.paths.read_file(self.root / rel, shown=rel)
                    except (ToolError, OSError):
                        continue
                    if len(data) <= MAX_GREP_FILE_BYTES:
                        yield rel, data
                    continue
                with os.fdopen(fd, "rb") as handle:
                    info = os.fstat(handle.fileno())
                    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_GREP_FILE_BYTES:
                        continue
                    data = handle.read()
                yield rel, data

    def write_file(self, args: dict[str, Any]) -> ToolResult:
        path = self.paths.resolve(args.get("path"))
        rel = self.paths.relative(path)
        content = args.get("content")
        if not isinstance(content, str):
            raise ToolError("'content' must be a string.")
        if len(content) > MAX_WRITE_CHARS:
            raise ToolError(
                f"The content is too large ({len(content)} characters; at most {MAX_WRITE_CHARS})."
            )
        shown = str(args.get("path"))
        existed = True
        try:
            try:
                fd = self.paths.open(path, os.O_WRONLY, shown=shown, parents=True)
            except FileNotFoundError:
                existed = False
                fd = self.paths.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, shown=shown)
        except IsADirectoryError:
            raise ToolError(f"{rel} is a folder.") from None
        with os.fdopen(fd, "wb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ToolError(f"{rel} is not a regular file.")
            handle.truncate(0)
            handle.write(content.encode("utf-8"))
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "overwrote" if existed else "created"
        return ToolResult(
            ok=True,
            output=(
                f"{verb} {rel} ({plural(lines, 'line')}, {plural(len(content), 'character')})."
            ),
            summary=f"{verb} {rel} ({plural(lines, 'line')})",
            target=rel,
        )

    def edit_file(self, args: dict[str, Any]) -> ToolResult:
        path = self.paths.resolve(args.get("path"))
        rel = self.paths.relative(path)
        old, new = args.get("old_string"), args.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            raise ToolError("'old_string' and 'new_string' must be strings.")
        if not old:
            raise ToolError("'old_string' is empty; use write_file to create a file.")
        try:
            fd = self.paths.open(path, os.O_RDWR | O_NONBLOCK, shown=str(args.get("path")))
        except (FileNotFoundError, IsADirectoryError):
            raise ToolError(f"{rel} does not exist or is not a file.") from None
        with os.fdopen(fd, "r+b") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ToolError(f"{rel} does not exist or is not a file.")
            text = handle.read().decode("utf-8")
            _replace_in(handle, text, old, new, rel)
        return ToolResult(
            ok=True,
            output=f"edited {rel}: replaced 1 occurrence.",
            summary=f"edited {rel}",
            target=rel,
        )


def _listing(shown: list[str], total: int, noun: str, *, empty: str, target: str) -> ToolResult:
    """A listing tool's result: the ``shown`` lines (``empty`` when none), a line saying how
    many of ``total`` were left out, and ``"<total> <noun>"`` as the summary."""
    text = "\n".join(shown) or empty
    if total > len(shown):
        text += f"\n[{total - len(shown)} more {noun} not shown]"
    return ToolResult(
        ok=True,
        output=head_and_tail(text, MAX_OUTPUT_CHARS),
        summary=f"{total} {noun}",
        target=target,
    )


def _replace_in(handle: Any, text: str, old: str, new: str, rel: str) -> None:
    """Replace the one occurrence of ``old`` in the open file ``handle`` whose text is
    ``text``; zero or several occurrences leave it untouched.

    Raises:
        ToolError: ``old`` is missing or occurs more than once.
    """
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"'old_string' was not found in {rel}; it must match the file "
            "exactly, including whitespace."
        )
    if count > 1:
        raise ToolError(
            f"'old_string' occurs {count} times in {rel}; include more "
            "surrounding text so it matches exactly once."
        )
    handle.seek(0)
    handle.truncate(0)
    handle.write(text.replace(old, new, 1).encode("utf-8"))


def _positive_int(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"'{name}' must be a positive whole number.")
    return value


def _is_dir(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in the folder ``dir_fd`` is a folder (a link to one counts)."""
    try:
        return stat.S_ISDIR(os.stat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _glob_match(pattern: list[str], parts: list[str]) -> bool:
    """Whether path ``parts`` match glob ``pattern`` segments (``**`` is any number of
    folders; other segments match one name with ``fnmatch``, case-sensitively)."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_glob_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], head) and _glob_match(rest, parts[1:])
