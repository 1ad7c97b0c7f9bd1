"""Where the Anthropic API key comes from: ``ANTHROPIC_API_KEY``, a key given for this session
only, else the OS keyring.

The keyring entry is service ``"yak"``, user ``"anthropic"``. The key is never written to the
database, the settings file, the logs or an export, nor to a keyring backend that is only a file:
the backends of ``keyrings.alt`` (a plaintext or "encrypted" file in the home folder, which a
distribution may install as the default) and any backend with a ``file_path`` or a priority
under :data:`MIN_PRIORITY` are refused with a sentence that says where the key would have gone
and what to do instead (the environment variable, a session-only key, a system keyring). Such
backends are not read either. A machine without a keyring backend (a bare Linux server, a
container) still works with the environment variable or a session-only key: reading the keyring
there gives ``None`` (logged once), writing raises a ``YakError`` that says what to do instead.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from yak.errors import UsageError, YakError
from yak.llm import sdk

log = logging.getLogger(__name__)

KEYRING_SERVICE = "yak"
KEYRING_USER = "anthropic"
ENV_VAR = "ANTHROPIC_API_KEY"
# keyring's own backends for a system secret store (Secret Service, KWallet, macOS Keychain,
# Windows Credential Locker) have priorities from about 4.8 to 5; a fallback that stores
# secrets poorly (keyrings.alt's files: 0.5 and 0.6) is under 1.
MIN_PRIORITY = 1.0
INSTEAD = (
    "use the key for this session only (Settings › Provider), set the ANTHROPIC_API_KEY "
    "environment variable, or install a system keyring (GNOME Keyring, KWallet)"
)


def env_api_key() -> str | None:
    """The key from ``ANTHROPIC_API_KEY`` (surrounding blanks removed), or ``None`` when unset or
    blank."""
    value = os.environ.get(ENV_VAR, "").strip()
    return value or None


def keyring_backends() -> list[Any]:
    """The keyring backends in the order keyring would use them (the chain's members when
    keyring chains several), or ``[]`` when keyring cannot be loaded."""
    try:
        # keyring and its backends load on first use, never beside the SDK's import (the
        # reason is at yak.llm.sdk.import_lock).
        with sdk.import_lock:
            import keyring
            from keyring.backends.chainer import ChainerBackend

            current = keyring.get_keyring()
        return list(current.backends) if isinstance(current, ChainerBackend) else [current]
    except Exception as exc:  # noqa: BLE001 - a broken keyring install must not stop the app
        log.warning("the OS keyring could not be loaded: %s", type(exc).__name__)
        return []


def unsafe_reason(backend: Any) -> str | None:
    """Why ``backend`` must not hold the key, as the end of a sentence ("it would be written
    to …"); ``None`` for a system secret store. A backend that stores nothing (keyring's
    ``fail`` and ``null`` backends) is not unsafe, only absent: see :func:`is_absent`."""
    if is_absent(backend):
        return None
    name = f"{type(backend).__module__}.{type(backend).__name__}"
    path = getattr(backend, "file_path", None)
    if path is not None or type(backend).__module__.startswith("keyrings.alt"):
        where = f"to the file {path}" if path else "outside a system keyring"
        return f"the only keyring available ({name}) would write it {where}"
    try:
        priority = float(backend.priority)
    except Exception:  # noqa: BLE001 - a backend that cannot rate itself is not usable here
        priority = 0.0
    if priority < MIN_PRIORITY:
        return f"the only keyring available ({name}) is a low-priority fallback"
    return None


def is_absent(backend: Any) -> bool:
    """Whether ``backend`` is keyring's stand-in for "no keyring" (``fail`` or ``null``)."""
    return type(backend).__module__ in ("keyring.backends.fail", "keyring.backends.null")


def safe_backends() -> list[Any]:
    """The backends Yak may read and write the key with (none that is only a file)."""
    return [b for b in keyring_backends() if not is_absent(b) and unsafe_reason(b) is None]


def keyring_api_key() -> str | None:
    """The key stored in the OS keyring, or ``None`` (none stored, or no usable keyring; a
    file-only backend is not read)."""
    for backend in safe_backends():
        try:
            value = backend.get_password(KEYRING_SERVICE, KEYRING_USER)
        except Exception as exc:  # noqa: BLE001 - a broken backend must not stop the app
            log.warning("the OS keyring could not be read: %s", type(exc).__name__)
            continue
        value = (value or "").strip()
        if value:
            return value
    return None


def api_key() -> str | None:
    """The key to use: ``ANTHROPIC_API_KEY`` first, then the OS keyring; ``None`` when neither
    has one (a session-only key lives in :class:`KeyringKeyStore`)."""
    return env_api_key() or keyring_api_key()


def has_api_key() -> bool:
    """Whether a key is available from the environment or the keyring."""
    return api_key() is not None


def validated_key(key: str) -> str:
    """``key`` without surrounding blanks.

    Raises:
        UsageError: the key is blank or contains spaces or line breaks.
    """
    value = key.strip()
    if not value:
        raise UsageError("The API key is empty; paste the key from the Anthropic console.")
    if any(c in value for c in "\r\n\t "):
        raise UsageError("The API key contains spaces or line breaks; paste it again as one word.")
    return value


def set_api_key(key: str) -> None:
    """Store ``key`` in the OS keyring (replacing any stored key).

    Args:
        key: the API key; surrounding blanks are removed.

    Raises:
        UsageError: the key is blank or spans several lines.
        YakError: no system keyring can store it: none exists, or the only one is a file
            (the sentence says which file, and what to do instead).
    """
    value = validated_key(key)
    backends = keyring_backends()
    usable = [b for b in backends if not is_absent(b) and unsafe_reason(b) is None]
    if not usable:
        reasons = [r for r in map(unsafe_reason, backends) if r is not None]
        if reasons:
            log.warning("refused to store the API key: %s", reasons[0])
            raise YakError(
                f"Yak did not save the key: {reasons[0]}, unencrypted or weakly protected; "
                f"{INSTEAD}."
            )
        raise YakError("Yak could not save the key: this system has no keyring; " + INSTEAD + ".")
    for backend in usable:
        try:
            backend.set_password(KEYRING_SERVICE, KEYRING_USER, value)
            return
        except Exception as exc:  # noqa: BLE001 - every backend failure becomes one sentence
            log.warning("the OS keyring could not store the API key: %s", type(exc).__name__)
    raise YakError("Yak could not save the key in the system keyring; " + INSTEAD + ".")


def delete_api_key() -> None:
    """Remove the key from the OS keyring; nothing stored is not an error.

    Raises:
        YakError: the keyring refused to delete it.
    """
    with sdk.import_lock:
        from keyring.errors import PasswordDeleteError

    for backend in safe_backends():
        try:
            backend.delete_password(KEYRING_SERVICE, KEYRING_USER)
        except PasswordDeleteError:  # nothing stored there
            continue
        except Exception as exc:  # noqa: BLE001 - every backend failure becomes one sentence
            log.warning("the OS keyring could not delete the API key: %s", type(exc).__name__)
            raise YakError(
                "Yak could not remove the key from the system keyring; remove the entry "
                "'yak' / 'anthropic' with your system's password manager."
            ) from None


class KeyringKeyStore:
    """The key store of ``yak.ports.KeyStore``: ``ANTHROPIC_API_KEY``, then a key given for
    this session only (kept in this object's memory, never written anywhere), then the OS
    keyring (never a file-only keyring backend)."""

    def __init__(self) -> None:
        self._session_key: str | None = None

    def api_key(self) -> str | None:
        return env_api_key() or self._session_key or keyring_api_key()

    def key_source(self) -> str | None:
        if env_api_key():
            return "environment"
        if self._session_key:
            return "session"
        return "keyring" if keyring_api_key() else None

    def set_api_key(self, key: str) -> None:
        set_api_key(key)
        self._session_key = None

    def can_store(self) -> bool:
        """Whether a usable system keyring exists (not one that only writes a file)."""
        return bool(safe_backends())

    def use_session_key(self, key: str | None) -> None:
        """Use ``key`` until the process ends (``None`` forgets it).

        Raises:
            UsageError: the key is blank or contains spaces or line breaks.
        """
        self._session_key = None if key is None else validated_key(key)

    def delete_api_key(self) -> None:
        self._session_key = None
        delete_api_key()
