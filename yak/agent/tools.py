"""The agent's tools, bound to one workspace root ("The agent" in docs/architecture.md).

Every path a tool receives must stay inside the workspace root (``yak.agent.confinement``).
Walking tools (glob, grep, list) never report an entry whose real location is outside.

Reads run freely; ``write_file``, ``edit_file`` and ``run_command`` have
``requires_approval`` (the loop asks the user). Outputs are capped so one call cannot flood the
context. ``run_command`` runs through the shell in the workspace with a timeout, without the
Anthropic key in its environment (so the key cannot end up in a stored tool result), and is
killed with its process group on timeout or when the turn is stopped.

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from yak.agent.command import run_command
from yak.agent.confinement import (
    DRIVE_PATH,
    ToolError,
    ToolResult,
    WorkspaceRoot,
)
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
    ) -> None:
        self.paths = WorkspaceRoot(root)
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
                return f"$ {args.get('command', '')}\n(in {self.root})"
            path = self.paths.resolve(args.get("path"))
            rel = self.paths.relative(path)
            if name == "write_file":
                new = str(args.get("content", ""))
                if path.is_file():
                    old = path.read_text(encoding="utf-8", errors="replace")
                    return _diff(old, new, rel) or f"{rel}: no change"
                return f"New file {rel}:\n{new}"
            if name == "edit_file":
                old = path.read_text(encoding="utf-8", errors="replace")
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
        if path.is_dir():
            raise ToolError(f"{rel} is a folder; use list_directory.")
        if not path.exists():
            raise ToolError(f"{rel} does not exist.")
        data = path.read_bytes()
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
        if not path.is_dir():
            raise ToolError(f"{rel} is not a folder.")
        entries = []
        for child in sorted(path.iterdir(), key=lambda p: p.name):
            if not self.paths.inside(child):
                entries.append(f"{child.name} -> (outside the workspace)")
            elif child.is_dir():
                entries.append(child.name + "/")
            else:
                entries.append(child.name)
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
        if not base.is_dir():
            raise ToolError(f"{self.paths.relative(base)} is not a folder.")
        found: list[str] = []
        total = 0
        for match in base.glob(pattern):
            if any(part in SKIPPED_DIRS for part in match.relative_to(base).parts[:-1]):
                continue
            if not self.paths.inside(match):
                continue
            total += 1
            if len(found) < MAX_GLOB_RESULTS:
                found.append(
                    match.relative_to(self.root).as_posix() + ("/" if match.is_dir() else "")
                )
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
        for file in self._walk_files(base):
            if include and not fnmatch.fnmatch(file.name, str(include)):
                continue
            try:
                if file.stat().st_size > MAX_GREP_FILE_BYTES:
                    continue
                data = file.read_bytes()
            except OSError:
                continue
            if b"\0" in data[:8192]:
                continue
            rel = file.relative_to(self.root).as_posix()
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

    def _walk_files(self, base: Path) -> Iterator[Path]:
        """Files under ``base`` (or ``base`` itself), never leaving the workspace."""
        if base.is_file():
            yield base
            return
        for folder, dirs, files in os.walk(base, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for name in sorted(files):
                file = Path(folder) / name
                if self.paths.inside(file) and file.is_file():
                    yield file

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
        if path.is_dir():
            raise ToolError(f"{rel} is a folder.")
        existed = path.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        # Re-check after creating folders: a folder on the way may be a symlink planted since.
        if not self.paths.inside(path.parent):
            raise ToolError(f"Refused: {rel} is outside the workspace.")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
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
        if not path.is_file():
            raise ToolError(f"{rel} does not exist or is not a file.")
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
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
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text.replace(old, new, 1))
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
        )


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
