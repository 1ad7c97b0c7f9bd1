"""Build Yak's one-folder bundle with PyInstaller, then smoke-test it.

Run it with the Python of an environment where Yak is installed, from a wheel or editable
(``pip install -e .``), with PyInstaller beside it::

    .venv/bin/pip install pyinstaller
    .venv/bin/python packaging/build_bundle.py            # -> dist/yak/yak
    .venv/bin/python packaging/build_bundle.py --no-smoke # build only

It prints the build time and the bundle's size, then runs ``packaging/smoke_bundle.py`` on the
result (the GUI offscreen for a few seconds, then ``yak memory list``). Exit status: 0 built
(and smoke-tested), 1 the build or the smoke test failed, 2 PyInstaller is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def folder_size(folder: Path) -> int:
    """Bytes of every file under ``folder`` (symlinks not followed)."""
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build Yak's one-folder bundle.")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="output folder")
    parser.add_argument(
        "--work", type=Path, default=ROOT / "build" / "bundle", help="PyInstaller's work folder"
    )
    parser.add_argument("--no-smoke", action="store_true", help="skip the smoke test")
    args = parser.parse_args(argv)
    args.dist, args.work = args.dist.resolve(), args.work.resolve()
    if importlib.util.find_spec("PyInstaller") is None:
        print(
            f"build_bundle: PyInstaller is not installed for {sys.executable}; "
            f"run: {sys.executable} -m pip install pyinstaller",
            file=sys.stderr,
        )
        return 2
    package = importlib.util.find_spec("yak")
    if package is None or not package.submodule_search_locations:
        print(f"build_bundle: Yak is not installed for {sys.executable}", file=sys.stderr)
        return 1
    # The folder that holds the installed package: site-packages for a wheel, the source tree
    # for an editable install, whose import hook PyInstaller's analysis does not follow.
    installed = os.path.dirname(list(package.submodule_search_locations)[0])
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [installed, os.environ.get("PYTHONPATH")])),
    )
    started = time.monotonic()
    args.work.mkdir(parents=True, exist_ok=True)
    # Run from the work folder, not the repository: ``python -m`` puts the current folder
    # first on the path, and the source tree would shadow the installed Yak (a wheel).
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            str(HERE / "yak.spec"),
            "--noconfirm",
            "--log-level=WARN",
            "--distpath",
            str(args.dist),
            "--workpath",
            str(args.work),
        ],
        cwd=args.work,
        env=env,
        check=False,
    )
    seconds = time.monotonic() - started
    bundle = args.dist / "yak"
    if build.returncode != 0:
        print(f"build_bundle: PyInstaller failed (status {build.returncode})", file=sys.stderr)
        return 1
    size_mb = folder_size(bundle) / 1_000_000
    print(f"built {bundle} in {seconds:.0f} s: {size_mb:.0f} MB")
    if args.no_smoke:
        return 0
    smoke = subprocess.run(
        [sys.executable, str(HERE / "smoke_bundle.py"), str(bundle)], check=False, env=os.environ
    )
    return 0 if smoke.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
