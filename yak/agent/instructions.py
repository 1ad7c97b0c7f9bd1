"""The workspace's own instruction files in the system prompt ("The agent" in
docs/agent.md): pure reading and formatting, no Qt, no database.

Other coding agents read ``AGENTS.md``, ``CLAUDE.md``, ``.claude/CLAUDE.md`` and
``.github/copilot-instructions.md``; Yak reads them too, in every folder from the git root down to
the workspace (outermost first, so the nearest file comes last and reads as the most specific).
Without a git repository only the workspace folder itself is looked at.

They are the user's instructions, so they go in their own labelled block, apart from the memory
block (background notes). Reading is confined like the tools: each file is opened beneath the
outermost folder looked at, and a symlink whose target is outside it is skipped; a file already
read under another name (``CLAUDE.md`` a link to ``AGENTS.md``) is read once. Each file is cut
at :data:`MAX_FILE_CHARS` and the whole block at :data:`MAX_TOTAL_CHARS`, with a visible note
where text was cut. The block ``yak memory sync`` writes into such a file is left out: the memory
goes in its own block as background notes, and not at all while memory is off.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from yak.agent.confinement import ToolError, WorkspaceRoot
from yak.agent.types import CutFile
from yak.memory.prompts.injection import neutralize_tags
from yak.memory.sharing.sync import MEMORY_BLOCK_NOTE, without_memory_block

# The files looked for in each folder, in this order.
INSTRUCTION_NAMES = (
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    ".github/copilot-instructions.md",
)
MAX_FILE_CHARS = 12_000  # one file's text beyond this is cut (a note says so)
MAX_TOTAL_CHARS = 24_000  # all files together; files past it are cut or left out (noted)

BLOCK_TAG = "workspace-instructions"
FILE_TAG = "instruction-file"
FRAMING = (
    "The workspace-instructions block above holds the instruction files the user keeps in this "
    "project (for any coding agent working here). Follow them as the user's own instructions; "
    "what the user says in the conversation takes precedence."
)


@dataclass(frozen=True)
class InstructionFile:
    """One instruction file as read.

    ``name`` is its path relative to the git root (the workspace when there is none), in POSIX
    form (``AGENTS.md``, ``backend/CLAUDE.md``); ``text`` its content (UTF-8, undecodable bytes
    replaced, CRLF turned into LF), already cut to :data:`MAX_FILE_CHARS`; ``chars`` the length
    of the whole text before any cut.
    """

    name: str
    text: str
    chars: int

    @property
    def cut(self) -> bool:
        """Whether the text was cut."""
        return len(self.text) < self.chars


def git_root(workspace: str | os.PathLike[str]) -> Path | None:
    """The nearest folder at or above ``workspace`` (symlinks resolved) holding a ``.git``
    folder or file, or ``None``."""
    start = Path(os.path.realpath(os.fspath(workspace)))
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def read_instruction_files(workspace: str | os.PathLike[str]) -> list[InstructionFile]:
    """The instruction files that apply to ``workspace``, outermost folder first.

    Missing, empty (blank), unreadable and non-regular files are skipped, as is a file or
    folder whose symlink leads outside the git root (the workspace when there is none). Never
    raises for a file; a workspace folder that does not exist gives ``[]``.
    """
    here = Path(os.path.realpath(os.fspath(workspace)))
    if not here.is_dir():
        return []
    top = git_root(here) or here
    root = WorkspaceRoot(top)
    rel_here = here.relative_to(top)
    files: list[InstructionFile] = []
    seen: set[tuple[int, int]] = set()  # (device, inode) of each file read: a link is one file
    for folder in [*reversed(rel_here.parents), rel_here]:
        for name in INSTRUCTION_NAMES:
            found = _read(root, (folder / name).as_posix(), seen)
            if found is not None:
                files.append(found)
    return files


def _read(root: WorkspaceRoot, rel: str, seen: set[tuple[int, int]]) -> InstructionFile | None:
    try:
        resolved = root.resolve(rel)
        if not resolved.is_file():
            return None
        status = resolved.stat()
        identity = (status.st_dev, status.st_ino)
        if identity in seen:  # the same file under another name (a symlink, a hard link)
            return None
        data = root.read_file(resolved, shown=rel)
        seen.add(identity)
    except (ToolError, OSError):
        return None
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    text = without_memory_block(text)
    if not text.replace(MEMORY_BLOCK_NOTE, "").strip():
        return None
    return InstructionFile(name=rel, text=text[:MAX_FILE_CHARS], chars=len(text))


def instructions_block(files: list[InstructionFile]) -> str:
    """The system-prompt block for the instruction files.

    Returns:
        ``""`` when there are none; otherwise ``<workspace-instructions>`` on its own line,
        each file between ``<instruction-file path="NAME">`` and ``</instruction-file>`` (both
        tags neutralized inside the text, see ``neutralize_tags``), a line
        ``[NAME was cut: the first N of M characters are shown.]`` after a cut file,
        ``[Left out, over the size limit: NAME, …]`` when files did not fit at all, then
        ``</workspace-instructions>`` and the framing sentence on its own line.
    """
    if not files:
        return ""
    parts = [f"<{BLOCK_TAG}>"]
    budget = MAX_TOTAL_CHARS
    left_out: list[str] = []
    for file in files:
        if budget <= 0:
            left_out.append(file.name)
            continue
        text = file.text[:budget]
        budget -= len(text)
        body = neutralize_tags(neutralize_tags(text, BLOCK_TAG), FILE_TAG).strip("\n")
        parts.append(f'<{FILE_TAG} path="{file.name}">\n{body}\n</{FILE_TAG}>')
        if len(text) < file.chars:
            parts.append(
                f"[{file.name} was cut: the first {len(text)} of {file.chars} characters are "
                "shown.]"
            )
    if left_out:
        parts.append(f"[Left out, over the size limit: {', '.join(left_out)}]")
    parts.append(f"</{BLOCK_TAG}>")
    return "\n".join(parts) + "\n" + FRAMING


def cut_files(files: list[InstructionFile]) -> tuple[CutFile, ...]:
    """The files :func:`instructions_block` cuts or leaves out, by the same limits
    (:data:`MAX_FILE_CHARS` a file, :data:`MAX_TOTAL_CHARS` in all), so the user can be told
    what the model was told."""
    cut: list[CutFile] = []
    budget = MAX_TOTAL_CHARS
    for file in files:
        shown = min(len(file.text), max(budget, 0))
        budget -= shown
        if shown < file.chars:
            cut.append(CutFile(file.name, shown, file.chars))
    return tuple(cut)


def loaded_line(
    files: list[InstructionFile] | tuple[str, ...], cut: tuple[CutFile, ...] = ()
) -> str:
    """The one line a user sees about the files read: ``Instructions: AGENTS.md, CLAUDE.md``,
    each file the chat got only part of saying so: ``Instructions: AGENTS.md (cut: the first
    12,000 of 15,321 characters)``, ``… CLAUDE.md (left out: over the size limit)`` (``""``
    when none)."""
    names = [f if isinstance(f, str) else f.name for f in files]
    parts = []
    for name in names:
        part = next((c for c in cut if c.name == name), None)
        if part is None:
            parts.append(name)
        elif part.shown == 0:
            parts.append(f"{name} (left out: over the size limit)")
        else:
            parts.append(f"{name} (cut: the first {part.shown:,} of {part.chars:,} characters)")
    return f"Instructions: {', '.join(parts)}" if parts else ""
