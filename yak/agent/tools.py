"""The agent's tools, bound to one workspace root ("The agent" in docs/architecture.md).

Every path a tool receives must stay inside the workspace root (``yak.agent.confinement``),
and files are opened race-free beneath it (a link swapped in after the check cannot lead out).
Walking tools (glob, grep, list) walk from the root's descriptor, never enter a linked folder,
and never report an entry whose real location is outside.

Reads run freely; ``write_file``, ``edit_file`` and ``run_command`` have
``requires_approval`` (the loop asks the user). Outputs are capped so one call cannot flood the
context. ``run_command`` runs through the shell in the workspace, confined by the sandbox
(``yak.agent.sandbox``, named in its result), with a timeout, without the Anthropic key in its
environment (so the key cannot end up in a stored tool result), and is killed with its process
group on timeout or when the turn is stopped.

Pure and testable without the loop: ``WorkspaceTools(root).run(name, input)`` (sync) or
``await .execute(name, input)``; both return a :class:`ToolResult` and never raise for a bad
call from the model.
"""

from __future__ import annotations

import asyncio
import difflib
import fnmatch
import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from yak.agent.command import run_command
from yak.agent.confinement import (
    DRIVE_PATH,
    Escape,
    ToolError,
    ToolResult,
    WorkspaceRoot,
    is_link,
    walk_beneath,
)
from yak.agent.sandbox import AUTO, Sandbox, choose
from yak.agent.tool_specs import (
    COMMAND_OUTPUT_CHARS,
    COMMAND_TIMEOUT_S,
    MAX_COMMAND_TIMEOUT_S,
    MAX_GLOB_RESULTS,
    MAX_GREP_FILE_BYTES,
    MAX_GREP_MATCHES,
    MAX_LINE_CHARS,
    MAX_LIST_ENTRIES,
    MAX_OUTPUT_CHARS,
    MAX_READ_LINES,
    MAX_WRITE_CHARS,
    SKIPPED_DIRS,
    SPECS,
)
from yak.text import head_and_tail, one_line, plural, shorten

__all__ = ["SPECS", "ToolError", "ToolResult", "WorkspaceRoot", "WorkspaceTools"]

log = logging.getLogger(__name__)


class WorkspaceTools:
    """The tools bound to one workspace root.

    Args:
        root: the workspace folder (an existing directory).
        command_timeout_s: default ``run_command`` timeout in seconds.
        command_output_chars: characters of command output the model sees.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        command_timeout_s: float = COMMAND_TIMEOUT_S,
        command_output_chars: int = COMMAND_OUTPUT_CHARS,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.paths = WorkspaceRoot(root)
        self._sandbox = sandbox
        self.command_timeout_s = command_timeout_s
        self.command_output_chars = command_output_chars
        self._sync: dict[str, Callable[[dict[str, Any]], ToolResult]] = {
            "read_file": self._read_file,
            "list_directory": self._list_directory,
            "glob": self._glob,
            "grep": self._grep,
            "write_file": self._write_file,
            "edit_file": self._edit_file,
        }

    @property
    def sandbox(self) -> Sandbox:
        """The confinement ``run_command`` uses (by default what ``auto`` finds here)."""
        if self._sandbox is None:
            self._sandbox = choose(AUTO)
        return self._sandbox

    @property
    def root(self) -> Path:
        """The resolved workspace root."""
        return self.paths.root

    # --- the registry -----------------------------------------------------------------------
    @staticmethod
    def definitions() -> list[dict[str, Any]]:
        """The tool definitions sent with every request."""
        return [spec.definition() for spec in SPECS.values()]

    @staticmethod
    def requires_approval(name: str) -> bool:
        """Whether the tool mutates (write, edit, command) and so asks the user first. An
        unknown tool does not (it only produces an error)."""
        spec = SPECS.get(name)
        return bool(spec and spec.requires_approval)

    @staticmethod
    def target(name: str, tool_input: Any) -> str:
        """A short description of what a call touches: its path, pattern or command line."""
        args = tool_input if isinstance(tool_input, dict) else {}
        if name == "run_command":
            return one_line(str(args.get("command", "")), 120)
        if name in ("glob", "grep"):
            where = args.get("path")
            pattern = one_line(str(args.get("pattern", "")), 80)
            return f"{pattern} in {where}" if where else pattern
        return one_line(str(args.get("path") or "."), 120)

    def approval_detail(self, name: str, tool_input: Any) -> str:
        """What the user approves: the new file text (or a diff against the existing file),
        the edit's unified diff, or the full command and where it runs. Never raises."""
        args = tool_input if isinstance(tool_input, dict) else {}
        try:
            if name == "run_command":
                return f"$ {args.get('command', '')}\n(in {self.root}; {self.sandbox.describe()})"
            shown = str(args.get("path"))
            path = self.paths.resolve(args.get("path"))
            rel = self.paths.relative(path)
            if name == "write_file":
                new = str(args.get("content", ""))
                try:
                    old = self.paths.read_file(path, shown=shown).decode("utf-8", "replace")
                except FileNotFoundError:
                    return f"New file {rel}:\n{new}"
                return _diff(old, new, rel) or f"{rel}: no change"
            if name == "edit_file":
                old = self.paths.read_file(path, shown=shown).decode("utf-8", "replace")
                new = old.replace(
                    str(args.get("old_string", "")), str(args.get("new_string", "")), 1
                )
                return _diff(old, new, rel) or f"{rel}: no change"
        except (ToolError, OSError) as exc:
            return f"{name} {self.target(name, args)}: {exc}"
        return f"{name} {self.target(name, args)}"

    # --- running ----------------------------------------------------------------------------
    def run(self, name: str, tool_input: Any) -> ToolResult:
        """Run a tool synchronously (``run_command`` through a private event loop; use
        :meth:`execute` from async code). Never raises for a bad call."""
        if name == "run_command":
            return asyncio.run(self.execute(name, tool_input))
        return self._guarded(name, tool_input, lambda args: self._sync[name](args))

    async def execute(self, name: str, tool_input: Any) -> ToolResult:
        """Run a tool from async code: file tools on a worker thread, commands as an asyncio
        subprocess (cancelling kills it). Never raises for a bad call; cancellation propagates.
        """
        if name == "run_command":
            args = tool_input if isinstance(tool_input, dict) else {}
            target = self.target(name, args)
            try:
                return await self._run_command(args)
            except ToolError as exc:
                return ToolResult(
                    ok=False, output=f"Error: {exc}", summary=_summary_of(exc), target=target
                )
            except OSError as exc:  # no shell, or the workspace folder is gone
                reason = exc.strerror or str(exc)
                return ToolResult(
                    ok=False,
                    output=f"Error: the command could not start: {reason}.",
                    summary=f"failed: {reason}",
                    target=target,
                )
        if name not in self._sync:
            return self._guarded(name, tool_input, lambda args: self._sync[name](args))
        return await asyncio.to_thread(self._guarded, name, tool_input, self._sync[name])

    def _guarded(
        self, name: str, tool_input: Any, fn: Callable[[dict[str, Any]], ToolResult]
    ) -> ToolResult:
        target = self.target(name, tool_input)
        if name not in SPECS:
            return ToolResult(
                ok=False,
                output=f"Error: there is no tool named {name!r}.",
                summary="unknown tool",
                target=target,
            )
        if not isinstance(tool_input, dict):
            return ToolResult(
                ok=False,
                output="Error: the tool input must be a JSON object.",
                summary="bad input",
                target=target,
            )
        try:
            return fn(tool_input)
        except ToolError as exc:
            return ToolResult(
                ok=False, output=f"Error: {exc}", summary=_summary_of(exc), target=target
            )
        except (OSError, UnicodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return ToolResult(
                ok=False, output=f"Error: {reason}.", summary=f"failed: {reason}", target=target
            )

    # --- read-only tools --------------------------------------------------------------------
    def _read_file(self, args: dict[str, Any]) -> ToolResult:
        path = self.paths.resolve(args.get("path"))
        rel = self.paths.relative(path)
        try:
            data = self.paths.read_file(path, shown=str(args.get("path")))
        except FileNotFoundError:
            raise ToolError(f"{rel} does not exist.") from None
        if b"\0" in data[:8192]:
            return ToolResult(
                ok=True,
                output=f"{rel} is a binary file ({len(data)} bytes).",
                summary="binary file",
                target=rel,
            )
        lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
        offset = _positive_int(args.get("offset"), 1, "offset")
        limit = min(_positive_int(args.get("limit"), MAX_READ_LINES, "limit"), MAX_READ_LINES)
        chosen = lines[offset - 1 : offset - 1 + limit]
        text = "".join(chosen)
        more = len(lines) - (offset - 1 + len(chosen))
        if more > 0:
            text += f"\n[{more} more lines; read again with offset={offset + len(chosen)}]"
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

    def _list_directory(self, args: dict[str, Any]) -> ToolResult:
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
        text = "\n".join(shown) or "(empty folder)"
        if len(entries) > len(shown):
            text += f"\n[{len(entries) - len(shown)} more entries not shown]"
        return ToolResult(
            ok=True,
            output=head_and_tail(text, MAX_OUTPUT_CHARS),
            summary=f"{len(entries)} entries",
            target=rel,
        )

    def _glob(self, args: dict[str, Any]) -> ToolResult:
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
        found.sort()
        text = "\n".join(found) or "(no matches)"
        if total > len(found):
            text += f"\n[{total - len(found)} more matches not shown]"
        return ToolResult(
            ok=True,
            output=head_and_tail(text, MAX_OUTPUT_CHARS),
            summary=f"{total} matches",
            target=pattern,
        )

    def _grep(self, args: dict[str, Any]) -> ToolResult:
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
        text = "\n".join(matches) or "(no matches)"
        if total > len(matches):
            text += f"\n[{total - len(matches)} more matches not shown]"
        return ToolResult(
            ok=True,
            output=head_and_tail(text, MAX_OUTPUT_CHARS),
            summary=f"{total} matches",
            target=pattern,
        )

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

    # --- mutating tools ---------------------------------------------------------------------
    def _write_file(self, args: dict[str, Any]) -> ToolResult:
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

    def _edit_file(self, args: dict[str, Any]) -> ToolResult:
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

    async def _run_command(self, args: dict[str, Any]) -> ToolResult:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ToolError("A command is required.")
        timeout = args.get("timeout_s", self.command_timeout_s)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            raise ToolError("'timeout_s' must be a positive number of seconds.")
        return await run_command(
            command,
            cwd=self.root,
            timeout_s=min(float(timeout), MAX_COMMAND_TIMEOUT_S),
            output_chars=self.command_output_chars,
            target=self.target("run_command", args),
            sandbox=self.sandbox,
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


def _diff(old: str, new: str, rel: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{rel}",
            tofile=f"b/{rel}",
        )
    )


def _positive_int(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"'{name}' must be a positive whole number.")
    return value


def _summary_of(exc: ToolError) -> str:
    message = str(exc)
    if message.startswith("Refused:"):
        if "outside the workspace" in message:
            return "refused: outside the workspace"
        if "drive or network path" in message:
            return "refused: drive or network path"
        return "refused"
    return one_line(message, 80)


O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


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
