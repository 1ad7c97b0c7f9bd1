"""Settings fits a small screen: the dialog with both pages, a workspace open in the memory
editor, needs no more than ``MAX_WIDTH_PX`` of width."""

from __future__ import annotations

from memory_support import run, show

from yak.ui.settings.dialog import SettingsDialog
from yak.ui.settings.memory_controller import MemoryPageController
from yak.ui.settings.memory_page import MemoryPage
from yak.ui.settings.provider_page import ProviderPage

MAX_WIDTH_PX = 900


def test_settings_with_both_pages_fits_in_900_pixels(env, qtbot, qloop):
    """Neither Settings › Memory (list, editor and its buttons) nor Settings › Provider asks
    for more than 900 px: the dialog's minimum width stays under it."""
    workspace = env.workspace("proj", "- fact\n")
    dialog = SettingsDialog()
    qtbot.addWidget(dialog)
    assert dialog.width() <= MAX_WIDTH_PX  # it opens at a size that fits
    memory_page = MemoryPage()
    dialog.add_page("Memory", memory_page)
    memory_page.controller = MemoryPageController(memory_page, env.core, env.bridge)
    dialog.add_page("Provider", ProviderPage(settings=env.core.settings, chat=env.core.chat))
    dialog.show_page("Memory")
    run(qloop, show(memory_page, workspace.id))
    widths = {
        "dialog": dialog.minimumSizeHint().width(),
        "memory": memory_page.minimumSizeHint().width(),
        "editor": memory_page.editor.minimumSizeHint().width(),
    }
    assert max(widths.values()) <= MAX_WIDTH_PX, widths
