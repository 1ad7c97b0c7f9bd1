"""Settings › Provider: the API key, base URL, chat and memory models, the memory model's context
window and reply form (with what the automatic form found for the endpoint and model), refresh
debounce, the time limit of a model request, and how commands are confined (choosing "no
sandbox" shows a warning under the field before anything is applied).

A :class:`yak.ui.settings.page.SettingsPage`: ``load()`` fills the fields from what is stored, every
edit emits ``changed``, the page's Apply (and Revert) button is enabled only while ``is_changed()``,
and ``apply()`` stores it. For the Settings dialog's close guard, ``resolve_unsaved(then)`` asks
Apply / Discard / Cancel. Settings go to ``settings.json`` and the key to the OS keyring, both
through the settings service (never the key to the database, the settings file or a log line);
where the key comes from is read on a worker thread, never on the UI thread. A value set by an
environment variable (``ANTHROPIC_API_KEY``, ``YAK_MODEL``, ``YAK_MEMORY_MODEL``,
``YAK_REFRESH_IDLE_SECONDS``, ``YAK_TIMEOUT_SECONDS``, ``YAK_COMMAND_SANDBOX``,
``YAK_MEMORY_CONTEXT_WINDOW``, ``YAK_MEMORY_FORM``) wins over the
stored one, so its field is read-only and says so; saving never copies an environment value into
the settings file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QMessageBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from yak.agent.sandbox import NONE, UNCONFINED_WARNING
from yak.chat.service import ChatService
from yak.config import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    DEFAULT_CHAT_MODEL,
    DEFAULT_MEMORY_MODEL,
    ENV_OVERRIDES,
    MAX_IDLE_S,
    MAX_TIMEOUT_S,
    MIN_IDLE_S,
    MIN_TIMEOUT_S,
)
from yak.domain import RewriteForm
from yak.errors import MissingApiKey
from yak.presenters import NO_KEY_HERE, Colour, connection_words, found_form_words
from yak.settings import SettingsService
from yak.ui.colours import text_style
from yak.ui.layout import STRETCH, create_button, create_label, hbox, vbox
from yak.ui.settings.page import SettingsPage
from yak.ui.settings.provider_fields import (
    MEMORY_FORM_CHOICES,
    SANDBOX_CHOICES,
    UNKNOWN_SOURCE,
    choice_combo,
    context_window_spin,
    key_field_words,
    line_field,
    seconds_spin,
)
from yak.ui.tasks import FAILED, TaskGroup, settled

log = logging.getLogger(__name__)


class ProviderPage(SettingsPage):
    """Settings › Provider.

    Args:
        settings: the settings service (``settings.json``, the environment, the API key).
        chat: the chat service ("Test connection").

    Signals:
        changed(): a field was edited (or a change was applied or reverted).
        settings_applied(object): the new effective ``Settings`` after ``apply()``.
        key_saved(): an API key was stored in (or removed from) the keyring.
        test_finished(str): "Test connection" ended with this sentence.
    """

    settings_applied = Signal(object)
    key_saved = Signal()
    test_finished = Signal(str)

    title = "Provider"

    def __init__(
        self,
        *,
        settings: SettingsService,
        chat: ChatService,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings
        self.chat = chat
        self.tasks = TaskGroup(self)
        self._key_source: str | None = UNKNOWN_SOURCE
        self._keyring_usable = True  # until the settings service says otherwise
        self._loaded: dict[str, object] = {}
        self._loading = False
        self._pending_key_save = False
        self._testing = False
        self._setup_ui()
        self.load()

    def _setup_ui(self) -> None:
        self.setObjectName("provider_page")
        form = QFormLayout()
        form.addRow("API key:", self._setup_key_box())
        self.base_url_edit = self._setup_field(
            "base_url", tooltip="For Anthropic-compatible servers; leave empty for the default"
        )
        form.addRow("Base URL:", self.base_url_edit)
        self.chat_model_edit = self._setup_field("chat_model")
        form.addRow("Chat model:", self.chat_model_edit)
        self.memory_model_edit = self._setup_field(
            "memory_model",
            tooltip="Rewrites the memory document after conversations; a small fast model is "
            "enough",
        )
        form.addRow("Memory model:", self.memory_model_edit)
        self.context_window_spin = context_window_spin(self, edited=self._on_field_edited)
        form.addRow("Memory model context window:", self.context_window_spin)
        form.addRow("Memory reply form:", self._setup_memory_form_box())
        self.debounce_spin = seconds_spin(
            self,
            "debounce",
            edited=self._on_field_edited,
            low=MIN_IDLE_S,
            high=MAX_IDLE_S,
            step=10,
            tooltip="How long a conversation must be quiet before the memory document is "
            "rewritten (each new message restarts the wait; a long conversation is folded in "
            "every quarter of an hour at the latest)",
        )
        form.addRow("Memory refresh after quiet:", self.debounce_spin)
        self.timeout_spin = seconds_spin(
            self,
            "request_timeout",
            edited=self._on_field_edited,
            low=MIN_TIMEOUT_S,
            high=MAX_TIMEOUT_S,
            step=10,
            tooltip="How long a request to the model may take to start answering, retries "
            "included, and the longest pause inside a reply",
        )
        form.addRow("Request time limit:", self.timeout_spin)
        self.sandbox_combo = choice_combo(
            self,
            "command_sandbox",
            SANDBOX_CHOICES,
            tooltip="Where commands the agent runs (after you approve them) may write: only "
            "the workspace and a temporary folder, unless unconfined",
            edited=self._on_field_edited,
        )
        self.sandbox_warning = create_label(
            self, object_name="sandbox_warning", word_wrap=True, plain_text=True
        )
        self.sandbox_warning.setText(f"Warning: {UNCONFINED_WARNING}")
        self.sandbox_warning.setStyleSheet(text_style(Colour.ALARM))
        self.sandbox_warning.setVisible(False)
        form.addRow("Commands:", self.sandbox_combo)
        form.addRow("", self.sandbox_warning)

        self.env_note = create_label(self, word_wrap=True, plain_text=True)
        self.test_button = create_button(
            "Test connection", self, auto_default=False, clicked=self.test_connection
        )
        self.status_label = create_label(
            self, object_name="provider_status", word_wrap=True, plain_text=True, selectable=True
        )
        vbox(
            form,
            self.env_note,
            hbox((self.test_button, 0, Qt.AlignmentFlag.AlignTop), (self.status_label, 1)),
            STRETCH,
            self._setup_buttons(),
            parent=self,
        )
        self.changed.connect(self._update_buttons)
        self._tooltips = {name: w.toolTip() for name, w in self._setting_widgets().items()}

    def _setup_key_box(self) -> QVBoxLayout:
        """The key field with Show and Remove stored key, and the note under it."""
        self.key_edit = self._setup_field("api_key")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setClearButtonEnabled(True)
        self.show_key_action = QAction("Show", self)
        self.show_key_action.setCheckable(True)
        self.show_key_action.setToolTip("Show the key as typed")
        self.show_key_action.toggled.connect(self._on_show_key_toggled)
        self.show_key_button = QToolButton(self)
        self.show_key_button.setDefaultAction(self.show_key_action)
        self.key_note = create_label(self, word_wrap=True, plain_text=True)
        self.session_only_check = QCheckBox("Use for this session only (not saved)", self)
        self.session_only_check.setObjectName("session_only")
        self.session_only_check.setToolTip(
            "Keep the key in memory until Yak quits, without writing it anywhere (for a "
            "system with no usable keyring)"
        )
        self.remove_key_button = create_button(
            "Remove stored key",
            self,
            tooltip="Delete the key from the system keyring",
            auto_default=False,
            clicked=self.remove_key,
        )
        return vbox(
            hbox((self.key_edit, 1), self.show_key_button, self.remove_key_button),
            self.session_only_check,
            self.key_note,
            margins=0,
        )

    def _setup_field(self, object_name: str, *, tooltip: str = "") -> QLineEdit:
        return line_field(self, object_name, tooltip=tooltip, edited=self._on_field_edited)

    def _setup_memory_form_box(self) -> QVBoxLayout:
        """The memory reply form's combo box, and under it what the automatic form found for
        the applied endpoint and memory model (read by :meth:`read_memory_form`)."""
        self.memory_form_combo = choice_combo(
            self,
            "memory_form",
            MEMORY_FORM_CHOICES,
            tooltip="How the memory model answers a refresh: a forced tool call listing the "
            "facts, line edits against the numbered document, or the whole document. Automatic "
            "asks for the tool unless this endpoint and model rejected it or answered in text, "
            "then edits",
            edited=self._on_field_edited,
        )
        self.memory_form_note = create_label(
            self, object_name="memory_form_found", word_wrap=True, plain_text=True
        )
        return vbox(self.memory_form_combo, self.memory_form_note, margins=0)

    def _setup_buttons(self) -> QDialogButtonBox:
        """Apply and Revert, enabled only while the page holds changes."""
        buttons = QDialogButtonBox(self)
        self.apply_button = buttons.addButton(QDialogButtonBox.StandardButton.Apply)
        self.revert_button = buttons.addButton("Revert", QDialogButtonBox.ButtonRole.ResetRole)
        self.apply_button.setObjectName("provider_apply")
        self.apply_button.setAutoDefault(False)
        self.revert_button.setAutoDefault(False)
        self.revert_button.setToolTip("Discard the edits on this page")
        self.apply_button.clicked.connect(self.apply)
        self.revert_button.clicked.connect(self.load)
        return buttons

    # -- the page contract ---------------------------------------------------------------------

    def load(self) -> None:
        """Fill the fields from the settings file and the environment; where the key is comes
        when the settings service has read it (see :meth:`read_key_state`)."""
        self._loading = True
        env = self.settings.environment
        try:
            effective = self.settings.reload()
            self.chat_model_edit.setText(effective.chat_model)
            self.memory_model_edit.setText(effective.memory_model)
            self.context_window_spin.setValue(effective.memory_context_window)
            self.memory_form_combo.setCurrentIndex(
                max(self.memory_form_combo.findData(effective.memory_form), 0)
            )
            self.debounce_spin.setValue(effective.refresh_idle_s)
            self.timeout_spin.setValue(effective.request_timeout_s)
            self.sandbox_combo.setCurrentIndex(
                max(self.sandbox_combo.findData(effective.command_sandbox), 0)
            )
            self.base_url_edit.setText(effective.base_url or "")
            self.base_url_edit.setPlaceholderText(
                f"{env[BASE_URL_ENV]} (from {BASE_URL_ENV})"
                if env.get(BASE_URL_ENV)
                else f"{DEFAULT_BASE_URL} (default)"
            )
            self.key_edit.clear()
            self._update_core_state()
            overridden: list[str] = []
            for name, widget in self._setting_widgets().items():
                variable = ENV_OVERRIDES.get(name)
                from_env = bool(variable and env.get(variable))
                widget.setEnabled(not from_env)
                widget.setToolTip(
                    f"Set by the {variable} environment variable"
                    if from_env
                    else self._tooltips[name]
                )
                if from_env and variable is not None:
                    overridden.append(variable)
            self.env_note.setText(
                f"Set by the environment (edit it there): {', '.join(overridden)}."
                if overridden
                else ""
            )
            self.env_note.setVisible(bool(overridden))
            self._loaded = self._values()
        finally:
            self._loading = False
        self._update_test_button()
        self.changed.emit()

    def is_changed(self) -> bool:
        """Whether a field differs from what ``load()`` found (Apply is enabled only then)."""
        return self._values() != self._loaded

    def has_unsaved_changes(self) -> bool:
        """The Settings dialog's guard: edits not applied yet."""
        return self.is_changed()

    def resolve_unsaved(self, then: Callable[[], object]) -> QMessageBox:
        """Ask Apply / Discard / Cancel about unapplied edits (without blocking the loop); call
        ``then()`` once they are applied or discarded, not on Cancel.

        Returns:
            The open question box.
        """
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Provider settings",
            "The Provider settings have changes that are not applied yet.",
            QMessageBox.StandardButton.Apply
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self,
        )
        box.setObjectName("provider_unsaved")
        box.setDefaultButton(QMessageBox.StandardButton.Apply)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def on_finished(_result: int) -> None:
            role = box.standardButton(box.clickedButton())
            if role == QMessageBox.StandardButton.Apply:
                self.apply()
            elif role == QMessageBox.StandardButton.Discard:
                self.load()
            else:
                return
            then()

        box.finished.connect(on_finished)
        box.open()
        return box

    def apply(self) -> None:
        """Store the changed settings; a newly typed key is saved to the keyring in the
        background (the result appears under the field and ``key_saved`` is emitted).

        Only edited fields are written; values coming from environment variables are never
        copied into the settings file.
        """
        values = self._values()
        changes = {
            name: value
            for name, value in values.items()
            if name != "api_key" and value != self._loaded.get(name)
        }
        if changes:
            stored = self.settings.stored()  # the file alone, without the environment
            effective = self.settings.save(stored.with_changes(**changes))
            log.info("provider settings changed: %s", ", ".join(sorted(changes)))
            self.settings_applied.emit(effective)
            self._reread_memory_form()  # the endpoint or the memory model may have changed
        key = str(values["api_key"])
        self._loaded = {**values, "api_key": ""}
        if key:
            self._loaded["api_key"] = key  # stays "applied" while the keyring write runs
            self._pending_key_save = True
            self.tasks.spawn(
                self._save_key(key, session_only=self.session_only_check.isChecked()),
                name="save-api-key",
            )
        self._update_test_button()
        self.changed.emit()

    # -- actions -------------------------------------------------------------------------------

    def test_connection(self) -> None:
        """ "Test connection": a tiny request to the chat model and one to the memory model with
        the applied settings; shows one line per model."""
        if self._testing or self.is_changed():
            return
        self._testing = True
        self._update_test_button()
        self.status_label.setText("Testing the connection…")
        self.tasks.spawn(self._run_test(), name="test-connection")

    def remove_key(self) -> None:
        """Forget a session-only key and delete the stored key from the keyring (in the
        background); the chat then explains how to add one again."""
        self.remove_key_button.setEnabled(False)
        self.tasks.spawn(self._remove_key(), name="remove-api-key")

    async def read_key_state(self) -> None:
        """Ask the settings service where the key is and whether a keyring can store one (on
        a worker thread) and show it."""
        source = await self.settings.key_source()
        self._keyring_usable = await self.settings.can_store_key()
        self._show_key_state(source)

    async def read_memory_form(self) -> None:
        """Ask the settings service what the automatic reply form found for the applied
        endpoint and memory model (on a worker thread) and show it under the combo box."""
        self._show_memory_form(await self.settings.memory_form_found())

    async def _remove_key(self) -> None:
        removed = await self.tasks.attempt(
            self.settings.delete_api_key(), on_error=self.status_label.setText
        )
        if removed is not FAILED:
            self.status_label.setText(
                "The session key was forgotten."
                if self._key_source == "session"
                else "The API key was removed from the system keyring."
            )
            self.key_saved.emit()
        await settled(self._reread_key_state())

    async def _run_test(self) -> None:
        try:
            message = await self.tasks.attempt(self._test_words(), on_error=self._show_test_result)
        finally:
            self._testing = False
            self._update_test_button()
        if message is not FAILED:
            self._show_test_result(message)

    async def _test_words(self) -> str:
        try:
            return connection_words(await self.chat.test_connection())
        except MissingApiKey:  # its own sentence sends the user here, where they already are
            return NO_KEY_HERE

    def _show_test_result(self, message: str) -> None:
        self._testing = False
        self._update_test_button()
        self.status_label.setText(message)
        self.test_finished.emit(message)

    def _key_not_saved(self, text: str) -> None:
        self.status_label.setText(text)
        self._loaded["api_key"] = ""
        self._pending_key_save = False
        self.changed.emit()

    async def _save_key(self, key: str, *, session_only: bool) -> None:
        saved = await self.tasks.attempt(
            self.settings.use_session_key(key) if session_only else self.settings.set_api_key(key),
            on_error=self._key_not_saved,
        )
        if saved is FAILED:
            return
        self._pending_key_save = False
        self._loading = True
        try:
            self.key_edit.clear()
        finally:
            self._loading = False
        self._loaded["api_key"] = ""
        await settled(self._reread_key_state())
        self.status_label.setText(
            "The API key is used for this session only; Yak forgets it when it quits."
            if session_only
            else "The API key was saved in the system keyring."
        )
        self._update_test_button()
        self.key_saved.emit()
        self.changed.emit()

    # -- internals -----------------------------------------------------------------------------

    def _setting_widgets(self) -> dict[str, QWidget]:
        return {
            "chat_model": self.chat_model_edit,
            "memory_model": self.memory_model_edit,
            "memory_context_window": self.context_window_spin,
            "memory_form": self.memory_form_combo,
            "refresh_idle_s": self.debounce_spin,
            "base_url": self.base_url_edit,
            "request_timeout_s": self.timeout_spin,
            "command_sandbox": self.sandbox_combo,
        }

    def _values(self) -> dict[str, object]:
        return {
            "api_key": self.key_edit.text().strip(),
            "base_url": self.base_url_edit.text().strip() or None,
            "chat_model": self.chat_model_edit.text().strip() or DEFAULT_CHAT_MODEL,
            "memory_model": self.memory_model_edit.text().strip() or DEFAULT_MEMORY_MODEL,
            "memory_context_window": int(self.context_window_spin.value()),
            "memory_form": str(self.memory_form_combo.currentData()),
            "refresh_idle_s": float(self.debounce_spin.value()),
            "request_timeout_s": float(self.timeout_spin.value()),
            "command_sandbox": str(self.sandbox_combo.currentData()),
        }

    def _update_core_state(self) -> None:
        """Show what is known of the key now, and read it and what the automatic reply form
        found again when the event loop runs."""
        self._show_key_state(self._key_source)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # built before the loop runs: read when the page is shown
            return
        self._reread_key_state()
        self._reread_memory_form()

    def _reread_key_state(self) -> asyncio.Task[None]:
        """Read where the key is again; a read still running is cancelled (the newest wins)."""
        return self.tasks.replace("provider-key-state", self.read_key_state())

    def _reread_memory_form(self) -> None:
        """Read what the automatic reply form found again (the newest read wins), once the
        event loop runs; before that the page reads it when shown."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        self.tasks.replace("provider-memory-form", self.read_memory_form())

    def _show_memory_form(self, found: RewriteForm | None) -> None:
        self.memory_form_note.setText(found_form_words(found))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._update_core_state()

    def _show_key_state(self, source: str | None) -> None:
        """``source`` is where the key is: ``"environment"``, ``"session"`` (this run only),
        ``"keyring"``, ``None`` (no key) or unknown (not read yet: the field is usable, and
        nothing is said about it)."""
        self._key_source = source
        from_env = source == "environment"
        stored = source in ("keyring", "session")
        self.key_edit.setEnabled(not from_env)
        self.show_key_action.setEnabled(not from_env)
        self.session_only_check.setEnabled(not from_env)
        self.remove_key_button.setVisible(stored)
        self.remove_key_button.setEnabled(stored)
        self.remove_key_button.setText("Forget key" if source == "session" else "Remove stored key")
        placeholder, note = key_field_words(source, keyring_usable=self._keyring_usable)
        self.key_edit.setPlaceholderText(placeholder)
        self.key_note.setText(note)

    def _update_test_button(self) -> None:
        pending = self.is_changed() or self._pending_key_save
        self.test_button.setEnabled(not self._testing and not pending)
        self.test_button.setToolTip(
            "Apply your changes first, then test them"
            if pending
            else "Send a tiny request with the applied settings"
        )

    def _update_buttons(self) -> None:
        self.sandbox_warning.setVisible(self.sandbox_combo.currentData() == NONE)
        changed = self.is_changed()
        self.apply_button.setEnabled(changed)
        self.revert_button.setEnabled(changed)

    def _on_show_key_toggled(self, shown: bool) -> None:
        self.key_edit.setEchoMode(
            QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        )
        self.show_key_action.setText("Hide" if shown else "Show")

    def _on_field_edited(self, *_args: object) -> None:
        if self._loading:
            return
        self._update_test_button()
        self.changed.emit()
