"""The settings service: ``settings.json``, the environment overrides and the API key.

The settings in effect are, from weakest to strongest: the defaults, ``settings.json``, the
environment (``yak.config.ENV_OVERRIDES``), and this process's overrides (:meth:`override`: a
command's flags such as ``yak ask --model``).

One home for both (see ``docs/architecture.md``, "Layers"): every front end reads the current
settings here, and the key's presence is read from the key store on a worker thread (an OS
keyring can block) and cached, so a window never waits on it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yak.aio import Offload, in_daemon_thread, to_thread
from yak.config import Settings, clamp, endpoint_url, load_settings, save_settings

if TYPE_CHECKING:  # a type only: the ports' dataclasses cost a reading command's start
    from yak.domain import RewriteForm
    from yak.ports import EndpointForms, KeyStore

log = logging.getLogger(__name__)


class SettingsService:
    """The user's settings and the API key.

    Args:
        data_dir: where ``settings.json`` lives; ``None`` keeps settings in memory only (an
            in-memory core for tests and benchmarks).
        key_store: the key store (environment, then the OS keyring).
        env: the environment to read overrides from (default ``os.environ``).
        offload: runs each key store call (``yak.aio``): on a worker thread, or in place for a
            command that only reads.
        endpoint_forms: the rewrite form remembered per memory endpoint and model (the
            refresher's own, so a page says what the next refresh will find); ``None``: none.
    """

    def __init__(
        self,
        data_dir: Path | None,
        *,
        key_store: KeyStore,
        env: Mapping[str, str] | None = None,
        offload: Offload = to_thread,
        endpoint_forms: EndpointForms | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._offload = offload
        # Reading the key loads the OS keyring the first time (a second or more, not
        # interruptible, and after the SDK's import: yak.llm.sdk.import_lock). A read is safe to
        # abandon, so it runs on a daemon thread that quitting does not wait for.
        self._read_key: Offload = in_daemon_thread if offload is to_thread else offload
        self._endpoint_forms = endpoint_forms
        self._key_store = key_store
        self._env = env
        self._settings: Settings | None = None
        self._overrides: dict[str, Any] = {}
        self._key_available: bool | None = None
        self._key_listeners: list[Callable[[bool], None]] = []

    # --- settings -------------------------------------------------------------------------
    def current(self) -> Settings:
        """The settings now: ``settings.json`` with the environment and :meth:`override`'s
        values applied (read once, then kept until :meth:`save` or :meth:`reload`)."""
        if self._settings is None:
            if self.data_dir is None:
                loaded = Settings()
            else:
                loaded = load_settings(self.data_dir, self._env)
            self._settings = clamp(replace(loaded, **self._overrides))
        return self._settings

    def override(self, **fields: Any) -> Settings:
        """Use these values (``Settings`` field names) in this process over the environment and
        ``settings.json``, never saved: a command's flags (``yak ask --model M``). Returns the
        settings now in effect.

        Raises:
            TypeError: a name that is not a ``Settings`` field.
        """
        replace(Settings(), **fields)  # an unknown field fails here, not at the next read
        self._overrides.update(fields)
        return self.reload()

    def reload(self) -> Settings:
        """Read ``settings.json`` and the environment again."""
        self._settings = None
        return self.current()

    def stored(self) -> Settings:
        """What ``settings.json`` holds, without the environment's overrides (a settings page
        writes its changes on top of these, so an environment value is never copied into the
        file)."""
        if self.data_dir is None:
            return self.current()
        return load_settings(self.data_dir, {})

    @property
    def environment(self) -> Mapping[str, str]:
        """The environment the overrides are read from (``os.environ`` unless one was given):
        a settings page says which fields it sets."""
        return os.environ if self._env is None else self._env

    def save(self, settings: Settings) -> Settings:
        """Write ``settings.json`` (never the key) and return the settings now in effect
        (the environment still wins over the file).

        Raises:
            OSError: the file cannot be written.
        """
        if self.data_dir is None:
            self._settings = clamp(replace(settings, **self._overrides))
            return self._settings
        save_settings(self.data_dir, settings)
        return self.reload()

    async def memory_form_found(self) -> RewriteForm | None:
        """The rewrite form the automatic memory reply form found for the current endpoint and
        memory model ("The rewrite forms" in docs/refresh.md), read on a worker thread:
        ``TOOL`` (it answered with the tool), ``EDITS`` (it rejected tools or answered in
        text), or ``None`` (no refresh has asked it yet). The endpoint is the base URL setting,
        else ``ANTHROPIC_BASE_URL`` in the process's environment, as the model client reads
        it."""
        if self._endpoint_forms is None:
            return None
        current = self.current()
        base_url = endpoint_url(current.base_url, os.environ)
        return await self._offload(self._endpoint_forms.remembered, base_url, current.memory_model)

    # --- the API key ----------------------------------------------------------------------
    @property
    def key_available(self) -> bool | None:
        """Whether a key was available at the last check (``None``: not checked yet)."""
        return self._key_available

    def on_key_checked(self, callback: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``callback(available)`` after every key check; returns an unsubscribe."""
        self._key_listeners.append(callback)
        return lambda: self._key_listeners.remove(callback)

    async def check_key(self) -> bool:
        """Whether a key is available now, read on a worker thread; the answer is cached in
        :attr:`key_available` and reported to :meth:`on_key_checked` listeners."""
        available = await self._read_key(self.api_key_now) is not None
        self._key_available = available
        for callback in list(self._key_listeners):
            callback(available)
        return available

    def api_key_now(self) -> str | None:
        """The key, read synchronously (worker threads and the command line only)."""
        return self._key_store.api_key()

    async def key_source(self) -> str | None:
        """``"environment"``, ``"session"``, ``"keyring"`` or ``None``, read on a worker
        thread."""
        return await self._read_key(self._key_store.key_source)

    async def can_store_key(self) -> bool:
        """Whether a key can be saved (a usable OS keyring exists), read on a worker thread;
        without one a key is used for the session only, or comes from the environment."""
        return await self._read_key(self._key_store.can_store)

    async def set_api_key(self, key: str) -> None:
        """Store the key in the OS keyring, then check again.

        Raises:
            UsageError: a blank key or one with spaces. YakError: no usable keyring.
        """
        await self._offload(self._key_store.set_api_key, key)
        await self.check_key()

    async def use_session_key(self, key: str | None) -> None:
        """Use ``key`` for this run only (kept in memory, never written; ``None`` forgets it),
        then check again.

        Raises:
            UsageError: a blank key or one with spaces.
        """
        self._key_store.use_session_key(key)
        await self.check_key()

    async def delete_api_key(self) -> None:
        """Forget a session-only key and remove the key from the OS keyring, then check again.

        Raises:
            YakError: the keyring refused.
        """
        await self._offload(self._key_store.delete_api_key)
        await self.check_key()
