"""What ``yak DIR`` does before its window's first paint, in a process of its own (as the start-up
benchmark times it, ``tests/support/first_paint.py``): a window shown as someone who used Yak
before left it needs none of PySide's ``Qt`` namespace, whose enums take some 30 ms to build
(``yak.ui.layout.set_qt_enum``)."""

from __future__ import annotations

from tests.support.first_paint import child_env, first_frame


def test_a_returning_users_first_frame_needs_no_qt_namespace(tmp_path):
    """First run: the dock is placed by its area, which builds the namespace. The window's
    first size is wider than the offscreen screen, so the second start fits the dock to the
    screen (by its area too) and saves that. From then on the first frame shows the folder
    and the memory dock beside the chat without the namespace."""
    folder = tmp_path / "proj"
    folder.mkdir()
    env = child_env(tmp_path / "data", QT_QPA_PLATFORM="offscreen")

    first = first_frame(folder, env, save_layout=True)
    assert first["qt_built"] is True  # the positive: a first run builds it
    assert first["dock_visible"] and first["dock_right_of_chat"]
    first_frame(folder, env, save_layout=True)

    frame = first_frame(folder, env)
    assert frame["qt_built"] is False
    assert frame["title"] == f"proj — {folder} — Yak"
    assert any("Loading the memory" in text for text in frame["labels"])
    assert not any("Open a project folder" in text for text in frame["labels"])
    assert frame["dock_visible"] and frame["dock_right_of_chat"]
