"""The transcript: the user's prompts, the assistant's Markdown, compact tool calls.

The rows are the widgets of :mod:`yak.ui.chat.blocks`; the Markdown is rendered by
:mod:`yak.ui.chat.render`.

Streaming text never freezes the window: deltas are appended to a buffer and the open assistant
block is re-rendered by a single-shot ``QTimer`` at most every ``RENDER_INTERVAL_MS`` (50 ms), not
once per delta. A render costs time proportional to the text rendered, so two things bound it:
once the open block passes ``SEGMENT_CHARS`` its settled part (up to the last paragraph break
outside a code fence) is rendered a final time and the reply continues in a new block, so one
render covers about a paragraph or two however long the reply grows (re-rendering a whole
60,000-character reply took over 100 ms; a render must stay well under a 16 ms frame even on a
busy machine); and the interval grows to four times the last render's cost
(capped at ``MAX_RENDER_INTERVAL_MS``), so rendering takes at most about a fifth of the event
loop. The view stays scrolled to the bottom while text arrives unless the user has scrolled up;
scrolling back down re-attaches it.

While the model has been asked and has not answered yet, the last row is "thinking… N s"
(:meth:`TranscriptView.show_thinking`); the first text or tool call replaces it. A reply that was
cut off keeps its text, styled as incomplete, followed by a note saying why
(:meth:`TranscriptView.mark_incomplete`; a stored conversation shows the same from the mark the
agent stored, ``yak.agent.types.incomplete_mark``). A question that got no reply at all is
followed by "— no reply: <why>" (:meth:`TranscriptView.mark_no_reply`, also read back from the
stored ``yak.agent.types.no_reply_mark``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from yak.agent.types import incomplete_cause, no_reply_reason
from yak.domain import ChatMessage
from yak.limits import DISPLAY_MESSAGE_CHARS
from yak.text import tool_target
from yak.ui.chat.blocks import (
    IncompleteNote,
    LongMessageBar,
    MessageBlock,
    NoReplyNote,
    NoteLabel,
    ThinkingRow,
    ToolCallBlock,
)
from yak.ui.chat.render import (
    STOPPED_MARK,
    result_summary,
    settled_length,
    tool_result_text,
)

log = logging.getLogger(__name__)

RENDER_INTERVAL_MS = 50
MAX_RENDER_INTERVAL_MS = 500
# A streaming block longer than this (characters) is split at a paragraph break (see flush()).
SEGMENT_CHARS = 1000
# Near enough to the bottom (pixels) to count as "at the bottom" when the user scrolls back.
_BOTTOM_SLACK_PX = 8


class TranscriptView(QScrollArea):
    """The messages of one session, top to bottom, with the streaming reply at the end.

    Driven by calls: ``show_messages`` for a stored session, then during a turn
    ``add_user_message``, ``show_thinking`` while the model is asked, ``append_text``
    (buffered), ``start_tool_call`` / ``finish_tool_call``, and ``end_turn`` (after a cut reply,
    ``mark_incomplete``).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stream_block: MessageBlock | None = None
        self._stream_text = ""
        self._stream_dirty = False
        self._tool_blocks: dict[str, ToolCallBlock] = {}
        self._thinking: ThinkingRow | None = None
        self._follow_bottom = True
        self.render_count = 0  # renders of streaming text (for benchmarks)
        self._render_timer = QTimer(self)
        self._render_timer.setSingleShot(True)
        self._render_timer.setInterval(RENDER_INTERVAL_MS)
        self._render_timer.timeout.connect(self.flush)
        self._setup_ui()

    def _setup_ui(self) -> None:
        self.setObjectName("transcript")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget(self)
        body.setBackgroundRole(QPalette.ColorRole.Base)
        body.setAutoFillBackground(True)
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(8, 8, 8, 8)
        self._layout.setSpacing(6)
        # Index 0: what an empty transcript says; then the blocks; last, a stretch.
        self.placeholder = QLabel(body)
        self.placeholder.setObjectName("transcript_placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setTextFormat(Qt.TextFormat.PlainText)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.placeholder.setContentsMargins(24, 48, 24, 0)
        self._layout.addWidget(self.placeholder)
        self._layout.addStretch(1)
        self.setWidget(body)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scroll_value_changed)
        bar.rangeChanged.connect(self._on_scroll_range_changed)

    # -- reading -------------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        """An assistant block is open and receiving text."""
        return self._stream_block is not None

    @property
    def following_bottom(self) -> bool:
        """New text scrolls the view down (the user has not scrolled up)."""
        return self._follow_bottom

    def items(self) -> list[QWidget]:
        """The transcript's blocks, top to bottom."""
        found: list[QWidget] = []
        for index in range(1, self._layout.count() - 1):
            item = self._layout.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                found.append(widget)
        return found

    def set_placeholder(self, text: str) -> None:
        """What the transcript says while it has no messages (not part of ``plain_text()``)."""
        self.placeholder.setText(text)
        self.placeholder.setVisible(not self.items() and bool(text))

    @property
    def thinking(self) -> ThinkingRow | None:
        """The "thinking… N s" row, while it is shown."""
        return self._thinking

    def tool_call(self, tool_use_id: str) -> ToolCallBlock | None:
        """The block of a tool call shown in this transcript, if any."""
        return self._tool_blocks.get(tool_use_id)

    def plain_text(self) -> str:
        """Everything the transcript shows as text, blocks separated by blank lines.

        Buffered streaming text that has not been rendered yet is not included: this is what the
        user sees.
        """
        parts: list[str] = []
        for item in self.items():
            if isinstance(item, MessageBlock):
                parts.append(item.toPlainText())
            elif isinstance(item, ToolCallBlock):
                parts.append(item.summary_text())
            elif isinstance(item, LongMessageBar):
                parts.append(item.label.text())
            elif isinstance(item, QLabel):
                parts.append(item.text())
        return "\n\n".join(parts)

    # -- driving -------------------------------------------------------------------------------

    def clear(self) -> None:
        """Remove every block (e.g. before showing another session)."""
        self._render_timer.stop()
        self.hide_thinking()
        self._stream_block = None
        self._stream_text = ""
        self._stream_dirty = False
        self._tool_blocks.clear()
        while self._layout.count() > 2:
            item = self._layout.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self._follow_bottom = True
        self.placeholder.setVisible(bool(self.placeholder.text()))

    def show_messages(self, messages: Sequence[ChatMessage]) -> None:
        """Show a stored session: prompts, replies, and each tool call with its result.

        Args:
            messages: the session's messages, oldest first.
        """
        self.clear()
        results = {
            block.get("tool_use_id"): block
            for message in messages
            for block in message.content
            if block.get("type") == "tool_result"
        }
        for message in messages:
            for block in message.content:
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    cause = incomplete_cause(block["text"]) if message.role == "assistant" else None
                    reason = no_reply_reason(block["text"]) if message.role == "assistant" else None
                    if message.role == "assistant" and block["text"] == STOPPED_MARK:
                        self.add_note("Stopped.")
                    elif reason is not None:
                        self.mark_no_reply(reason)
                    elif cause is not None:
                        self.mark_incomplete(cause)
                    elif message.role == "user":
                        self.add_user_message(block["text"])
                    else:
                        self._add_message("assistant", block["text"])
                elif kind == "tool_use":
                    tool_block = self.start_tool_call(
                        block.get("id", ""),
                        block.get("name", "tool"),
                        tool_target(block.get("input")),
                    )
                    result = results.get(block.get("id"))
                    if result is None:
                        tool_block.set_outcome(ok=False, summary="no result recorded", output="")
                    else:
                        output = tool_result_text(result)
                        failed = bool(result.get("is_error"))
                        stored_summary = result.get("summary")
                        tool_block.set_outcome(
                            ok=not failed,
                            summary=stored_summary
                            if isinstance(stored_summary, str) and stored_summary
                            else result_summary(output) or ("failed" if failed else "done"),
                            output=output,
                        )
        self._scroll_to_bottom()

    def add_user_message(self, text: str) -> MessageBlock:
        """Append the user's prompt (shown as typed, not as Markdown)."""
        self.close_stream()
        return self._add_message("user", text)

    def append_text(self, delta: str) -> None:
        """Add streamed assistant text; it is rendered within ``RENDER_INTERVAL_MS``.

        Opens a new assistant block after a prompt or a tool call.
        """
        if not delta:
            return
        if self._stream_block is None:
            self.hide_thinking()  # the reply takes its place
            self._stream_block = MessageBlock("assistant")
            self._stream_text = ""
            self._add(self._stream_block)
        self._stream_text += delta
        self._stream_dirty = True
        if not self._render_timer.isActive():
            self._render_timer.start()

    def flush(self) -> None:
        """Render buffered streaming text now (the render timer's slot).

        When the open block's text passes ``SEGMENT_CHARS``, the part up to the last paragraph
        break outside a code fence is rendered one final time and left as it is; the rest goes on
        in a new block. A render then costs at most a few thousand characters, however long the
        reply grows.
        """
        self._render_timer.stop()
        if self._stream_block is None or not self._stream_dirty:
            return
        started = time.perf_counter()
        split = settled_length(self._stream_text) if len(self._stream_text) > SEGMENT_CHARS else 0
        if split:
            self._stream_block.set_markdown(self._stream_text[:split])
            self._stream_text = self._stream_text[split:]
            self._stream_block = MessageBlock("assistant")
            self._add(self._stream_block)
        self._stream_block.set_markdown(self._stream_text)
        self._stream_dirty = False
        self.render_count += 1
        cost_ms = (time.perf_counter() - started) * 1000
        interval = min(max(RENDER_INTERVAL_MS, math.ceil(cost_ms * 4)), MAX_RENDER_INTERVAL_MS)
        self._render_timer.setInterval(interval)

    def close_stream(self) -> None:
        """Render what was buffered and close the open assistant block, if any."""
        self.flush()
        self._stream_block = None
        self._stream_text = ""
        self._render_timer.setInterval(RENDER_INTERVAL_MS)

    def start_tool_call(self, tool_use_id: str, tool: str, target: str) -> ToolCallBlock:
        """Append a running tool call (closes the open assistant text block)."""
        self.close_stream()
        self.hide_thinking()
        block = ToolCallBlock(tool_use_id=tool_use_id, tool=tool, target=target)
        block.expanded_changed.connect(self._on_tool_call_expanded_changed)
        self._tool_blocks[tool_use_id] = block
        self._add(block)
        return block

    def finish_tool_call(
        self, tool_use_id: str, *, tool: str, target: str, ok: bool, summary: str, output: str
    ) -> ToolCallBlock:
        """Record a tool call's outcome (appending it if its start was not shown)."""
        block = self._tool_blocks.get(tool_use_id)
        if block is None:
            block = self.start_tool_call(tool_use_id, tool, target)
        block.set_outcome(ok=ok, summary=summary, output=output)
        return block

    def add_note(self, text: str) -> NoteLabel:
        """Append a short italic line (closes the open assistant text block)."""
        self.close_stream()
        self.hide_thinking()
        note = NoteLabel(text)
        self._add(note)
        return note

    def end_turn(self, note: str | None = None) -> None:
        """Finish the turn: render everything buffered, close the block, drop the thinking
        row, add ``note`` if any."""
        self.close_stream()
        self.hide_thinking()
        if note:
            self.add_note(note)

    def show_thinking(self) -> ThinkingRow:
        """Show "thinking… N s" as the last row, counting from now, until the first text, a
        tool call or the end of the turn replaces it (a row already shown stays as it is)."""
        self.close_stream()
        if self._thinking is None:
            self._thinking = ThinkingRow()
            self._add(self._thinking)
        return self._thinking

    def hide_thinking(self) -> None:
        """Remove the thinking row, if shown."""
        row, self._thinking = self._thinking, None
        if row is not None:
            row.stop()
            self._layout.removeWidget(row)
            row.deleteLater()

    def mark_incomplete(self, cause: str) -> IncompleteNote:
        """The reply just shown was cut off: style its text blocks (those after the last prompt,
        tool call or note) as incomplete and append the note saying why.

        Args:
            cause: why it stopped, a short clause ("the connection closed").
        """
        self.close_stream()
        self.hide_thinking()
        for item in reversed(self.items()):
            if not (isinstance(item, MessageBlock) and item.role == "assistant"):
                break
            item.set_incomplete()
        note = IncompleteNote(cause)
        self._add(note)
        return note

    def mark_no_reply(self, reason: str) -> NoReplyNote:
        """The question just shown got no reply: append the note saying why.

        Args:
            reason: the error sentence.
        """
        self.close_stream()
        self.hide_thinking()
        note = NoReplyNote(reason)
        self._add(note)
        return note

    # -- internals -----------------------------------------------------------------------------

    def _add_message(self, role: str, text: str) -> MessageBlock:
        """Append a whole message: rendered at once up to ``DISPLAY_MESSAGE_CHARS``, a longer
        one in parts under a :class:`LongMessageBar`, so opening it never freezes the window."""
        if len(text) <= DISPLAY_MESSAGE_CHARS:
            if role == "user":
                block = MessageBlock("user")
                block.setPlainText(text)
            else:
                block = self._new_block(role, text)
            self._add(block)
            return block
        block = MessageBlock(role)
        bar = LongMessageBar(block, text)
        self._add(block)
        self._add(bar)
        return block

    def _new_block(self, role: str, text: str) -> MessageBlock:
        block = MessageBlock(role)
        block.set_markdown(text)
        return block

    def _add(self, widget: QWidget) -> None:
        """Append ``widget`` (before the thinking row, which stays last while shown)."""
        self.placeholder.setVisible(False)
        index = self._layout.count() - 1
        if self._thinking is not None and widget is not self._thinking:
            index = self._layout.indexOf(self._thinking)
        self._layout.insertWidget(index, widget)

    def _scroll_to_bottom(self) -> None:
        self._follow_bottom = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_scroll_value_changed(self, value: int) -> None:
        self._follow_bottom = value >= self.verticalScrollBar().maximum() - _BOTTOM_SLACK_PX

    def _on_tool_call_expanded_changed(self, expanded: bool) -> None:
        # The user opened a row to read it: its output appears under it, the view stays where
        # it is (following the bottom would scroll the row away); back at the bottom it
        # follows again.
        if expanded:
            self._follow_bottom = False

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow_bottom:
            self.verticalScrollBar().setValue(maximum)
