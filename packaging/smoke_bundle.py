"""Smoke-test a built bundle: ``python packaging/smoke_bundle.py dist/yak``.

In a private data, config and state folder it checks that the bundle:

1. prints its version;
2. starts the GUI offscreen (``QT_QPA_PLATFORM=offscreen``), is still running after
   ``GUI_SECONDS`` with "window shown" in its log, and quits with status 0 on SIGTERM;
3. runs ``yak memory list --json`` on the database the GUI created (a JSON list, status 0);
4. carries the app icon where ``importlib.resources`` finds it.

Prints one line per check; exit status 0 when all pass, 1 otherwise. Runs on Linux and macOS.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GUI_SECONDS = 5.0


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: smoke_bundle.py BUNDLE_FOLDER", file=sys.stderr)
        return 2
    bundle = Path(argv[0]).resolve()
    exe = bundle / ("yak.exe" if sys.platform == "win32" else "yak")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="yak-smoke-") as tmp:
        env = {
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            "YAK_DATA_DIR": str(Path(tmp) / "data"),
            "XDG_DATA_HOME": str(Path(tmp) / "share"),
            "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
            "XDG_STATE_HOME": str(Path(tmp) / "state"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        env.pop("ANTHROPIC_API_KEY", None)

        def check(name: str, ok: bool, detail: str = "") -> None:
            nonlocal failures
            failures += not ok
            print(
                f"{'ok  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail and not ok else "")
            )

        version = subprocess.run([exe, "--version"], capture_output=True, text=True, env=env)
        check(
            "--version",
            version.returncode == 0 and version.stdout.startswith("yak "),
            version.stderr.strip(),
        )

        gui = subprocess.Popen(
            [exe], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        time.sleep(GUI_SECONDS)
        running = gui.poll() is None
        if running:
            gui.send_signal(signal.SIGTERM)
        try:
            _out, err = gui.communicate(timeout=60)  # quitting waits for start-up work
        except subprocess.TimeoutExpired:
            gui.kill()
            _out, err = gui.communicate()
        logs = list(Path(tmp).rglob("yak.log"))  # in data/log: the log follows YAK_DATA_DIR
        log_text = logs[0].read_text(encoding="utf-8") if logs else ""
        check(f"GUI still running after {GUI_SECONDS:.0f} s", running, err.strip()[-800:])
        check("GUI logged 'window shown'", "window shown" in log_text, log_text[-800:])
        check("GUI quit with status 0 on SIGTERM", gui.returncode == 0, f"status {gui.returncode}")

        listed = subprocess.run(
            [exe, "memory", "list", "--json"], capture_output=True, text=True, env=env
        )
        try:
            ok = listed.returncode == 0 and isinstance(json.loads(listed.stdout), list)
        except ValueError:
            ok = False
        check("memory list --json", ok, listed.stderr.strip())

        icons = list(bundle.rglob("yak/resources/yak.svg"))
        check("icon packaged as yak.resources", bool(icons))
    print("smoke test " + ("passed" if failures == 0 else f"failed ({failures} checks)"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
