"""Where the Anthropic API key comes from: ``ANTHROPIC_API_KEY``, else the OS keyring.

The keyring entry is service ``"yak"``, user ``"anthropic"``. The key is never written to the
database, the settings file, the logs or an export. A machine without a keyring backend (a bare
Linux server, a container) still works with the environment variable: reading the keyring there
gives ``None`` (logged once), writing raises a ``YakError`` that says what to do instead.
"""

from __future__ import annotations

import logging
import os

from yak.errors import UsageError, YakError

log = logging.getLogger(__name__)

KEYRING_SERVICE = "yak"
KEYRING_USER = "anthropic"
ENV_VAR = "ANTHROPIC_API_KEY"


def env_api_key() -> str | None:
    """The key from ``ANTHROPIC_API_KEY`` (surrounding blanks removed), or ``None`` when unset or
    blank."""
    value = os.environ.get(ENV_VAR, "").strip()
    return value or None


def keyring_api_key() -> str | None:
    """The key stored in the OS keyring, or ``None`` (none stored, or no usable keyring)."""
    try:
        import keyring
        from keyring.errors import KeyringError

        try:
            value = keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
        except KeyringError as exc:
            log.info("no API key from the OS keyring: %s", type(exc).__name__)
            return None
    except Exception as exc:  # noqa: BLE001 - a broken backend must not stop the app
        log.warning("the OS keyring could not be read: %s", type(exc).__name__)
        return None
    value = (value or "").strip()
    return value or None


def api_key() -> str | None:
    """The key to use: ``ANTHROPIC_API_KEY`` first, then the OS keyring; ``None`` when neither."""
    return env_api_key() or keyring_api_key()


def key_source() -> str | None:
    """Where :func:`api_key` would find the key: ``"environment"``, ``"keyring"`` or ``None``."""
    if env_api_key():
        return "environment"
    if keyring_api_key():
        return "keyring"
    return None


def has_api_key() -> bool:
    """Whether a key is available from the environment or the keyring."""
    return api_key() is not None


def set_api_key(key: str) -> None:
    """Store ``key`` in the OS keyring (replacing any stored key).

    Args:
        key: the API key; surrounding blanks are removed.

    Raises:
        UsageError: the key is blank or spans several lines.
        YakError: the keyring cannot store it (e.g. no keyring backend on this system).
    """
    value = key.strip()
    if not value:
        raise UsageError("The API key is empty; paste the key from the Anthropic console.")
    if any(c in value for c in "\r\n\t "):
        raise UsageError("The API key contains spaces or line breaks; paste it again as one word.")
    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, KEYRING_USER, value)
    except Exception as exc:  # noqa: BLE001 - every backend failure becomes one sentence
        log.warning("the OS keyring could not store the API key: %s", type(exc).__name__)
        raise YakError(
            "Yak could not save the key in the system keyring (no usable keyring on "
            "this system); set the ANTHROPIC_API_KEY environment variable instead."
        ) from None


def delete_api_key() -> None:
    """Remove the key from the OS keyring; nothing stored is not an error.

    Raises:
        YakError: the keyring refused to delete it.
    """
    try:
        import keyring
        from keyring.errors import NoKeyringError, PasswordDeleteError

        try:
            keyring.delete_password(KEYRING_SERVICE, KEYRING_USER)
        except (PasswordDeleteError, NoKeyringError):  # nothing stored, or nowhere to store it
            return
    except Exception as exc:  # noqa: BLE001 - every backend failure becomes one sentence
        log.warning("the OS keyring could not delete the API key: %s", type(exc).__name__)
        raise YakError(
            "Yak could not remove the key from the system keyring; remove the entry "
            "'yak' / 'anthropic' with your system's password manager."
        ) from None


class KeyringKeyStore:
    """The key store of ``yak.ports.KeyStore``: ``ANTHROPIC_API_KEY``, then the OS keyring."""

    def api_key(self) -> str | None:
        return api_key()

    def key_source(self) -> str | None:
        return key_source()

    def set_api_key(self, key: str) -> None:
        set_api_key(key)

    def delete_api_key(self) -> None:
        delete_api_key()
