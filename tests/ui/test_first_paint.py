"""What ``yak DIR`` does before its window's first paint, in a process of its own (as the start-up
benchmark times it): a window shown as someone who used Yak before left it needs none of
PySide's ``Qt`` namespace, whose enums take some 30 ms to build (``yak.ui.layout.set_qt_enum``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

# The child runs the real ``yak DIR`` and, at the first paint of the main window showing DIR,
# prints what that frame shows and whether the ``Qt`` namespace was built by then. With
# SAVE_LAYOUT it then saves the layout as a quit does, once it has settled.
CHILD = textwrap.dedent("""
    import json, os, sys
    import PySide6.QtCore as QtCore
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QLabel, QWidget
    from yak.ui import main_window

    class FirstPaint(QObject):
        def eventFilter(self, obj, event):
            if event.type() != QEvent.Type.Paint or not isinstance(obj, QWidget):
                return False
            window = obj.window()
            if not isinstance(window, main_window.MainWindow) or window.opening is None:
                return False
            built = "Qt" in vars(QtCore)  # before anything below touches it
            window.removeEventFilter(self)
            dock = window.memory_dock
            print(json.dumps({
                "qt_built": built,
                "title": window.windowTitle(),
                "labels": [w.text() for w in window.findChildren(QLabel) if w.isVisible()],
                "dock_visible": dock.isVisible(),
                "dock_right_of_chat": dock.x() > window.centralWidget().x(),
            }), flush=True)
            if not os.environ.get("SAVE_LAYOUT"):
                os._exit(0)
            QTimer.singleShot(500, lambda: (window._save_geometry(), os._exit(0)))
            return False

    probe = FirstPaint()
    shown = main_window.MainWindow.showEvent
    def show_event(self, event):
        self.installEventFilter(probe)
        shown(self, event)
    main_window.MainWindow.showEvent = show_event
    from yak.cli import main
    sys.exit(main(sys.argv[1:]))
""")


def first_frame(folder, data_dir, *, save_layout: bool) -> dict:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="offscreen",
        YAK_DATA_DIR=str(data_dir),
        XDG_CONFIG_HOME=str(data_dir / "config"),
        XDG_STATE_HOME=str(data_dir / "state"),
    )
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("SAVE_LAYOUT", None)
    if save_layout:
        env["SAVE_LAYOUT"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0 and lines, result.stderr[-2000:]
    return json.loads(lines[0])


def test_a_returning_users_first_frame_needs_no_qt_namespace(tmp_path):
    """First run: the dock is placed by its area, which builds the namespace. The window's
    first size is wider than the offscreen screen, so the second start fits the dock to the
    screen (by its area too) and saves that. From then on the first frame shows the folder
    and the memory dock beside the chat without the namespace."""
    folder = tmp_path / "proj"
    folder.mkdir()
    data_dir = tmp_path / "data"

    first = first_frame(folder, data_dir, save_layout=True)
    assert first["qt_built"] is True  # the positive: a first run builds it
    assert first["dock_visible"] and first["dock_right_of_chat"]
    first_frame(folder, data_dir, save_layout=True)

    frame = first_frame(folder, data_dir, save_layout=False)
    assert frame["qt_built"] is False
    assert frame["title"] == f"proj — {folder} — Yak"
    assert any("Loading the memory" in text for text in frame["labels"])
    assert not any("Open a project folder" in text for text in frame["labels"])
    assert frame["dock_visible"] and frame["dock_right_of_chat"]
