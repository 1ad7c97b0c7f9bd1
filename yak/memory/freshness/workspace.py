"""What the workspace folder itself shows, as evidence for grounding ("Checked at use" in
docs/memory.md: the workspace is evidence).

:func:`gather_facts` reads a folder, bounded (it stops after ``MAX_ENTRIES`` entries or its
deadline, keeping what it has): the relative paths of its files and folders (skipping ``.git``,
``node_modules``, virtual environments, caches and the root ``.gitignore``'s plain patterns),
the languages its files' endings show (a ``.py`` file shows Python), and the names in its
manifests (``pyproject.toml``, ``package.json``, ``Cargo.toml``, ``go.mod``: the project's name,
its dependencies and configured tools). A manifest the redaction would flag is left out whole:
nothing of a file holding a secret becomes evidence. The grounding check
(``yak.memory.judging.grounding``) takes the :class:`WorkspaceFacts` as data and does no I/O.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import tomllib
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yak.memory.freshness.references import SKIPPED_FOLDERS, ignored_patterns, is_ignored
from yak.memory.redaction.scan import redact

log = logging.getLogger(__name__)

MAX_ENTRIES = 20_000  # the most folder entries one gathering reads
DEFAULT_DEADLINE_S = 0.5  # how long a gathering may read (seconds)

# File endings and the language they show (``Python`` for ``.py``).
LANGUAGES = {
    "py": "Python", "pyi": "Python", "ts": "TypeScript", "tsx": "TypeScript",
    "js": "JavaScript", "jsx": "JavaScript", "mjs": "JavaScript", "rs": "Rust", "go": "Go",
    "rb": "Ruby", "java": "Java", "kt": "Kotlin", "swift": "Swift", "c": "C", "cpp": "C++",
    "cc": "C++", "hpp": "C++", "cs": "C#", "php": "PHP", "scala": "Scala", "ex": "Elixir",
    "exs": "Elixir", "erl": "Erlang", "hs": "Haskell", "lua": "Lua", "dart": "Dart",
    "sh": "Shell", "r": "R", "jl": "Julia", "zig": "Zig", "ml": "OCaml", "clj": "Clojure",
    "vue": "Vue", "svelte": "Svelte", "sql": "SQL",
}  # fmt: skip
MANIFESTS = ("pyproject.toml", "package.json", "Cargo.toml", "go.mod")


@dataclass(frozen=True)
class WorkspaceFacts:
    """What a workspace folder shows, by case-folded token.

    Attributes:
        paths: every relative path read (files and folders, ``/``-separated, no trailing
            ``/``), case folded, to the path as it is.
        names: each file or folder name read, case folded, to the first path holding it.
        languages: each language the files show, case folded, to what shows it
            (``"14 .py files"``).
        manifest: each name in a manifest, case folded, to the manifest (``"pyproject.toml"``).
        complete: every entry of the folder was read (else the facts hold what was).
    """

    paths: Mapping[str, str] = field(default_factory=dict)
    names: Mapping[str, str] = field(default_factory=dict)
    languages: Mapping[str, str] = field(default_factory=dict)
    manifest: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True

    def where(self, token: str) -> str | None:
        """Where the workspace shows ``token`` (a path, a file name, a language, a name in a
        manifest): ``"pyproject.toml"``, ``"src/app.py"``, ``"14 .py files"``; ``None`` when
        it does not."""
        key = token.casefold().strip("`'\"")
        key = key.removeprefix("./").rstrip("/")
        if not key:
            return None
        return (
            self.paths.get(key)
            or self.names.get(key)
            or self.languages.get(key)
            or self.manifest.get(key)
            or self.manifest.get(key.replace("_", "-"))
        )


def gather_facts(root: Path, *, deadline_seconds: float = DEFAULT_DEADLINE_S) -> WorkspaceFacts:
    """Read what ``root`` shows (blocking: on a worker thread), within ``deadline_seconds``
    and ``MAX_ENTRIES`` entries; an unreadable folder shows nothing.

    Returns:
        The :class:`WorkspaceFacts`.
    """
    deadline = time.monotonic() + deadline_seconds
    paths: dict[str, str] = {}
    names: dict[str, str] = {}
    endings: Counter[str] = Counter()
    complete = True
    try:
        for relative, name, is_dir in _walk(root, deadline):
            paths.setdefault(relative.casefold(), relative)
            names.setdefault(name.casefold(), relative)
            if not is_dir and "." in name.strip("."):
                endings[name.rpartition(".")[2].casefold()] += 1
    except _Stopped:
        complete = False
    languages: dict[str, str] = {}
    for ending, count in endings.most_common():
        language = LANGUAGES.get(ending)
        if language is not None:
            files = "file" if count == 1 else "files"
            languages.setdefault(language.casefold(), f"{count} .{ending} {files}")
    return WorkspaceFacts(paths, names, languages, _manifest_names(root), complete)


class _Stopped(Exception):
    """The bound was reached."""


def _walk(root: Path, deadline: float) -> Iterator[tuple[str, str, bool]]:
    """(relative path, name, is a folder) of every entry under ``root``, breadth first."""
    try:
        gitignore = (root / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        gitignore = ""
    ignored = ignored_patterns(gitignore)
    queue: deque[tuple[Path, str]] = deque([(root, "")])
    read = 0
    while queue:
        folder, prefix = queue.popleft()
        if time.monotonic() > deadline:
            raise _Stopped
        try:
            with os.scandir(folder) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            read += 1
            if read > MAX_ENTRIES:
                raise _Stopped
            name = entry.name
            if name in SKIPPED_FOLDERS or is_ignored(name, ignored):
                continue
            relative = f"{prefix}{name}"
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            yield relative, name, is_dir
            if is_dir:
                queue.append((Path(entry.path), f"{relative}/"))


_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _manifest_names(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for manifest in MANIFESTS:
        try:
            text = (root / manifest).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if redact(text)[1]:
            log.info("%s holds what the redaction flags: not used as evidence", manifest)
            continue
        try:
            names = list(_names_in(manifest, text))
        except (ValueError, TypeError, AttributeError) as exc:
            log.info("could not read %s: %s", manifest, exc)
            continue
        for name in names:
            key = name.strip().casefold()
            if key:
                found.setdefault(key, manifest)
                found.setdefault(key.replace("_", "-"), manifest)
    return found


def _names_in(manifest: str, text: str) -> Iterator[str]:
    if manifest == "package.json":
        data = json.loads(text)
        yield str(data.get("name") or "")
        for group in ("dependencies", "devDependencies", "peerDependencies"):
            yield from _keys(data.get(group))
    elif manifest == "go.mod":
        for match in re.finditer(r"^\s*(?:module|require)?\s*([\w.\-]+(?:/[\w.\-]+)+)", text, re.M):
            module = match.group(1)
            yield module
            yield module.rsplit("/", 1)[-1]
    elif manifest == "Cargo.toml":
        data = tomllib.loads(text)
        yield str((data.get("package") or {}).get("name") or "")
        for group in ("dependencies", "dev-dependencies", "build-dependencies"):
            yield from _keys(data.get(group))
    else:
        data = tomllib.loads(text)
        project = data.get("project") or {}
        yield str(project.get("name") or "")
        requirements = list(project.get("dependencies") or [])
        for extra in (project.get("optional-dependencies") or {}).values():
            requirements.extend(extra)
        for group in (data.get("dependency-groups") or {}).values():
            requirements.extend(item for item in group if isinstance(item, str))
        requirements.extend((data.get("build-system") or {}).get("requires") or [])
        for requirement in requirements:
            named = _REQUIREMENT.match(str(requirement))
            if named:
                yield named.group(1)
        tools = data.get("tool") or {}
        yield from _keys(tools)  # the tools it configures: ruff, mypy, pytest
        poetry = tools.get("poetry") or {}
        yield str(poetry.get("name") or "")
        yield from _keys(poetry.get("dependencies"))
        for group in (poetry.get("group") or {}).values():
            yield from _keys((group or {}).get("dependencies"))


def _keys(table: Any) -> Iterator[str]:
    if isinstance(table, dict):
        yield from (str(key) for key in table)
