"""The README's list of system packages covers every library Qt's X11 platform plugin links
(read from the plugin's ELF ``NEEDED`` entries with ``readelf``), so a bare Debian that installs
the list can open the window."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Sonames whose Debian package name does not follow from the soname, and those every system
# has (the C library and the compiler's runtime).
IRREGULAR = {"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0"}
BASE = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libdl.so.2"}


def debian_package(soname: str) -> str:
    """Debian's package name for a library: ``libxcb-icccm.so.4`` → ``libxcb-icccm4``,
    ``libxkbcommon-x11.so.0`` → ``libxkbcommon-x11-0`` (a dash before a version that follows
    a digit), lower case."""
    if soname in IRREGULAR:
        return IRREGULAR[soname]
    name, version = soname.split(".so.")
    separator = "-" if name[-1].isdigit() else ""
    return f"{name}{separator}{version}".lower()


def test_the_readme_names_every_library_the_x11_plugin_links():
    """Each non-Qt library the xcb plugin and its Qt support library need is in the README."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf is not installed (binutils)")
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    needed = set()
    for binary in (qt / "plugins/platforms/libqxcb.so", qt / "lib/libQt6XcbQpa.so.6"):
        dynamic = subprocess.run(
            [readelf, "-d", str(binary)], capture_output=True, text=True, check=True
        ).stdout
        needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic))
    system = {n for n in needed if "Qt6" not in n and n not in BASE}
    assert system, needed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\blib[\w.+-]+", readme))
    missing = sorted(debian_package(n) for n in system if debian_package(n) not in listed)
    assert missing == []
