"""Settings read from the environment and the settings file, with their bounds.

Environment variables win over the settings file (``settings.json`` in the data directory,
written by Settings in the app): ``YAK_MODEL`` (chat model), ``YAK_MEMORY_MODEL`` (memory
rewrite model), ``YAK_REFRESH_IDLE_SECONDS`` (2-600: how long a conversation is quiet before
its memory refresh runs), ``YAK_COMMAND_SANDBOX`` (``auto``,
``landlock``, ``bubblewrap`` or ``none``: how ``run_command`` is confined),
``YAK_TIMEOUT_SECONDS`` (1-3600: how long a model request may take to start answering, retries
included, and the longest pause inside a reply), ``YAK_MEMORY_CONTEXT_WINDOW`` (tokens: the
memory model's context window, for a local server; 0: Anthropic's known windows),
``YAK_STALE_AFTER_DAYS`` (1-3650: how old a memory line is before it is marked with its month
and a refresh's line is stale).
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are read by the SDK itself; the key may
instead live in the OS keyring.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_CHAT_MODEL = "claude-sonnet-5-5"
DEFAULT_MEMORY_MODEL = "claude-haiku-5-5"  # small and fast: rewrites are frequent
# The refresh waits until the conversation has been quiet this long ("Idle and cost" in
# docs/refresh.md): a person who sends a message every minute or two gets one refresh when
# they stop, not one per turn.
DEFAULT_IDLE_S = 120.0
MIN_IDLE_S = 2.0
MAX_IDLE_S = 600.0
MAX_WAIT_S = 900.0  # no workspace waits longer from its first unfolded turn
SETTLE_S = 10.0  # the wait of a conversation that is over (closed; unfolded at start)
SETTINGS_FILE = "settings.json"
COMMAND_SANDBOXES = ("auto", "landlock", "bubblewrap", "none")
DEFAULT_TIMEOUT_S = 120.0
MIN_TIMEOUT_S = 1.0
MAX_TIMEOUT_S = 3600.0
# The memory model's context window in tokens ("Context" in docs/refresh.md); 0: not set (the
# known window of Anthropic's models, else unchecked). The most is ten times Anthropic's largest
# window, so a typo cannot switch the check off unnoticed.
MAX_CONTEXT_WINDOW = 10_000_000
# A memory line not said or confirmed for this many days is marked with its month when injected,
# and a refresh's line that old is stale ("Age and staleness" in docs/memory.md).
DEFAULT_STALE_AFTER_DAYS = 90
MIN_STALE_AFTER_DAYS = 1
MAX_STALE_AFTER_DAYS = 3650
SETTINGS_FILE_MODE = 0o600  # the user's alone, like the database and the log (yak.paths)
# Settings field -> the environment variable that overrides it (over ``settings.json``): the
# one table the settings service reads and a settings page shows as "set by the environment".
ENV_OVERRIDES = {
    "chat_model": "YAK_MODEL",
    "memory_model": "YAK_MEMORY_MODEL",
    "refresh_idle_s": "YAK_REFRESH_IDLE_SECONDS",
    "request_timeout_s": "YAK_TIMEOUT_SECONDS",
    "command_sandbox": "YAK_COMMAND_SANDBOX",
    "memory_context_window": "YAK_MEMORY_CONTEXT_WINDOW",
    "memory_form": "YAK_MEMORY_FORM",
    "memory_profile": "YAK_MEMORY_PROFILE",
    "stale_after_days": "YAK_STALE_AFTER_DAYS",
}
# Where model requests go without a base URL setting: ``ANTHROPIC_BASE_URL`` in the process's
# environment (the SDK's own variable), else Anthropic's API.
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
# How the memory model is asked to answer ("The rewrite forms" in docs/refresh.md): ``auto``
# asks for the tool where the endpoint supports it (found out on the first refresh and
# remembered), else edits; the others ask for that form always.
MEMORY_FORMS = ("auto", "tool", "edits", "whole")
# The memory model's habits read back in the free-text forms (``yak.memory.forms.profiles``:
# ``auto`` by the model's name).
MEMORY_PROFILES = ("auto", "plain", "small-local")


def endpoint_url(base_url: str | None, env: Mapping[str, str]) -> str:
    """Where requests go: the base URL setting, else ``ANTHROPIC_BASE_URL`` in ``env``, else
    Anthropic's API; without a trailing slash (the key the endpoint's rewrite form is remembered
    by, "The rewrite forms" in docs/refresh.md)."""
    return (base_url or env.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


@dataclass(frozen=True)
class Settings:
    """User settings. Times in seconds, context windows in tokens."""

    chat_model: str = DEFAULT_CHAT_MODEL
    memory_model: str = DEFAULT_MEMORY_MODEL
    refresh_idle_s: float = DEFAULT_IDLE_S  # the refresh queue's debounce
    base_url: str | None = None  # None: the SDK's default or ANTHROPIC_BASE_URL
    floor_ratio: float = 0.5
    command_sandbox: str = "auto"  # auto | landlock | bubblewrap | none (unconfined)
    request_timeout_s: float = DEFAULT_TIMEOUT_S
    memory_context_window: int = 0  # 0: Anthropic's known windows, else unchecked
    memory_form: str = "auto"  # one of MEMORY_FORMS
    memory_profile: str = "auto"  # the memory model's habits read back: yak.memory.forms.profiles
    stale_after_days: int = DEFAULT_STALE_AFTER_DAYS  # a memory line's age before it is marked

    def with_changes(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied and clamped (:func:`clamp`)."""
        return clamp(replace(self, **changes))


def clamp(settings: Settings) -> Settings:
    """Clamp the refresh's quiet time to 2-600 s, the floor ratio to 0-1, the request timeout to
    1-3600 s, the memory model's context window to 0-``MAX_CONTEXT_WINDOW`` tokens (a
    fraction dropped) and a line's age before it is marked to 1-3650 days; an unknown command
    sandbox or memory form is ``auto``."""
    idle = min(max(float(settings.refresh_idle_s), MIN_IDLE_S), MAX_IDLE_S)
    ratio = min(max(float(settings.floor_ratio), 0.0), 1.0)
    sandbox = settings.command_sandbox
    if sandbox not in COMMAND_SANDBOXES:
        sandbox = "auto"
    timeout = min(max(float(settings.request_timeout_s), MIN_TIMEOUT_S), MAX_TIMEOUT_S)
    window = min(max(int(settings.memory_context_window), 0), MAX_CONTEXT_WINDOW)
    form = settings.memory_form if settings.memory_form in MEMORY_FORMS else "auto"
    profile = settings.memory_profile if settings.memory_profile in MEMORY_PROFILES else "auto"
    stale = min(max(int(settings.stale_after_days), MIN_STALE_AFTER_DAYS), MAX_STALE_AFTER_DAYS)
    return replace(
        settings,
        memory_form=form,
        memory_profile=profile,
        refresh_idle_s=idle,
        floor_ratio=ratio,
        command_sandbox=sandbox,
        request_timeout_s=timeout,
        memory_context_window=window,
        stale_after_days=stale,
    )


def load_settings(data_dir: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Read ``settings.json`` in ``data_dir`` (missing or unreadable: defaults, logged), then
    apply the environment (:data:`ENV_OVERRIDES`). A number that does not parse (a malformed
    ``YAK_REFRESH_IDLE_SECONDS``) is ignored with a log line. A ``debounce_s`` stored by an
    older Yak (10 s, one refresh per turn) is not read: the quiet time starts at its default."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = data_dir / SETTINGS_FILE
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            known = Settings.__dataclass_fields__
            values = {k: v for k, v in stored.items() if k in known}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable settings file %s: %s", path, exc)
    for field, variable in ENV_OVERRIDES.items():
        value = env.get(variable)
        if not value:
            continue
        if field in ("command_sandbox", "memory_form", "memory_profile"):
            values[field] = value.strip().lower()
        elif isinstance(getattr(Settings, field), int):
            try:
                values[field] = int(value)
            except ValueError:
                log.warning("ignoring %s=%r: not a whole number", variable, value)
        elif isinstance(getattr(Settings, field), float):
            try:
                values[field] = float(value)
            except ValueError:
                log.warning("ignoring %s=%r: not a number", variable, value)
        else:
            values[field] = value
    try:
        return clamp(Settings(**values))
    except (TypeError, ValueError) as exc:  # a field of the wrong type
        log.warning("ignoring settings file %s: %s", path, exc)
        return Settings()


def save_settings(data_dir: Path, settings: Settings) -> None:
    """Write ``settings.json`` atomically, readable by the user only (never the API key: it
    lives in the keyring).

    Raises:
        OSError: the file cannot be written.
    """
    path = data_dir / SETTINGS_FILE
    tmp = path.with_suffix(".json.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # a leftover would keep its old permissions
    with open(tmp, "w", encoding="utf-8", opener=_private_opener) as file:
        file.write(json.dumps(asdict(settings), indent=2))
    os.replace(tmp, path)


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags, SETTINGS_FILE_MODE)
