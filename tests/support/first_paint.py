"""``yak DIR`` in a child process that reports the first paint of its main window showing DIR:
the start-up benchmark times it (``benchmarks/bench_ui.py``) and a test checks what that frame
needed (``tests/ui/test_first_paint.py``), so both look at the same frame."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

# The child runs the real ``yak DIR``. At the first paint of the main window that shows DIR (its
# name in the title and in a visible label, no open-a-folder hint: a placeholder does not count)
# it prints one FIRST_WINDOW line: the time first, then whether PySide's ``Qt`` namespace was
# built by then and what the frame shows. With SAVE_LAYOUT set it then saves the window layout
# once it has settled, as a quit does; otherwise it exits at once.
CHILD = textwrap.dedent("""
    import json, os, sys, time
    import PySide6.QtCore as QtCore
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QLabel, QWidget
    from yak.ui import main_window

    NAME = os.path.basename(sys.argv[1].rstrip("/"))

    def shown_labels(window):
        return [w.text() for w in window.findChildren(QLabel) if w.isVisible()]

    def shows_workspace(window):
        labels = shown_labels(window)
        return (
            NAME in window.windowTitle()
            and any(NAME in text for text in labels)
            and not any("Open a project folder" in t or "No folder is open" in t for t in labels)
        )

    # On the window itself (a filter on the whole app would slow every event down); if its first
    # paint shows no workspace yet, every later paint in the app is looked at.
    class WorkspacePainted(QObject):
        def eventFilter(self, obj, event):
            if event.type() != QEvent.Type.Paint or not isinstance(obj, QWidget):
                return False
            window = obj.window()
            if not isinstance(window, main_window.MainWindow):
                return False
            if not shows_workspace(window):
                QApplication.instance().installEventFilter(self)
                return False
            painted = time.time()
            built = "Qt" in vars(QtCore)  # before anything below could touch it
            dock = window.memory_dock
            frame = {
                "time": painted,
                "qt_built": built,
                "title": window.windowTitle(),
                "labels": shown_labels(window),
                "dock_visible": dock.isVisible(),
                "dock_right_of_chat": dock.x() > window.centralWidget().x(),
            }
            print("FIRST_WINDOW", json.dumps(frame), flush=True)
            if not os.environ.get("SAVE_LAYOUT"):
                os._exit(0)
            QApplication.instance().removeEventFilter(self)
            window.removeEventFilter(self)
            QTimer.singleShot(1000, lambda: (window._save_geometry(), os._exit(0)))
            return False

    probe = WorkspacePainted()
    shown = main_window.MainWindow.showEvent
    def show_event(self, event):
        self.installEventFilter(probe)
        shown(self, event)
    main_window.MainWindow.showEvent = show_event
    from yak.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def first_frame(
    folder: Path, env: dict[str, str], *, save_layout: bool = False, cwd: Path | None = None
) -> dict:
    """Run ``yak FOLDER`` with ``env`` until its first frame showing FOLDER; returns what the
    child reported (``time``, ``qt_built``, ``title``, ``labels``, ``dock_visible``,
    ``dock_right_of_chat``) plus ``since_spawn_s``: seconds from just before the spawn to
    that paint (Python's start-up included).

    Raises:
        RuntimeError: the child reported no such frame (its exit status and stderr's end).
    """
    env = {key: value for key, value in env.items() if key != "SAVE_LAYOUT"}
    if save_layout:
        env["SAVE_LAYOUT"] = "1"
    started = time.time()
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=cwd,
        check=False,
    )
    for line in result.stdout.splitlines():
        if line.startswith("FIRST_WINDOW "):
            frame = json.loads(line.removeprefix("FIRST_WINDOW "))
            frame["since_spawn_s"] = frame["time"] - started
            return frame
    raise RuntimeError(f"no window reported (exit {result.returncode}): {result.stderr[-800:]}")


def child_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment for :func:`first_frame`: this one, with the data, config (window layout)
    and state folders under ``data_dir`` and no API key."""
    env = dict(
        os.environ,
        YAK_DATA_DIR=str(data_dir),
        XDG_STATE_HOME=str(data_dir / "state"),
        XDG_CONFIG_HOME=str(data_dir / "config"),
        **extra,
    )
    env.pop("ANTHROPIC_API_KEY", None)
    return env
