"""What the model is told about each tool: its name, description and input schema, whether it
asks the user first, and the limits the tools keep to (lines, characters, entries, seconds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from yak.limits import FILE_READ_BYTES, READ_LINES, TOOL_OUTPUT_CHARS

MAX_READ_LINES = READ_LINES  # lines returned by one read_file call
MAX_OUTPUT_CHARS = TOOL_OUTPUT_CHARS  # characters of any tool output the model sees
MAX_READ_BYTES = FILE_READ_BYTES  # bytes read_file takes from disk
MAX_LIST_ENTRIES = 1000
MAX_GLOB_RESULTS = 1000
MAX_GREP_MATCHES = 500
MAX_GREP_FILE_BYTES = 2_000_000  # larger files are skipped by grep
MAX_LINE_CHARS = 500  # a grep match line is shortened to this
MAX_WRITE_CHARS = 2_000_000
COMMAND_TIMEOUT_S = 120.0
MAX_COMMAND_TIMEOUT_S = 600.0
COMMAND_OUTPUT_CHARS = 30_000
SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
}


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its API definition, whether it needs approval, and how to run it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    requires_approval: bool

    def definition(self) -> dict[str, Any]:
        """The Messages API tool definition."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def _tool(
    name: str,
    description: str,
    properties: dict[str, Any],
    required: list[str],
    *,
    asks: bool = False,
) -> ToolSpec:
    """A tool whose input is an object of ``properties`` and nothing else; ``asks``: it
    mutates, so the user approves each call first."""
    schema = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    return ToolSpec(name, description, schema, requires_approval=asks)


def _folder(description: str) -> dict[str, Any]:
    """A ``path`` property that names a folder (or a file) and says its default."""
    return {**_PATH, "description": description}


_STRING: dict[str, Any] = {"type": "string"}
_PATH: dict[str, Any] = {"type": "string", "description": "A path relative to the workspace root."}

SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        _tool(
            "read_file",
            "Read a text file in the workspace. Returns at most "
            f"{MAX_READ_LINES} lines per call; use offset/limit for more.",
            {
                "path": _PATH,
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to return (1-based).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "How many lines to return.",
                },
            },
            ["path"],
        ),
        _tool(
            "list_directory",
            "List a directory of the workspace (folders end with '/').",
            {"path": _folder("A folder relative to the workspace root; default the root.")},
            [],
        ),
        _tool(
            "glob",
            "Find files by glob pattern (e.g. 'src/**/*.py'), relative to the "
            "workspace root or to 'path'.",
            {"pattern": _STRING, "path": _folder("Folder to search from; default the root.")},
            ["pattern"],
        ),
        _tool(
            "grep",
            "Search file contents with a regular expression (Python syntax). Returns "
            "'path:line: text' lines.",
            {
                "pattern": _STRING,
                "path": _folder("File or folder to search; default the root."),
                "include": {
                    "type": "string",
                    "description": "Only files whose name matches this glob, e.g. '*.py'.",
                },
                "ignore_case": {"type": "boolean"},
            },
            ["pattern"],
        ),
        _tool(
            "write_file",
            "Create or overwrite a text file in the workspace with 'content' "
            "(folders are created). Asks the user first.",
            {"path": _PATH, "content": _STRING},
            ["path", "content"],
            asks=True,
        ),
        _tool(
            "edit_file",
            "Replace one exact occurrence of 'old_string' with 'new_string' in a "
            "file. 'old_string' must match exactly once (include surrounding lines to make it "
            "unique). Asks the user first.",
            {"path": _PATH, "old_string": _STRING, "new_string": _STRING},
            ["path", "old_string", "new_string"],
            asks=True,
        ),
        _tool(
            "run_command",
            "Run a shell command in the workspace root and return its exit "
            f"code and output (capped at {COMMAND_OUTPUT_CHARS} characters). Default timeout "
            f"{COMMAND_TIMEOUT_S:g} s. Asks the user first.",
            {
                "command": _STRING,
                "timeout_s": {"type": "number", "minimum": 1, "maximum": MAX_COMMAND_TIMEOUT_S},
            },
            ["command"],
            asks=True,
        ),
    )
}
