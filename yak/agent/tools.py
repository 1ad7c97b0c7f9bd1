"""The agent's tools, bound to one workspace root ("The agent" in docs/agent.md).

Every path a tool receives must stay inside the workspace root (``yak.agent.confinement``),
and files are opened race-free beneath it (a link swapped in after the check cannot lead out);
the file tools themselves are ``yak.agent.file_tools``, and what a call acts on (its target)
is :func:`yak.text.tool_target`.

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
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from yak.agent.command import run_command
from yak.agent.confinement import ToolError, ToolResult, WorkspaceRoot
from yak.agent.file_tools import FileTools
from yak.agent.sandbox import AUTO, Sandbox, choose
from yak.agent.tool_specs import (
    COMMAND_OUTPUT_CHARS,
    COMMAND_TIMEOUT_S,
    MAX_COMMAND_TIMEOUT_S,
    SPECS,
)
from yak.linediff import unified_diff
from yak.text import one_line, tool_target

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
        files = FileTools(self.paths)
        self._sync: dict[str, Callable[[dict[str, Any]], ToolResult]] = {
            "read_file": files.read_file,
            "list_directory": files.list_directory,
            "glob": files.glob,
            "grep": files.grep,
            "write_file": files.write_file,
            "edit_file": files.edit_file,
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
            return f"{name} {tool_target(args)}: {exc}"
        return f"{name} {tool_target(args)}"

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
            target = tool_target(args)
            try:
                return await self._run_command(args)
            except ToolError as exc:
                return _refused(exc, target)
            except OSError as exc:  # no shell, or the workspace folder is gone
                reason = exc.strerror or str(exc)
                return _failed(
                    f"Error: the command could not start: {reason}.", f"failed: {reason}", target
                )
        if name not in self._sync:
            return self._guarded(name, tool_input, lambda args: self._sync[name](args))
        return await asyncio.to_thread(self._guarded, name, tool_input, self._sync[name])

    def _guarded(
        self, name: str, tool_input: Any, fn: Callable[[dict[str, Any]], ToolResult]
    ) -> ToolResult:
        target = tool_target(tool_input)
        if name not in SPECS:
            return _failed(f"Error: there is no tool named {name!r}.", "unknown tool", target)
        if not isinstance(tool_input, dict):
            return _failed("Error: the tool input must be a JSON object.", "bad input", target)
        try:
            return fn(tool_input)
        except ToolError as exc:
            return _refused(exc, target)
        except (OSError, UnicodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return _failed(f"Error: {reason}.", f"failed: {reason}", target)

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
            target=tool_target(args),
            sandbox=self.sandbox,
        )


def _diff(old: str, new: str, rel: str) -> str:
    return unified_diff(old, new, old_name=f"a/{rel}", new_name=f"b/{rel}")


def _failed(output: str, summary: str, target: str) -> ToolResult:
    """A call that did not run or failed: ``output`` for the model, ``summary`` for the user."""
    return ToolResult(ok=False, output=output, summary=summary, target=target)


def _refused(exc: ToolError, target: str) -> ToolResult:
    """A call the tool refused (``ToolError``): its sentence, and a short summary of it."""
    return _failed(f"Error: {exc}", _summary_of(exc), target)


def _summary_of(exc: ToolError) -> str:
    message = str(exc)
    if message.startswith("Refused:"):
        if "outside the workspace" in message:
            return "refused: outside the workspace"
        if "drive or network path" in message:
            return "refused: drive or network path"
        return "refused"
    return one_line(message, 80)
