"""Files the person names: one read for an import, one written for an export (one line naming
the file for every failure)."""

from __future__ import annotations

from pathlib import Path

from yak.errors import UsageError
from yak.memory import document as rules


def read_input_file(path: Path) -> bytes:
    """The bytes of a file the user named (at most ``MAX_INPUT_BYTES``).

    Raises:
        UsageError: missing, a folder, or unreadable (one line naming it).
        CeilingExceeded: larger than any memory document can be.
    """
    try:
        with path.open("rb") as handle:
            return rules.read_capped(handle, str(path))
    except OSError as exc:
        missing, folder = f"no such file: {path}", f"{path} is a folder, not a file"
        raise _file_error(exc, path, "read", missing=missing, folder=folder) from None


def write_output_file(path: Path, data: bytes, *, force: bool) -> None:
    """Write ``data`` to a file the user named; without ``force`` an existing file is refused
    (the desktop app asks first and passes ``force``).

    Raises:
        UsageError: it exists (without ``force``), is a folder, its folder is missing, or it
            cannot be written. Nothing is written then.
    """
    try:
        with open(path, "wb" if force else "xb") as out:
            out.write(data)
    except FileExistsError:
        if path.is_dir():  # ("xb" says only that the name is taken)
            raise UsageError(f"{path} is a folder; give a file name") from None
        raise UsageError(f"{path} already exists; use --force to overwrite it") from None
    except OSError as exc:
        missing = f"cannot write {path}: its folder does not exist"
        folder = f"{path} is a folder; give a file name"
        raise _file_error(exc, path, "write", missing=missing, folder=folder) from None


def _file_error(exc: OSError, path: Path, verb: str, *, missing: str, folder: str) -> UsageError:
    """The one line for a file that could not be read or written (``verb``): ``missing`` for
    a name (or folder) that does not exist, ``folder`` for a folder, else the system's
    reason."""
    if isinstance(exc, FileNotFoundError):
        return UsageError(missing)
    if isinstance(exc, IsADirectoryError):
        return UsageError(folder)
    return UsageError(f"cannot {verb} {path}: {exc.strerror or exc}")
