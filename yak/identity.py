"""A workspace's shared identity on a team database: its git repository's remote plus the path
inside the repository, so teammates whose clones sit at different local paths share one
document (see ``docs/workspaces.md``, "The workspace key").

``shared_key(folder)`` is ``git:<host>/<path of the remote>`` with ``//<folder inside the
repository>`` after it for a subfolder, e.g. ``git:github.com/acme/app//backend``; ``None`` when
the folder is in no repository, or its repository has no remote a teammate could also have (no
remote, a local path or ``file://``). The remote is read from the repository's ``config`` file
(a few hundred bytes; no ``git`` process): ``origin`` when there is one, else the first remote
by name. A worktree reads its main repository's config. Credentials, ports, the scheme, a
trailing ``.git`` or ``/`` never reach the key, and the host's case is folded:
``git@github.com:acme/app.git``, ``ssh://git@github.com/acme/app`` and
``https://token@GitHub.com/acme/app.git`` are one repository.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

PREFIX = "git:"
CONFIG_LIMIT = 1 << 20  # bytes of a repository's config read at most

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>(?:[^"\\]|\\.)*)"\s*\]')
_ANY_SECTION = re.compile(r"^\s*\[")
_URL = re.compile(r"^\s*url\s*=\s*(?P<value>.*?)\s*$", re.IGNORECASE)


def normalize_remote(url: str) -> str | None:
    """The remote as ``host/path``: scheme, credentials and port dropped, the host's case
    folded, a trailing ``.git`` and slashes removed (the path's case is kept: some servers tell
    it apart). ``None`` for a remote no other machine shares (a local path, ``file://``) or one
    that cannot be read."""
    url = url.strip().strip('"')
    if not url:
        return None
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme.lower() == "file" or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    else:
        match = _SCP_LIKE.match(url)
        if match is None or url.startswith(("/", ".", "~")):
            return None  # a local path
        host, path = match["host"], match["path"]
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    if not path:
        return None
    return f"{host.lower().strip('[]')}/{unicodedata.normalize('NFC', path)}"


def repository_root(folder: str) -> tuple[Path, Path] | None:
    """The repository holding ``folder`` (a normalized absolute path): its top folder and its
    git directory (for a worktree, the main repository's, where the config is); ``None``
    outside any repository."""
    current = Path(folder)
    for candidate in (current, *current.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate, dot_git
        if dot_git.is_file():  # a worktree or a submodule: "gitdir: <path>"
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            gitdir = Path(line[len("gitdir:") :].strip())
            if not gitdir.is_absolute():
                gitdir = candidate / gitdir
            common = gitdir / "commondir"
            if common.is_file():
                try:
                    shared = Path(common.read_text(encoding="utf-8").strip())
                except OSError:
                    return None
                gitdir = shared if shared.is_absolute() else gitdir / shared
            return candidate, Path(os.path.normpath(gitdir))
    return None


def remotes(config_text: str) -> dict[str, str]:
    """The ``url`` of each ``[remote "NAME"]`` section of a git config file's text (the first
    ``url`` of a section; ``pushurl`` and included files are not read)."""
    found: dict[str, str] = {}
    section: str | None = None
    for line in config_text.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            section = header["name"]
            continue
        if _ANY_SECTION.match(line):
            section = None
            continue
        url = _URL.match(line)
        if section is not None and url is not None and section not in found:
            value = url["value"]
            if value.startswith('"') and value.endswith('"') and len(value) >= 2:
                value = value[1:-1]
            found[section] = value
    return found


def preferred_remote(urls: dict[str, str]) -> str | None:
    """``origin``'s URL when there is one, else the first remote's by name; ``None`` for no
    remote."""
    if "origin" in urls:
        return urls["origin"]
    return urls[min(urls)] if urls else None


def shared_key(folder: str) -> str | None:
    """The shared identity of the folder ``folder`` (a normalized absolute path), or ``None``
    when it has none (then the workspace is keyed by its path). Never raises for a folder it
    cannot read: that is ``None`` too."""
    found = repository_root(folder)
    if found is None:
        return None
    top, gitdir = found
    try:
        with open(gitdir / "config", "rb") as handle:
            config = handle.read(CONFIG_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None
    url = preferred_remote(remotes(config))
    remote = None if url is None else normalize_remote(url)
    if remote is None:
        return None
    inside = Path(folder).relative_to(top).as_posix()
    inside = "" if inside == "." else unicodedata.normalize("NFC", inside)
    return f"{PREFIX}{remote}" + (f"//{inside}" if inside else "")
