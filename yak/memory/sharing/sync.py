"""The memory document copied into another agent's instruction file (``AGENTS.md``,
``CLAUDE.md``, …) inside a managed block ("Sharing the memory" in docs/memory.md).

The block runs from a ``<!-- yak:memory -->`` line to a ``<!-- /yak:memory -->`` line (HTML
comments, invisible where the file is rendered as Markdown). Syncing replaces what lies between
the markers, adds the block at the end of a file without one, or creates the file; every byte
outside the block is kept as it was, and syncing the same document again writes nothing. The
block's line endings follow the file's (CRLF when the file already uses CRLF).

A block whose text is not one Yak wrote (an edit by hand, or git conflict markers left by a
merge) is never replaced silently: the sync is refused and the file left byte for byte, unless
the person forces it ("Sharing the memory" in docs/memory.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from yak.errors import RefusedError, UsageError

DEFAULT_SYNCED_FILE = "AGENTS.md"  # the file Settings keeps in sync, in the workspace folder
MARK_OPEN = "<!-- yak:memory -->"
MARK_CLOSE = "<!-- /yak:memory -->"
# A line git leaves where a merge conflicted: seven <, = or > alone or before a space.
_CONFLICT_LINE = re.compile(r"^(?:<{7}|={7}|>{7})(?: |$)", re.MULTILINE)


@dataclass(frozen=True)
class SyncResult:
    """What :func:`sync_file` did: ``path`` the file written (symlinks followed); ``created``
    the file did not exist; ``changed`` its bytes changed (``False``: already in sync)."""

    path: Path
    created: bool
    changed: bool


def synced_text(existing: str | None, document: str) -> str:
    """The file's text with ``document`` in its managed block.

    Args:
        existing: the file's text (``None`` when there is no file yet).
        document: the memory document (LF line endings; "" gives an empty block). A marker
            spelled inside it becomes ``[yak:memory]`` / ``[/yak:memory]`` so it cannot end the
            block early.

    Returns:
        ``existing`` with the text between the markers replaced, or with the block appended
        after a blank line when it has none; just the block when ``existing`` is ``None`` or
        empty.

    Raises:
        UsageError: the file has a marker without its partner, a closing marker first, or more
            than one block (nothing is guessed).
    """
    body = _block_body(document)
    text = existing or ""
    newline = "\r\n" if "\r\n" in text else "\n"
    block = f"{MARK_OPEN}\n{body}{MARK_CLOSE}".replace("\n", newline)
    opens, closes = text.count(MARK_OPEN), text.count(MARK_CLOSE)
    if opens == closes == 0:
        if not text:
            return block + newline
        gap = newline if text.endswith("\n") else newline * 2
        return f"{text}{gap}{block}{newline}"
    start, end = text.find(MARK_OPEN), text.find(MARK_CLOSE)
    if opens != 1 or closes != 1 or end < start:
        raise UsageError(
            f"the file's {MARK_OPEN} … {MARK_CLOSE} markers are not one block (one of each, "
            "opening first); fix them by hand and sync again"
        )
    return text[:start] + block + text[end + len(MARK_CLOSE) :]


def _block_body(document: str) -> str:
    """What lies between the markers for ``document`` (LF line endings)."""
    body = document.replace(MARK_OPEN, "[yak:memory]").replace(MARK_CLOSE, "[/yak:memory]")
    if body and not body.endswith("\n"):
        body += "\n"
    return body


def block_text(existing: str) -> str | None:
    """What lies between the markers of ``existing`` (LF line endings), or ``None`` when it
    has no block or markers that are not one block."""
    start, end = existing.find(MARK_OPEN), existing.find(MARK_CLOSE)
    if start < 0 or end < start or existing.count(MARK_OPEN) + existing.count(MARK_CLOSE) != 2:
        return None
    inner = existing[start + len(MARK_OPEN) : end].replace("\r\n", "\n")
    return inner[1:] if inner.startswith("\n") else inner


def check_block_untouched(
    existing: str | None,
    written: Callable[[], Iterable[str]],
    *,
    shown: str | os.PathLike[str],
) -> None:
    """Refuse to replace a block that holds anything Yak did not write there.

    Args:
        existing: the file's text (``None``: no file yet).
        written: gives the documents Yak may have written into the block (the workspace's
            revisions' texts); called only when the block is not empty.
        shown: the file's name as the person gave it, for the sentence.

    Raises:
        RefusedError: (``status`` ``"refused_hand_edit"``) the block holds git conflict
            markers, or text that is none of ``written`` (an edit by hand); exit 3.
    """
    body = block_text(existing) if existing else None
    if not body:
        return
    if any(body == _block_body(document) for document in written()):
        return
    if _CONFLICT_LINE.search(body):
        what = "git conflict markers"
    else:
        what = "text Yak did not write there (an edit by hand?)"
    raise RefusedError(
        f"{shown}'s memory block holds {what}, so nothing was written; move what you want to "
        "keep into the memory, then sync with --force to replace the block",
        status="refused_hand_edit",
    )


MEMORY_BLOCK_NOTE = "[Yak's memory block is left out here: the memory is sent on its own.]"


def without_memory_block(text: str) -> str:
    """``text`` (LF line endings) with its managed block, markers included, replaced by
    :data:`MEMORY_BLOCK_NOTE`, so a file written by ``yak memory sync`` does not bring the memory
    back into the agent's prompt as instructions (nor while memory is off). A file without one
    well-formed block is returned unchanged.
    """
    start, end = text.find(MARK_OPEN), text.find(MARK_CLOSE)
    if start < 0 or end < start or text.count(MARK_OPEN) != 1 or text.count(MARK_CLOSE) != 1:
        return text
    return text[:start] + MEMORY_BLOCK_NOTE + text[end + len(MARK_CLOSE) :]


def check_inside(path: str | os.PathLike[str], folder: str) -> Path:
    """The file ``path`` names, absolute, when it lies inside the workspace ``folder``.

    ``yak memory sync`` writes a block of the memory into the file, and an agent reads it back:
    written anywhere (``/etc/passwd``, ``~/.bashrc`` through a link an agent made), it would put
    the memory's lines where a shell or a system reads them. Both the path as given and the
    file a link leads to must be inside the folder.

    Raises:
        UsageError: the file (or a link's target) is outside ``folder``; nothing is written.
    """
    given = Path(os.path.abspath(os.fspath(path)))
    roots = {Path(os.path.abspath(folder)), Path(os.path.realpath(folder))}

    def within(candidate: Path) -> bool:
        return any(candidate == root or root in candidate.parents for root in roots)

    for candidate, how in ((given, "is"), (Path(os.path.realpath(given)), "leads")):
        if not within(candidate):
            raise UsageError(
                f"{given} {how} outside the workspace {folder}; 'yak memory sync' writes only "
                "files inside it (such as its AGENTS.md); nothing was written"
            )
    return given


def sync_file(
    path: str | os.PathLike[str],
    document: str,
    *,
    written: Callable[[], Iterable[str]] | None = None,
    force: bool = False,
) -> SyncResult:
    """Write ``document`` into the managed block of the file at ``path`` (see
    :func:`synced_text`), creating the file when missing; nothing is written when it is already
    in sync. A symlink is followed and its target written; the write replaces the file
    atomically and keeps its permission bits.

    Args:
        path: the file.
        document: the memory document.
        written: the documents Yak may have written into the block before (the workspace's
            revisions), called only when the block holds something other than ``document``;
            ``None``: only ``document`` itself counts as Yak's.
        force: replace the block whatever it holds.

    Raises:
        UsageError: a folder, a device or pipe (anything but a regular file), a missing parent
            folder, not UTF-8, unreadable or unwritable, or markers that are not one block.
        RefusedError: the block was edited by hand or holds conflict markers, and ``force`` is
            not set (:func:`check_block_untouched`). Nothing is written then.
    """
    target = Path(os.path.realpath(os.fspath(path)))
    if target.is_dir():
        raise UsageError(f"{path} is a folder; give a file name")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {path}: its folder does not exist")
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        # A device or a pipe would be replaced by a plain file (or block on reading).
        raise UsageError(f"{path} is not a regular file; Yak keeps only text files in sync")
    try:
        data: bytes | None = target.read_bytes()
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        existing = data.decode("utf-8") if data is not None else None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; Yak writes only into UTF-8 files") from None
    new = synced_text(existing, document).encode("utf-8")
    if new == data:
        return SyncResult(target, created=False, changed=False)
    if not force:
        past = written or (lambda: ())
        check_block_untouched(existing, lambda: [document, *past()], shown=path)
    if data is None:
        try:
            with open(target, "xb") as out:  # a new file gets the usual permissions (umask)
                out.write(new)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    else:
        _replace(target, new, path)
    return SyncResult(target, created=data is None, changed=True)


def _replace(target: Path, data: bytes, shown: str | os.PathLike[str]) -> None:
    """Write ``data`` to a temporary file beside the existing ``target`` and move it over
    ``target``, keeping its permission bits."""
    try:
        mode = target.stat().st_mode & 0o7777
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise UsageError(f"cannot write {shown}: {exc.strerror or exc}") from None
