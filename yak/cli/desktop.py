"""``yak install-desktop [--uninstall]``: make the desktop find Yak (Linux and the BSDs).

It copies the desktop entry, the AppStream metainfo and the icons, all named after the app id
(``yak.paths.APP_ID``), from the ``yak.resources`` package into the user's XDG data folder
(``$XDG_DATA_HOME``, else ``~/.local/share``):

- ``applications/<APP_ID>.desktop``, its ``Exec`` lines pointing at the ``yak`` that ran this
  command (an absolute path, so a virtual environment need not be on ``PATH``);
- ``metainfo/<APP_ID>.metainfo.xml``;
- ``icons/hicolor/scalable/apps/<APP_ID>.svg`` and ``icons/hicolor/128x128/apps/<APP_ID>.png``.

Then it runs ``update-desktop-database`` on the applications folder when that tool exists.
``--uninstall`` removes the same files (missing ones are not an error). Nothing else in the data
folder is touched.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs

from yak.errors import UsageError, YakError
from yak.paths import APP_ID

if TYPE_CHECKING:
    from yak.cli.context import Context

log = logging.getLogger(__name__)

ICON_SIZE = 128  # pixels: the size of the PNG in ``yak.resources``


def _install_desktop_parser(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--uninstall", action="store_true", help="remove the files instead of installing them"
    )
    p.set_defaults(func=cmd_install_desktop, needs_core=False)


PARSERS = {"install-desktop": _install_desktop_parser}


def cmd_install_desktop(args: argparse.Namespace, _ctx: Context | None) -> int:
    """Install (or with ``--uninstall`` remove) the desktop files; prints one line per file.

    Raises:
        UsageError: not a freedesktop platform (Windows, macOS).
        YakError: a folder or file under the XDG data folder cannot be written.
    """
    if sys.platform in ("win32", "darwin", "cygwin"):
        raise UsageError("yak install-desktop is for Linux and BSD desktops (freedesktop.org).")
    base = xdg_data_home()
    try:
        if args.uninstall:
            removed = uninstall(base)
            for path in removed:
                print(f"removed {path}")
            if not removed:
                print(f"nothing to remove under {base}")
        else:
            for path in install(base, launcher=launcher_command()):
                print(f"installed {path}")
    except OSError as exc:
        raise YakError(
            f"cannot write the desktop files under {base}: {exc.strerror or exc}"
        ) from None
    _update_desktop_database(base / "applications")
    return 0


def xdg_data_home() -> Path:
    """The user's XDG data folder: ``$XDG_DATA_HOME`` when set and absolute, else
    ``~/.local/share`` (platformdirs' rule)."""

    return Path(platformdirs.user_data_dir())


def targets(base: Path) -> dict[str, Path]:
    """Where each packaged file goes under ``base``: resource name → destination path."""
    return {
        f"desktop/{APP_ID}.desktop": base / "applications" / f"{APP_ID}.desktop",
        f"desktop/{APP_ID}.metainfo.xml": base / "metainfo" / f"{APP_ID}.metainfo.xml",
        "yak.svg": base / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg",
        "yak.png": base
        / "icons"
        / "hicolor"
        / f"{ICON_SIZE}x{ICON_SIZE}"
        / "apps"
        / f"{APP_ID}.png",
    }


def install(base: Path, *, launcher: Sequence[str]) -> list[Path]:
    """Copy the packaged desktop files under ``base``; returns the paths written.

    Args:
        base: the XDG data folder (``~/.local/share``).
        launcher: the command that starts Yak (``["/path/to/yak"]``); the desktop entry's
            ``Exec`` lines start it instead of a bare ``yak``.

    Raises:
        OSError: a folder or file cannot be written.
    """
    package = resources.files("yak.resources")
    written = []
    for name, target in targets(base).items():
        data = package.joinpath(*name.split("/")).read_bytes()
        if target.suffix == ".desktop":
            data = desktop_entry_for(data.decode("utf-8"), launcher).encode("utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, target)
        written.append(target)
    return written


def uninstall(base: Path) -> list[Path]:
    """Remove the files :func:`install` writes under ``base``; returns the ones removed.

    Raises:
        OSError: a file exists but cannot be removed.
    """
    removed = []
    for target in targets(base).values():
        try:
            target.unlink()
        except FileNotFoundError:
            continue
        removed.append(target)
    return removed


def desktop_entry_for(text: str, launcher: Sequence[str]) -> str:
    """The desktop entry ``text`` with each ``Exec=yak …`` line starting ``launcher`` instead,
    quoted by the Desktop Entry Specification's rules (``"`` around an argument with a
    reserved character, ``\\`` before ``"``, `````, ``$`` and ``\\``; ``%`` doubled)."""
    command = " ".join(_exec_quote(word) for word in launcher)
    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith("Exec=yak"):
            line = "Exec=" + command + line[len("Exec=yak") :]
        out.append(line)
    return "".join(out)


def _exec_quote(word: str) -> str:
    word = word.replace("%", "%%")
    if not any(c in word for c in " \t\n\"'\\><~|&;$*?#()`="):
        return word
    escaped = "".join("\\" + c if c in '"`$\\' else c for c in word)
    return f'"{escaped}"'


def launcher_command() -> list[str]:
    """The command that starts this Yak: the bundle's executable, else the ``yak`` script
    that is running, else this interpreter with ``-m yak``."""
    if getattr(sys, "frozen", False):
        return [os.path.abspath(sys.executable)]
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "yak" and os.path.isfile(script):
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "yak"]


def _update_desktop_database(folder: Path) -> None:
    """Refresh the desktop's MIME/app cache for ``folder`` when ``update-desktop-database``
    exists (a failure is logged: the entry works without the cache)."""
    tool = shutil.which("update-desktop-database")
    if tool is None or not folder.is_dir():
        return
    result = subprocess.run(
        [tool, "-q", str(folder)], capture_output=True, text=True, timeout=60, check=False
    )
    if result.returncode != 0:
        log.warning("update-desktop-database failed: %s", result.stderr.strip())
