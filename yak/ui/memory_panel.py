"""MemoryPanel: the current workspace's memory document beside the chat, read-only.

Shows the document (monospace), ``N / 200 lines · ≈3.1k tokens`` (its estimated size in tokens,
which every chat request carries: "Cost" in docs/memory.md), when it was last updated, and where its
refresh stands — up to date / refreshed: +2 −1 [Diff] / 1 change to review [Review…] /
pending in N s / refreshing… N s [Stop] / refused: reason [View] / failed: reason [Retry] / refresh
paused: no API key [Add key…] — with Refresh (forced) and Edit… (Settings on this workspace),
and, when the last check of the workspace found lines naming something gone, how many [Review…]
("Checked at use" in docs/memory.md).

The panel never awaits: it emits intent signals carrying the workspace id, and the controller
drives it with ``show_*`` calls. Where the refresh stands is always a whole snapshot from the
refresh scheduler (its ``snapshot()`` when a workspace opens, then each ``RefreshStateChanged``
event's): the panel shows it as it is and merges it with nothing.
"""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QHelpEvent, QHideEvent, QPalette, QShowEvent
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy, QStackedWidget, QToolTip, QWidget

from yak.domain import LineOrigin, MemoryDocument, QueueState, RefreshState, Workspace
from yak.memory.freshness.age import LineAge
from yak.memory.freshness.stale import StaleLine
from yak.presenters import (
    StatusAction,
    StatusKind,
    StatusLine,
    action_words,
    age_words,
    gone_summary,
    refresh_status,
    status_colour,
    token_size,
)
from yak.references import ReferenceCheck
from yak.text import plural
from yak.ui.colours import text_style
from yak.ui.formatting import (
    line_count_text,
    origin_and_why,
    origin_at,
    relative_time,
)
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox

TIP_CHARS = 90  # a line's hover tip wraps at this many characters

NO_WORKSPACE_TEXT = (
    "No folder is open. Open a project folder with File › Open Folder… "
    "(Ctrl+O) to see its memory here."
)
TOKENS_TOOLTIP = (
    "About how many tokens this memory adds to every chat request in this workspace (its "
    "characters / 4: an estimate). 'yak memory stats' also gives what its refreshes cost."
)
EMPTY_DOCUMENT_TEXT = (
    "No memory yet. It is written after your conversations here, or by hand with the Edit… button."
)


class MemoryPanel(QWidget):
    """The memory document of the current workspace, with its refresh status.

    Args:
        clock: monotonic seconds, for the pending countdown (tests pass a fake).
        now: the current UTC time, for "updated 5 minutes ago" (tests pass a fake).
    """

    refresh_requested = Signal(str)  # workspace id: run a forced refresh
    edit_requested = Signal(str)  # workspace id: open Settings' editor on it
    view_reply_requested = Signal(str)  # workspace id: show the refused reply as a diff
    review_requested = Signal(str)  # workspace id: open the proposal waiting for review
    diff_requested = Signal(str)  # workspace id: show what the last refresh changed
    retry_requested = Signal(str)  # workspace id: run the refresh again after a failure
    stop_requested = Signal(str)  # workspace id: cancel the refresh in flight
    provider_settings_requested = Signal()  # no API key: open Settings › Provider
    gone_review_requested = Signal(str)  # workspace id: review the lines naming what is gone
    stale_review_requested = Signal(str)  # workspace id: review its stale lines

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__(parent)
        self.clock = clock
        self._now = now
        self._workspace: Workspace | None = None
        self._document: MemoryDocument | None = None
        self._state: RefreshState | None = None
        self._due_at: float | None = None
        self._running_since: float | None = None  # clock time the refresh in flight started
        self._status = StatusLine(StatusKind.UP_TO_DATE, "")
        self._origins: list[LineOrigin] = []
        self._titles: dict[str, str] = {}
        self._references = ReferenceCheck()
        self._ages: dict[int, LineAge] = {}  # by 1-based line number
        self.stale: list[StaleLine] = []
        self._setup_ui()
        self._tick_timer = QTimer(self)
        self._tick_timer.setInterval(1000)
        self._tick_timer.timeout.connect(self._on_tick_timer_timeout)
        self.show_workspace(None)

    def _setup_ui(self) -> None:
        self.setObjectName("memoryPanel")
        self.title_label = create_label(self, object_name="memoryTitle", selectable=True)
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)

        self.status_label = create_label(self, object_name="memoryStatus", word_wrap=True)
        self.status_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.action_button = create_button("", self, clicked=self._on_action_button_clicked)
        self.action_button.setObjectName("memoryStatusAction")

        self.document_stack = self._setup_document_stack()

        self.gone_label = create_label(self, object_name="memoryGone", word_wrap=True)
        self.gone_button = create_button(
            "Review…",
            self,
            tooltip="Keep, edit or remove the lines that name what the workspace no longer has",
            clicked=self._on_gone_button_clicked,
        )
        self.gone_button.setObjectName("memoryGoneReview")

        self.lines_label = create_label(self, object_name="memoryLines")
        self.tokens_label = create_label(self, object_name="memoryTokens")
        self.tokens_label.setToolTip(TOKENS_TOOLTIP)
        self.updated_label = create_label(self, object_name="memoryUpdated")
        self.stale_label = create_label(self, object_name="memoryStale", word_wrap=True)
        self.stale_button = create_button(
            "Review…",
            self,
            tooltip="Keep, edit or remove the lines no one said or confirmed for a while",
            clicked=self._on_stale_button_clicked,
        )
        self.refresh_button = create_button(
            "Refresh",
            self,
            tooltip="Bring the memory up to date with the conversations now",
            clicked=self._on_refresh_button_clicked,
        )
        self.edit_button = create_button(
            "Edit…",
            self,
            tooltip="Edit this memory in Settings",
            clicked=self._on_edit_button_clicked,
        )
        vbox(
            self.title_label,
            hbox((self.status_label, 1), self.action_button),
            (self.document_stack, 1),
            hbox((self.gone_label, 1), self.gone_button),
            hbox((self.stale_label, 1), self.stale_button),
            hbox(self.lines_label, self.tokens_label, STRETCH, self.updated_label),
            hbox(STRETCH, self.refresh_button, self.edit_button),
            margins=6,
            parent=self,
        )

    def _setup_document_stack(self) -> QStackedWidget:
        """The document, or a wrapped sentence in its place when there is none (a text field's
        own placeholder is drawn unwrapped past its right edge in a narrow dock)."""
        stack = QStackedWidget(self)
        self.document_view = QPlainTextEdit(stack)
        self.document_view.setObjectName("memoryDocument")
        self.document_view.setReadOnly(True)
        self.document_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.document_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.document_view.viewport().installEventFilter(self)
        self.placeholder_label = create_label(
            stack, object_name="memoryPlaceholder", word_wrap=True
        )
        self.placeholder_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.placeholder_label.setMargin(8)
        self.placeholder_label.setSizePolicy(
            QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding
        )
        palette = self.placeholder_label.palette()
        palette.setColor(
            QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.PlaceholderText)
        )
        self.placeholder_label.setPalette(palette)
        stack.addWidget(self.document_view)
        stack.addWidget(self.placeholder_label)
        return stack

    # --- driven by the controller ------------------------------------------------------------
    @property
    def workspace(self) -> Workspace | None:
        """The workspace shown, or ``None``."""
        return self._workspace

    def show_workspace(self, workspace: Workspace | None) -> None:
        """Show ``workspace`` (its document and state arrive with the next calls); ``None``
        shows how to open one, with Refresh and Edit… disabled."""
        self._workspace = workspace
        self._document = None
        self._origins, self._titles = [], {}
        self.set_stale([])
        self._ages = {}
        self._state = None
        self._due_at = None
        self._status = StatusLine(StatusKind.UP_TO_DATE, "")
        self.show_references(workspace.id if workspace else "", ReferenceCheck())
        self.document_view.clear()
        self.status_label.clear()
        self.status_label.setStyleSheet("")
        self.action_button.hide()
        self.lines_label.clear()
        self.tokens_label.clear()
        self.updated_label.clear()
        if workspace is None:
            self.title_label.setText("No workspace")
            self.title_label.setToolTip("")
            self._show_placeholder(NO_WORKSPACE_TEXT)
        else:
            self.title_label.setText(f"Memory — {workspace.name}")
            self.title_label.setToolTip(workspace.path)
            self._show_placeholder("")
        self._update_buttons()
        self._update_tick_timer()

    def show_document(self, document: MemoryDocument) -> None:
        """Show ``document`` if it belongs to the workspace shown (stale results are dropped)."""
        if self._workspace is None or document.workspace_id != self._workspace.id:
            return
        self._document = document
        if self.document_view.toPlainText() != document.content:
            self.document_view.setPlainText(document.content)
        if document.content:
            self.document_stack.setCurrentWidget(self.document_view)
        else:
            self._show_placeholder(EMPTY_DOCUMENT_TEXT)
        self.lines_label.setText(line_count_text(document.lines))
        self.tokens_label.setText(f"· {token_size(document.tokens)}" if document.content else "")
        self._update_times()
        self._render_status()

    def set_origins(
        self,
        workspace_id: str,
        origins: Sequence[LineOrigin],
        titles: Mapping[str, str],
        *,
        ages: Sequence[LineAge] = (),
        stale: Sequence[StaleLine] = (),
    ) -> None:
        """Where each line of the document came from (``MemoryService.blame``), with the titles
        of the conversations behind them, each line's age (``MemoryService.line_ages``) and the
        stale lines (``MemoryService.stale``): hovering a line says where it came from and how
        old it is; the stale lines are counted under the document with a way to review them."""
        if self._workspace is None or workspace_id != self._workspace.id:
            return
        self._origins = list(origins)
        self._titles = dict(titles)
        self._ages = {age.line: age for age in ages}
        self.set_stale(stale)

    def set_stale(self, stale: Sequence[StaleLine]) -> None:
        """Count the stale lines under the document (``"2 lines not said or confirmed for a
        while"`` with Review…); none hides the row."""
        self.stale = list(stale)
        count = len(self.stale)
        self.stale_label.setText(
            f"{plural(count, 'line')} not said or confirmed for a while" if count else ""
        )
        self.stale_label.setVisible(bool(count))
        self.stale_button.setVisible(bool(count))

    def show_references(self, workspace_id: str, check: ReferenceCheck) -> None:
        """Show how many lines name something gone from the workspace (``check``, the latest
        for the workspace shown; another workspace's is ignored), with Review… when any do."""
        if self._workspace is not None and workspace_id != self._workspace.id:
            return
        self._references = check
        summary = gone_summary(check)
        self.gone_label.setText(summary)
        self.gone_label.setVisible(bool(summary))
        self.gone_button.setVisible(bool(check.gone))

    @property
    def references(self) -> ReferenceCheck:
        """The check shown now."""
        return self._references

    def origin_at_line(self, number: int) -> str:
        """What hovering line ``number`` (0-based) says: ``"Line 3: typed by you, v4 · 1 Dec ·
        first said 2026-12-01 · last confirmed 2026-12-01"``, or for a line a refresh wrote
        also why it is there on a second line (``why: you said
        in "Set up CI": "…"``, ``why: no evidence recorded``), or ``""`` for a blank line or
        one whose origin is not known."""
        block = self.document_view.document().findBlockByNumber(number)
        line = block.text() if block.isValid() else ""
        origin = origin_at(self._origins, number, line) if line.strip() else None
        if origin is None:
            return ""
        said = f"Line {number + 1}: {origin_and_why(origin, self._titles)}"
        age = self._ages.get(origin.line)
        if age is not None and age.text == origin.text:
            first, *why = said.split("\n")
            said = "\n".join([f"{first} · {age_words(age)}", *why])
        return said

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A tooltip over the document: the origin of the line under the mouse."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            cursor = self.document_view.cursorForPosition(event.pos())
            said = self.origin_at_line(cursor.blockNumber())
            if said:
                # Wrapped, so a long quote does not make the tip as wide as the screen.
                shown = "\n".join(textwrap.fill(part, TIP_CHARS) for part in said.split("\n"))
                QToolTip.showText(event.globalPos(), shown, self.document_view)
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(watched, event)

    def show_refresh_state(self, state: RefreshState) -> None:
        """Show where the refresh stands: a whole snapshot from the refresh scheduler (queue
        state, last attempt, document time, key). A snapshot of another workspace is ignored."""
        if self._workspace is None or state.workspace_id != self._workspace.id:
            return
        self._due_at = self._due_time(state.state, state.due_in)
        self._running_since = (
            self.clock() - state.running_for
            if state.state == QueueState.RUNNING and state.running_for is not None
            else None
        )
        self._state = state
        self._render_status()

    @property
    def status(self) -> StatusLine:
        """The status line shown now."""
        return self._status

    # --- internals ---------------------------------------------------------------------------
    def _due_time(self, state: str, due_in: float | None) -> float | None:
        """The clock time a pending refresh runs, or ``None``."""
        return self.clock() + due_in if state == QueueState.PENDING and due_in is not None else None

    def _render_status(self) -> None:
        if self._state is None:
            return
        due_in = None if self._due_at is None else self._due_at - self.clock()
        running_for = None if self._running_since is None else self.clock() - self._running_since
        self._status = refresh_status(self._state, due_in=due_in, running_for=running_for)
        # A memory never written says so once (the placeholder), not also "up to date".
        quiet = self._status.kind is StatusKind.UP_TO_DATE and self._never_written()
        self.status_label.setText("" if quiet else self._status.text)
        self.status_label.setToolTip("" if quiet else self._status.text)
        self.status_label.setStyleSheet(text_style(status_colour(self._status.kind)))
        if self._status.action is None:
            self.action_button.hide()
        else:
            text, tooltip = action_words(self._status.action)
            self.action_button.setText(text)
            self.action_button.setToolTip(tooltip)
            self.action_button.show()
        self._update_buttons()
        self._update_tick_timer()

    def _never_written(self) -> bool:
        return self._document is not None and self._document.version == 0

    def _update_buttons(self) -> None:
        has_workspace = self._workspace is not None
        running = self._status.kind is StatusKind.RUNNING
        self.refresh_button.setEnabled(has_workspace and not running)
        self.edit_button.setEnabled(has_workspace)

    def _show_placeholder(self, text: str) -> None:
        """Show ``text`` in place of the document (the empty document view when blank)."""
        self.placeholder_label.setText(text)
        self.document_stack.setCurrentWidget(self.placeholder_label if text else self.document_view)

    def _update_times(self) -> None:
        if self._document is None:
            self.updated_label.clear()
        elif self._document.updated_at is None:
            self.updated_label.clear()  # the placeholder says "No memory yet"
        else:
            when = relative_time(self._document.updated_at, self._now())
            self.updated_label.setText(f"updated {when}")

    def _update_tick_timer(self) -> None:
        if self._workspace is not None and self.isVisible():
            if not self._tick_timer.isActive():
                self._tick_timer.start()
        else:
            self._tick_timer.stop()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._update_tick_timer()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._tick_timer.stop()

    def _on_tick_timer_timeout(self) -> None:
        if self._due_at is not None or self._running_since is not None:
            self._render_status()
        self._update_times()

    def _on_action_button_clicked(self) -> None:
        if self._workspace is None:
            return
        if self._status.action is StatusAction.REVIEW:
            self.review_requested.emit(self._workspace.id)
        elif self._status.action is StatusAction.DIFF:
            self.diff_requested.emit(self._workspace.id)
        elif self._status.action is StatusAction.VIEW:
            self.view_reply_requested.emit(self._workspace.id)
        elif self._status.action is StatusAction.RETRY:
            self.retry_requested.emit(self._workspace.id)
        elif self._status.action is StatusAction.ADD_KEY:
            self.provider_settings_requested.emit()
        elif self._status.action is StatusAction.STOP:
            self.stop_requested.emit(self._workspace.id)

    def _on_gone_button_clicked(self) -> None:
        if self._workspace is not None:
            self.gone_review_requested.emit(self._workspace.id)

    def _on_stale_button_clicked(self) -> None:
        if self._workspace is not None:
            self.stale_review_requested.emit(self._workspace.id)

    def _on_refresh_button_clicked(self) -> None:
        if self._workspace is not None:
            self.refresh_requested.emit(self._workspace.id)

    def _on_edit_button_clicked(self) -> None:
        if self._workspace is not None:
            self.edit_requested.emit(self._workspace.id)
