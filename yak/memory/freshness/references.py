"""A memory line's concrete references, checked against the workspace folder ("Checked at use"
in docs/memory.md).

A reference is something a line names that the workspace either has or has not, found without a
model: a relative path (``scripts/bootstrap.sh``, ``docs/``), a file name (``README.md``,
``Makefile``), or the target of a well-known runner (``make lint``, ``npm run build``, ``pnpm
dev``, ``yarn lint``, ``just fmt``, ``tox -e lint``, ``nox -s tests``). :func:`find_references`
reads them from a line (pure); :func:`check_references` checks every line of a document
against a folder: named paths with one ``os.stat`` each, runner targets in their one file, and
bare file names elsewhere than the root with one breadth-first walk that stops as soon as every
wanted name is found (skipping ``.git``, ``node_modules``, virtual environments, caches and the
root ``.gitignore``'s plain patterns). The check is bounded: past its deadline it stops and says
so (``gave_up``), and a disk that does not answer at all is left behind on its own thread.
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from enum import Enum
from pathlib import Path

from yak.references import GoneReference, ReferenceCheck

__all__ = [
    "GoneReference",
    "Reference",
    "ReferenceCheck",
    "ReferenceKind",
    "check_references",
    "find_references",
    "gone_notes",
]

log = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 0.5  # how long a check may take before it gives up (seconds)


class ReferenceKind(Enum):
    """What a reference names, so it is checked in the right place."""

    PATH = "path"  # a relative path with a slash: stat it under the root
    NAME = "name"  # a bare file name: at the root, else anywhere in the tree
    MAKE = "make"
    NPM = "npm"  # npm run / pnpm / yarn: a script of package.json
    JUST = "just"
    TOX = "tox"
    NOX = "nox"


@dataclass(frozen=True)
class Reference:
    """One thing a line names.

    Attributes:
        kind: where it is checked.
        target: the path, the file name or the runner's target (``lint``).
        text: how a note names it (``scripts/bootstrap.sh``, ``make lint``).
    """

    kind: ReferenceKind
    target: str
    text: str


# --- finding references ------------------------------------------------------------------------

# File endings that make a bare word a file name (``app.py``), not a version or a domain (not
# Objective-C's ``.m``: "9 a.m." names no file).
# fmt: off
_EXTENSIONS = frozenset((
    "py", "pyi", "pyx", "ipynb", "md", "rst", "txt", "toml", "ini", "cfg", "conf", "json", "jsonc",
    "yaml", "yml", "lock", "sh", "bash", "zsh", "fish", "ps1", "bat", "cmd", "js", "mjs", "cjs",
    "ts", "tsx", "jsx", "vue", "svelte", "rs", "go", "mod", "sum", "c", "h", "cc", "cpp", "hpp",
    "cxx", "swift", "kt", "kts", "java", "gradle", "scala", "rb", "php", "pl", "lua",
    "sql", "html", "htm", "css", "scss", "sass", "less", "xml", "csv", "tsv", "proto",
    "graphql", "tf", "hcl", "nix", "dockerfile", "env", "example", "sample", "tpl", "j2", "jinja",
    "mk", "cmake",
))
# fmt: on
# Files known by name alone.
# fmt: off
_KNOWN_NAMES = frozenset((
    "Makefile", "GNUmakefile", "makefile", "Dockerfile", "Containerfile", "justfile", "Justfile",
    "Procfile", "Gemfile", "Rakefile", "Vagrantfile", "Jenkinsfile", "Brewfile", "CODEOWNERS",
    "LICENSE",
))
# fmt: on
# Libraries spelled like file names (``Node.js``): names of things, not files.
# fmt: off
_NOT_FILES = frozenset((
    "node.js", "vue.js", "next.js", "nuxt.js", "react.js", "three.js", "d3.js", "chart.js",
    "express.js", "ember.js", "angular.js", "backbone.js", "alpine.js", "p5.js", "deno.js",
    "bun.js", "socket.io",
))
# fmt: on
# Words that follow an everyday "make": "make sure", "make it work".
# fmt: off
_MAKE_PROSE = frozenset((
    "sure", "it", "its", "the", "a", "an", "this", "that", "these", "those", "them", "they",
    "sense", "use", "changes", "change", "any", "all", "no", "one", "some", "every", "each", "up",
    "room", "time", "way", "things", "something", "everything", "clear", "certain", "progress",
    "decisions", "edits", "commits", "calls", "new", "small", "good", "better", "more", "less",
    "his", "her", "your", "our", "their", "me", "us", "you", "him", "do", "so",
))
# fmt: on
# Subcommands of pnpm and yarn that are not scripts.
# fmt: off
_PACKAGE_COMMANDS = frozenset((
    "install", "i", "add", "remove", "rm", "uninstall", "update", "upgrade", "up", "outdated",
    "audit", "link", "unlink", "exec", "dlx", "create", "init", "why", "list", "ls", "publish",
    "pack", "config", "store", "import", "info", "dedupe", "prune", "rebuild", "patch", "setup",
    "env", "bin", "root", "node", "global", "cache", "login", "logout", "version", "workspace",
    "workspaces", "run", "run-script", "test",
))
# fmt: on

_TICKED = re.compile(r"`([^`\n]+)`")
_CHUNK = re.compile(r"[^\s`'\"()\[\]{}<>,;]+")
_TRIM = ".:;,!?)]}'\""
_PATH_PART = re.compile(r"[\w.\-@+]+")
_TARGET = r"([A-Za-z0-9_][\w.:\-]*)"
_RUNNERS: tuple[tuple[ReferenceKind, re.Pattern[str], bool], ...] = (
    # (kind, pattern on the line, only inside a code span)
    (ReferenceKind.MAKE, re.compile(r"(?<![\w-])make\s+(?:-\S+\s+)*" + _TARGET), False),
    (ReferenceKind.NPM, re.compile(r"(?<![\w-])npm\s+run(?:-script)?\s+" + _TARGET), False),
    (ReferenceKind.NPM, re.compile(r"(?<![\w-])(?:pnpm|yarn)\s+(?:run\s+)?" + _TARGET), False),
    (ReferenceKind.JUST, re.compile(r"(?<![\w-])just\s+" + _TARGET), True),
    (ReferenceKind.TOX, re.compile(r"(?<![\w-])tox\s+(?:\S+\s+)*?-e\s*([\w.,\-]+)"), False),
    (
        ReferenceKind.NOX,
        re.compile(r"(?<![\w-])nox\s+(?:\S+\s+)*?(?:-s|--session)\s+([\w.,\-]+)"),
        False,
    ),
)


def find_references(line: str) -> list[Reference]:
    """The references ``line`` names, in order, each once (pure).

    A path counts when it is relative (no leading ``/`` or ``~``, no ``..``, not a URL) and
    its last part has a known file ending, or it ends in ``/``, starts with ``./``, or stands
    alone in a code span; a bare word counts when it has a known file ending (``app.py``) or is
    a file known by name (``Makefile``). Runner targets: ``make X`` (not "make sure"), ``npm run
    X``, ``pnpm [run] X``, ``yarn [run] X`` (not their own subcommands), ``just X`` (in a code
    span only: "just" is an everyday word), ``tox -e X[,Y]``, ``nox -s X[,Y]``.
    """
    found: list[Reference] = []
    spans = [match.group(1) for match in _TICKED.finditer(line)]
    for kind, pattern, ticked_only in _RUNNERS:
        for text in spans if ticked_only else [line]:
            for match in pattern.finditer(text):
                found.extend(_runner_references(kind, match))
    for span in spans:
        if not any(ch.isspace() for ch in span.strip()):
            found.extend(_path_reference(span.strip(), ticked=True))
    unticked = _TICKED.sub(" ", line)
    for match in _CHUNK.finditer(unticked):
        found.extend(_path_reference(match.group(), ticked=False))
    for span in spans:  # a command in a code span names its paths too (`sh scripts/x.sh`)
        if any(ch.isspace() for ch in span.strip()):
            for match in _CHUNK.finditer(span):
                found.extend(_path_reference(match.group(), ticked=False))
    unique: dict[tuple[ReferenceKind, str], Reference] = {}
    for reference in found:
        unique.setdefault((reference.kind, reference.target), reference)
    return list(unique.values())


def _runner_references(kind: ReferenceKind, match: re.Match[str]) -> list[Reference]:
    command = match.group(0).split()[0]
    raw = match.group(1).rstrip(_TRIM)
    if kind is ReferenceKind.MAKE:
        if raw.casefold() in _MAKE_PROSE or "=" in raw or not raw:
            return []
        return [Reference(kind, raw, f"make {raw}")]
    if kind is ReferenceKind.NPM:
        if command != "npm" and raw in _PACKAGE_COMMANDS:
            return []
        shown = f"npm run {raw}" if command == "npm" else f"{command} {raw}"
        return [Reference(kind, raw, shown)]
    if kind is ReferenceKind.JUST:
        return [Reference(kind, raw, f"just {raw}")] if raw else []
    flag = "-e" if kind is ReferenceKind.TOX else "-s"
    return [
        Reference(kind, name, f"{command} {flag} {name}") for name in raw.split(",") if name.strip()
    ]


def _path_reference(chunk: str, *, ticked: bool) -> list[Reference]:
    token = chunk if ticked else chunk.lstrip("'\"([{").rstrip(_TRIM)
    if not token or "://" in token or token.startswith(("/", "~", "-", "$", "@")):
        return []
    if any(ch in token for ch in "*?{}=|\\%") or token.casefold() in _NOT_FILES:
        return []
    parts = token.split("/")
    if ".." in parts or any(part and not _PATH_PART.fullmatch(part) for part in parts):
        return []
    if "/" in token:
        body = token.removeprefix("./")
        last = [part for part in body.split("/") if part]
        if not last:
            return []
        if token.startswith("./") or token.endswith("/") or ticked or _is_file_name(last[-1]):
            return [Reference(ReferenceKind.PATH, "/".join(last), token)]
        return []
    if _is_file_name(token):
        return [Reference(ReferenceKind.NAME, token, token)]
    return []


def _is_file_name(word: str) -> bool:
    if word in _KNOWN_NAMES:
        return True
    stem, dot, ending = word.rpartition(".")
    if not dot or not ending or ending.casefold() not in _EXTENSIONS:
        return False
    return bool(stem.strip(".")) or word.startswith(".")  # .env, .gitignore.example


# --- checking ---------------------------------------------------------------------------------

# Folders never read for names: version control, dependencies, environments, caches.
# fmt: off
SKIPPED_FOLDERS = frozenset((
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache",
))
# fmt: on
_WALK_ENTRIES = 500_000  # the most folder entries one walk reads, whatever the deadline


class _Expired(Exception):
    """The check's deadline passed."""


class _Workspace:
    """One folder, read as lazily as the references need it, within a deadline."""

    def __init__(self, root: Path, deadline: float) -> None:
        self.root = root
        self.deadline = deadline
        self._texts: dict[str, str | None] = {}

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise _Expired

    def exists(self, relative: str) -> bool:
        self.tick()
        try:
            os.stat(self.root / relative)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:  # unreadable: not known to be gone
            log.info("could not check %s: %s", relative, exc)
            return True
        return True

    def text(self, name: str) -> str | None:
        """The text of the root file ``name`` (``None``: there is none, or it cannot be read)."""
        if name not in self._texts:
            self.tick()
            try:
                self._texts[name] = (self.root / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                self._texts[name] = None
        return self._texts[name]

    def first_text(self, names: Sequence[str]) -> str | None:
        return next((t for t in map(self.text, names) if t is not None), None)

    def find_names(self, wanted: set[str]) -> set[str]:
        """Which of ``wanted`` (file or folder names) stand anywhere under the root: a
        breadth-first walk that stops once all are found."""
        found: set[str] = set()
        ignored = ignored_patterns(self.text(".gitignore") or "")
        queue: deque[Path] = deque([self.root])
        read = 0
        while queue and found != wanted:
            folder = queue.popleft()
            self.tick()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        read += 1
                        name = entry.name
                        if name in wanted:
                            found.add(name)
                        if name in SKIPPED_FOLDERS or is_ignored(name, ignored):
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            queue.append(Path(entry.path))
            except OSError:
                continue
            if read > _WALK_ENTRIES:
                raise _Expired
        return found


def ignored_patterns(gitignore: str) -> list[str]:
    """The root ``.gitignore``'s plain patterns (a name or a glob of one; no negation, no
    inner slash), matched against every entry's name: cheap, and enough to skip build output."""
    patterns = []
    for raw in gitignore.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        line = line.strip("/")
        if line and "/" not in line and "**" not in line:
            patterns.append(line)
    return patterns


def is_ignored(name: str, patterns: Sequence[str]) -> bool:
    """Whether an entry named ``name`` matches one of ``patterns`` (:func:`ignored_patterns`)."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _missing(references: Iterable[Reference], folder: _Workspace) -> list[Reference]:
    """The references not found where they are looked for first (a bare name: at the root)."""
    return [ref for ref in references if not _holds(ref, folder)]


def _holds(ref: Reference, folder: _Workspace) -> bool:
    if ref.kind is ReferenceKind.PATH or ref.kind is ReferenceKind.NAME:
        return folder.exists(ref.target)
    if ref.kind is ReferenceKind.MAKE:
        return _make_has(folder.first_text(("GNUmakefile", "makefile", "Makefile")), ref.target)
    if ref.kind is ReferenceKind.NPM:
        return _package_has(folder.text("package.json"), ref.target)
    if ref.kind is ReferenceKind.JUST:
        return _just_has(folder.first_text(("justfile", "Justfile", ".justfile")), ref.target)
    if ref.kind is ReferenceKind.TOX:
        names = ("tox.ini", "tox.toml", "pyproject.toml", "setup.cfg")
        return _tox_has([t for t in map(folder.text, names) if t], ref.target)
    return _nox_has(folder.text("noxfile.py"), ref.target)


def _make_has(makefile: str | None, target: str) -> bool:
    if makefile is None:
        return False
    if re.search(r"^\s*-?include\s|^%\s*:", makefile, re.MULTILINE):
        return True  # targets defined elsewhere, or a rule for any target: cannot tell
    for match in re.finditer(r"^([^\s#:=][^:=#\n]*?)\s*::?(?!=)", makefile, re.MULTILINE):
        if target in match.group(1).split():
            return True
    return False


def _package_has(package: str | None, script: str) -> bool:
    if package is None:
        return False
    try:
        scripts = json.loads(package).get("scripts") or {}
    except (ValueError, AttributeError):
        return True  # unreadable: not known to be gone
    return isinstance(scripts, dict) and script in scripts


def _just_has(justfile: str | None, recipe: str) -> bool:
    if justfile is None:
        return False
    if re.search(r"^\s*(?:import|mod)\b", justfile, re.MULTILINE):
        return True
    pattern = rf"^@?{re.escape(recipe)}(?:\s+[^:\n]*)?\s*:(?!=)"
    return re.search(pattern, justfile, re.MULTILINE) is not None


def _tox_has(texts: Sequence[str], env: str) -> bool:
    if re.fullmatch(r"py\d*(?:-.*)?|pypy\d*", env):
        return bool(texts)  # a default environment, given any tox configuration
    escaped = re.escape(env)
    patterns = (
        rf"\[testenv:{escaped}\]",
        rf"\[tool\.tox\.env\.{escaped}\]",
        rf"^\s*\[env\.{escaped}\]",
        rf"^\s*env_?list\s*=.*(?<![\w-]){escaped}(?![\w-])",
    )
    return any(re.search(p, text, re.MULTILINE) for p in patterns for text in texts)


def _nox_has(noxfile: str | None, session: str) -> bool:
    if noxfile is None:
        return False
    name = re.split(r"[(\-]", session, maxsplit=1)[0]
    escaped = re.escape(name)
    pattern = rf"^\s*def\s+{escaped}\s*\(|name\s*=\s*[\"']{re.escape(session)}[\"']"
    return re.search(pattern, noxfile, re.MULTILINE) is not None


def check_references(
    document: str,
    root: Path,
    *,
    today: date,
    deadline_seconds: float = DEFAULT_DEADLINE_S,
) -> ReferenceCheck:
    """Check every line's references (:func:`find_references`) against the folder ``root``.

    Blocking file reads (run it off the event loop's thread); it returns within about
    ``deadline_seconds`` whatever the disk does: the check runs on its own daemon thread, and
    a folder that does not answer in time is left to it.

    Args:
        document: the memory document (LF line endings).
        root: the workspace folder.
        today: the day of the check (kept by the caller for the notes; see :func:`gone_notes`).
        deadline_seconds: how long the check may take (seconds).

    Returns:
        The :class:`ReferenceCheck`; ``gave_up`` when the deadline passed first, with the lines
        found gone by then.
    """
    del today  # the check is the same any day; the notes carry the date
    deadline = time.monotonic() + deadline_seconds
    done = threading.Event()
    result: list[ReferenceCheck] = []
    partial: list[GoneReference] = []

    def run() -> None:
        try:
            result.append(_check(document, _Workspace(root, deadline), partial))
        except _Expired:
            result.append(ReferenceCheck(tuple(partial), gave_up=True))
        except Exception:  # a bug must not stop a conversation: logged, nothing marked
            log.exception("checking the memory's references failed")
            result.append(ReferenceCheck(gave_up=True))
        finally:
            done.set()

    threading.Thread(target=run, name="memory-references", daemon=True).start()
    if not done.wait(deadline_seconds + 0.05) or not result:
        log.info("the workspace %s did not answer within %.2f s", root, deadline_seconds)
        return ReferenceCheck(tuple(partial), gave_up=True)
    return result[0]


def _check(document: str, folder: _Workspace, gone: list[GoneReference]) -> ReferenceCheck:
    if not folder.exists(""):
        raise _Expired  # the folder is not there at all: nothing can be told
    lines = document.split("\n")
    pending: dict[int, list[Reference]] = {}  # line -> its bare names not at the root
    for index, line in enumerate(lines):
        references = find_references(line) if line.strip() else []
        if not references:
            continue
        missing = _missing(references, folder)
        names = [ref for ref in missing if ref.kind is ReferenceKind.NAME]
        if names:
            pending[index] = missing
        elif missing:
            gone.append(GoneReference(index, line, tuple(ref.text for ref in missing)))
    if pending:
        wanted = {
            r.target for refs in pending.values() for r in refs if r.kind is ReferenceKind.NAME
        }
        found = folder.find_names(wanted)
        for index, missing in pending.items():
            still = [r for r in missing if not (r.kind is ReferenceKind.NAME and r.target in found)]
            if still:
                gone.append(GoneReference(index, lines[index], tuple(r.text for r in still)))
        gone.sort(key=lambda g: g.index)
    return ReferenceCheck(tuple(gone))


def gone_notes(check: ReferenceCheck, *, today: date) -> dict[int, tuple[str, ...]]:
    """The note each gone line carries in the injected memory block (``memory_block``'s
    ``line_notes``): ``{index: ("not found in the workspace on 2026-12-07: scripts/x.sh",)}``."""
    return {
        gone.index: (
            f"not found in the workspace on {today.isoformat()}: {', '.join(gone.missing)}",
        )
        for gone in check.gone
    }
