"""The workspace key ("The workspace key" in docs/workspaces.md) and where Yak keeps its
files.

``normalize_workspace_path`` is the only way a path becomes a key; every read, write, lookup and
queue entry goes through it. ``workspace_id_for`` derives the id from the key; nothing else ever
names a workspace.
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

APP_NAME = "yak"
APP_AUTHOR = "Yak"
LOG_FOLDER = "log"  # inside a chosen data directory (``log_dir``)
# The reverse-DNS application id: the desktop entry's file name, the icons' name, the window's
# application id (Wayland app id, X11 _GTK_APPLICATION_ID) and the AppStream component id.
APP_ID = "io.github.yak.Yak"


def normalize_path_text(path: str, *, windows: bool | None = None, nfc: bool = True) -> str:
    """Normalize an already absolute, resolved path as text, without touching the filesystem.

    Applies Unicode NFC, collapses doubled separators and ``.``/``..``, removes trailing
    separators (the root stays the root) and, for Windows, folds case and separators
    (``ntpath.normcase``), so ``c:/Users/Me/Proj/`` and ``C:\\Users\\me\\proj`` are one key.

    Args:
        path: an absolute path (POSIX or Windows spelling).
        windows: use Windows rules; defaults to the running platform.
        nfc: apply Unicode NFC (see :func:`normalize_workspace_path` for when it is not).

    Returns:
        The key text.
    """
    if windows is None:
        windows = sys.platform == "win32"
    text = unicodedata.normalize("NFC", path) if nfc else path
    if windows:
        text = ntpath.normcase(ntpath.normpath(text))
        drive, rest = ntpath.splitdrive(text)
        rest = rest.rstrip("\\") or "\\"
        return drive + rest
    text = posixpath.normpath(text)
    if text.startswith("//"):  # POSIX lets normpath keep a leading '//'; it is the root here
        text = "/" + text.lstrip("/")
    return text.rstrip("/") or "/"


def _require_utf8(path: str) -> None:
    """Refuse a path holding bytes that are not UTF-8 (Python decodes them as surrogates).

    Raises:
        ValueError: with the position of the first such byte.
    """
    try:
        path.encode("utf-8")
    except UnicodeEncodeError as exc:
        byte = ord(path[exc.start]) - 0xDC00
        raise ValueError(
            f"The folder's path is not UTF-8 text (byte 0x{byte:02x} at character "
            f"{exc.start + 1}); Yak can only open folders whose paths are UTF-8."
        ) from None


def normalize_workspace_path(path: str | os.PathLike[str]) -> str:
    """Return the workspace key for ``path``: ``~`` expanded, absolute, symlinks resolved
    (realpath), NFC, no trailing separator; case and separators folded on Windows.

    Two spellings of one folder give one key; distinct folders never share one
    (``/p/a_b`` and ``/p/a-b`` differ; on a case-sensitive filesystem so do ``/p/Proj`` and
    ``/p/proj``; where a filesystem keeps an NFC and an NFD spelling as two folders, or only the
    NFD one exists, the one that is not NFC keeps its exact spelling). Aliases that only the
    filesystem knows (a case-insensitive volume) are caught by comparing
    :func:`folder_identity` where workspaces are stored.

    Args:
        path: a path as a user typed it; need not exist.

    Raises:
        ValueError: ``path`` is empty, contains a NUL character, or names a folder whose path is
            not UTF-8 (bytes the file system decoded as surrogates): the key is stored as text.
    """
    raw = os.fspath(path)
    if not raw or not raw.strip():
        raise ValueError("The workspace path is empty.")
    if "\0" in raw:
        raise ValueError("The workspace path contains a NUL character.")
    expanded = os.path.expanduser(raw)
    # realpath alone, not realpath(abspath(...)): abspath collapses "link/.." as text before
    # the link is followed, which names the wrong folder when the link points elsewhere.
    resolved = os.path.realpath(expanded)
    _require_utf8(resolved)
    key = normalize_path_text(resolved)
    exact = normalize_path_text(resolved, nfc=False)
    if key != exact:
        # On a filesystem that stores names as bytes (Linux), "café" in NFC and in NFD can be two
        # different folders. NFC folds the spellings of ONE folder; it must never merge two.
        # Nor may it name a folder that is not this one: a folder that exists only under its
        # NFD name (copied from a Mac) keeps that name, or it could never be opened.
        nfc_folder, this_folder = folder_identity(key), folder_identity(exact)
        if this_folder is not None and nfc_folder != this_folder:
            return exact
    return key


def workspace_id_for(key: str) -> str:
    """Derive the workspace id from a normalized key: ``"ws_" + sha256(key utf-8)[:32]``."""
    import hashlib  # not at import: the window is painted before any id is needed

    return "ws_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def enclosing_keys(key: str) -> list[str]:
    """The folders above a workspace key, nearest first, up to the root (``/p/a/b`` →
    ``["/p/a", "/p", "/"]``). Pure: nothing is read from the disk, so the keys stay normalized
    as ``key`` is."""
    found: list[str] = []
    current = key
    while True:
        parent = os.path.dirname(current)
        if not parent or parent == current:
            return found
        found.append(parent)
        current = parent


def folder_identity(path: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of an existing directory, or ``None`` when it is not one."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    import stat

    if not stat.S_ISDIR(st.st_mode):
        return None
    return (st.st_dev, st.st_ino)


# Conversations, memory documents and logs are private: Yak's own folders are created for the
# user alone and its files readable by the user alone, whatever the umask (the umask is left
# alone: files the agent writes in a workspace keep the user's usual permissions).
PRIVATE_FOLDER_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def missing_folders(paths: Iterable[str]) -> set[str]:
    """The ones of ``paths`` that are not existing folders (``not os.path.isdir``), found with
    a call per distinct parent folder rather than a ``stat`` per path: a parent that is not a
    folder makes all its children missing, and an existing parent is listed once. A name the
    listing does not show (another spelling on a case-insensitive disk) is still asked by
    ``isdir``, so the answer is ``isdir``'s.

    Args:
        paths: absolute folder paths (workspace keys).
    """
    by_parent: dict[str, list[str]] = {}
    posix = os.sep == "/"
    for path in paths:
        # rfind, not dirname, on POSIX: ten times cheaper, and a key has no trailing separator.
        parent = (path[: path.rfind("/")] or "/") if posix else os.path.dirname(path)
        by_parent.setdefault(parent, []).append(path)
    missing: set[str] = set()
    for parent, children in by_parent.items():
        try:
            with os.scandir(parent) as entries:
                folders = {entry.name for entry in entries if entry.is_dir()}
        except OSError:  # no such parent, not a folder, not readable: ask each one
            if not os.path.isdir(parent):
                missing.update(children)
                continue
            folders = set()
        for path in children:
            if os.path.basename(path) not in folders and not os.path.isdir(path):
                missing.add(path)
    return missing


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where the database lives: ``override``, else ``$YAK_DATA_DIR``, else the platform's user
    data directory (e.g. ``~/.local/share/yak`` on Linux). The folder is created readable by
    the user only (``PRIVATE_FOLDER_MODE``); an existing folder keeps its permissions.

    Raises:
        OSError: the folder cannot be created (``FileExistsError``: a file has its name).
    """
    chosen = override or os.environ.get("YAK_DATA_DIR")
    if not chosen:
        import platformdirs  # not at import: the window is painted before it is needed

        chosen = platformdirs.user_data_dir(APP_NAME, APP_AUTHOR)
    folder = Path(os.path.expanduser(os.fspath(chosen))).resolve()
    make_private_folder(folder)
    return folder


def log_dir(data_dir_override: str | os.PathLike[str] | None = None) -> Path:
    """The folder of Yak's log file (created readable by the user only): ``log`` inside the
    data directory when one was chosen (``data_dir_override``, else ``$YAK_DATA_DIR``), so a
    run on a data folder of its own leaves its log beside its database; else the platform's
    user log directory (e.g. ``~/.local/state/yak/log`` on Linux). See docs/cli.md.

    Raises:
        OSError: the folder cannot be created.
    """
    chosen = data_dir_override or os.environ.get("YAK_DATA_DIR")
    if chosen:
        folder = Path(os.path.expanduser(os.fspath(chosen))).resolve() / LOG_FOLDER
    else:
        import platformdirs

        folder = Path(platformdirs.user_log_dir(APP_NAME, APP_AUTHOR))
    make_private_folder(folder)
    return folder


def make_private_folder(folder: Path) -> None:
    """Create ``folder`` (and missing parents) when it does not exist; the folder itself gets
    ``PRIVATE_FOLDER_MODE`` exactly, the parents the usual permissions.

    Raises:
        OSError: it cannot be created.
    """
    if folder.is_dir():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=PRIVATE_FOLDER_MODE)
    except FileExistsError:
        if not folder.is_dir():
            raise
        return
    os.chmod(folder, PRIVATE_FOLDER_MODE)  # mkdir's mode is masked by the umask


def private_opener(path: str, flags: int) -> int:
    """An ``opener`` for :func:`open` that creates a missing file with ``PRIVATE_FILE_MODE``
    (an existing file keeps its permissions)."""
    return os.open(path, flags, PRIVATE_FILE_MODE)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with ``PRIVATE_FILE_MODE`` when it does not exist (so a database or
    log opened afterwards is private from its first byte); an existing file is left as it is.

    Raises:
        OSError: it cannot be created.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE))
    except FileExistsError:
        return
