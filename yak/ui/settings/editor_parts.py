"""The parts of the Settings memory editor around its text: :class:`MemoryOptions`, one
workspace's memory switches, and :class:`ChangedBanner`, shown when the stored document changed
underneath unsaved edits or a save turned out stale."""

from __future__ import annotations

import functools
import os

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import QCheckBox, QFrame, QWidget

from yak.domain import MemoryDocument, Workspace
from yak.linediff import diff_rows
from yak.memory.sharing.sync import DEFAULT_SYNCED_FILE as SYNCED_FILE_NAME
from yak.ui.diff_view import DiffView
from yak.ui.layout import STRETCH, blocked_signals, create_button, create_label, hbox, vbox


class MemoryOptions(QWidget):
    """Use the memory, review every rewrite, keep ``AGENTS.md`` in sync: three boxes for one
    workspace; a change the user makes is emitted with the workspace's id."""

    memory_enabled_changed = Signal(str, bool)  # workspace id, enabled
    review_mode_changed = Signal(str, bool)  # workspace id, every rewrite waits for review
    sync_file_changed = Signal(str, bool)  # workspace id, keep AGENTS.md in sync

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._workspace_id: str | None = None
        self.memory_enabled_box = QCheckBox("Use this memory in conversations and refresh it", self)
        # Short labels (the explanations are the tooltips), so the list beside the editor keeps
        # the width to show whole names and statuses.
        self.review_mode_box = QCheckBox("Review every rewrite before it applies", self)
        self.review_mode_box.setToolTip(
            "Otherwise a rewrite's supported lines apply, and only doubtful ones (not said, "
            "a duplicate, an instruction no one typed, your lines changed) wait for you"
        )
        self.review_mode_box.setObjectName("reviewModeBox")
        self.sync_file_box = QCheckBox(self)
        self.sync_file_box.setObjectName("syncFileBox")
        for box, signal in (
            (self.memory_enabled_box, self.memory_enabled_changed),
            (self.review_mode_box, self.review_mode_changed),
            (self.sync_file_box, self.sync_file_changed),
        ):
            box.toggled.connect(functools.partial(self._on_box_toggled, signal))
        left = (
            Qt.AlignmentFlag.AlignLeft
        )  # each box as wide as its text: a click beside it is no click
        vbox(
            (self.memory_enabled_box, 0, left),
            (self.review_mode_box, 0, left),
            (self.sync_file_box, 0, left),
            margins=0,
            parent=self,
        )

    def show_workspace(self, workspace: Workspace | None) -> None:
        """Check the boxes as ``workspace`` is set (without emitting); with ``None`` they are
        disabled."""
        self._workspace_id = workspace.id if workspace is not None else None
        if workspace is not None:
            with blocked_signals(self.memory_enabled_box):
                self.memory_enabled_box.setChecked(workspace.memory_enabled)
            with blocked_signals(self.review_mode_box):
                self.review_mode_box.setChecked(workspace.review_mode == "review")
        self._show_sync_file(workspace)
        for box in (self.memory_enabled_box, self.review_mode_box, self.sync_file_box):
            box.setEnabled(workspace is not None)

    def _on_box_toggled(self, signal: SignalInstance, checked: bool) -> None:
        if self._workspace_id is not None:
            signal.emit(self._workspace_id, checked)

    def _show_sync_file(self, workspace: Workspace | None) -> None:
        """The "keep in sync" box: checked and naming the kept file when there is one (the
        command line may keep another than ``AGENTS.md``), its full path in the tooltip."""
        kept = workspace.synced_file if workspace is not None else None
        name = os.path.basename(kept) if kept else SYNCED_FILE_NAME
        self.sync_file_box.setText(f"Keep {name} in sync")
        self.sync_file_box.setToolTip(
            f"Its memory block is rewritten after every change ({kept})"
            if kept
            else (
                f"Writes the memory between <!-- yak:memory --> markers in {SYNCED_FILE_NAME} "
                "in the workspace folder after every change; the rest of the file is left as "
                "it is"
            )
        )
        with blocked_signals(self.sync_file_box):
            self.sync_file_box.setChecked(kept is not None)


class ChangedBanner(QFrame):
    """A sentence, the diff from the stored document to the edits, Keep mine, Merge and Take
    theirs (hidden until :meth:`show_change`)."""

    keep_mine_clicked = Signal()
    merge_clicked = Signal()
    take_theirs_clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("memoryBanner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#memoryBanner { background: #fff4ce; border: 1px solid #c9a400; border-radius: 4px; }"
        )
        self.label = create_label(self, object_name="bannerText", word_wrap=True)
        self.label.setStyleSheet("color: #3d3000;")
        self.diff_view = DiffView(self)
        self.diff_view.setObjectName("bannerDiff")
        self.diff_view.setMaximumHeight(160)
        self.keep_mine_button = create_button(
            "Keep mine",
            self,
            tooltip="Save your text as a new version on top of the stored one",
            clicked=self.keep_mine_clicked,
        )
        self.merge_button = create_button(
            "Merge",
            self,
            tooltip=(
                "Put your edits on top of the stored version where they change other lines; "
                "the result stays in the editor until you save it"
            ),
            clicked=self.merge_clicked,
        )
        self.take_theirs_button = create_button(
            "Take theirs",
            self,
            tooltip="Discard your edits and show the stored version",
            clicked=self.take_theirs_clicked,
        )
        vbox(
            self.label,
            self.diff_view,
            hbox(STRETCH, self.keep_mine_button, self.merge_button, self.take_theirs_button),
            parent=self,
        )
        self.hide()

    def show_change(
        self, theirs: MemoryDocument, mine: str, *, stale_save: bool, by: str = ""
    ) -> None:
        """Show the banner: one message says what happened (a stale save refused, or a change
        ``by`` someone, e.g. " by a refresh") and what each button does, over the diff from
        ``theirs`` to the edited text ``mine``."""
        if stale_save:
            what = (
                f"The memory changed (version {theirs.version}) while you were editing; "
                "nothing was saved."
            )
        else:
            what = f"The memory changed to version {theirs.version}{by} while you were editing."
        self.label.setText(
            f"{what} Keep mine saves your text as version {theirs.version + 1}; Merge puts "
            f"your edits on top of version {theirs.version}; Take theirs discards your edits."
        )
        self.diff_view.show_rows(diff_rows(theirs.content, mine))
        if not self.diff_view.rows():
            self.diff_view.show_message("(no line differences)")
        self.show()
