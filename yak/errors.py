"""Yak's own exception hierarchy.

Storage and provider exceptions (SQLAlchemy, sqlite3, anthropic and its HTTP transport) are
translated into these at the ``yak.db`` / ``yak.llm`` boundary, so the services, the UI and the
CLI only ever see a ``YakError`` whose ``str()`` is one sentence a user can act on. ``exit_code``
is the CLI's exit status for the error ("The command line" in docs/cli.md).
"""

from __future__ import annotations


class YakError(Exception):
    """Base class: a failure a user can understand; ``str(err)`` is one actionable sentence."""

    exit_code = 1


class UsageError(YakError):
    """Bad input from the user: a wrong path, an unknown revision, bytes that are not text."""

    exit_code = 2


class WorkspaceNotFound(UsageError):
    """The folder does not exist, is not a directory, or no stored workspace matches it."""


class RevisionNotFound(UsageError):
    """No revision with that id exists in the workspace."""


class RefusedError(YakError):
    """A guard refused a write; nothing was written.

    Attributes:
        status: the machine-readable outcome, e.g. ``"refused_ceiling"``.
    """

    exit_code = 3

    def __init__(self, message: str, *, status: str = "refused") -> None:
        super().__init__(message)
        self.status = status


class CeilingExceeded(RefusedError):
    """A document over the ceiling: more than ``yak.domain.MAX_LINES`` lines or
    ``yak.domain.MAX_CHARS`` characters."""

    def __init__(self, message: str, *, lines: int, chars: int) -> None:
        super().__init__(message, status="refused_ceiling")
        self.lines = lines
        self.chars = chars


class ConflictError(YakError):
    """A write was based on a stale version; nothing was written.

    Attributes:
        expected_version: the version the write was based on.
        current_version: the version actually stored.
    """

    exit_code = 5

    def __init__(self, message: str, *, expected_version: int, current_version: int) -> None:
        super().__init__(message)
        self.expected_version = expected_version
        self.current_version = current_version


class StoreError(YakError):
    """The database could not be read or written (locked, read-only, corrupt, full disk)."""

    exit_code = 1


class SchemaTooNew(StoreError):
    """The database was written by a newer Yak; it is left untouched."""


class ProviderError(YakError):
    """The model provider failed: no key, rejected key, network down, server error, bad reply.

    Attributes:
        reason: a short machine-readable reason, e.g. ``"rate_limited"``, ``"no_key"``.
    """

    exit_code = 4

    def __init__(self, message: str, *, reason: str = "provider_error") -> None:
        super().__init__(message)
        self.reason = reason


class MissingApiKey(ProviderError):
    """No API key in ``ANTHROPIC_API_KEY`` nor in the OS keyring."""

    def __init__(
        self,
        message: str = (
            "No Anthropic API key is set. Set ANTHROPIC_API_KEY or add a key in "
            "Settings › Provider."
        ),
    ) -> None:
        super().__init__(message, reason="no_key")


class AuthenticationFailed(ProviderError):
    """The provider rejected the API key (HTTP 401/403)."""


class RateLimited(ProviderError):
    """The provider is rate limiting (HTTP 429)."""


class Overloaded(ProviderError):
    """The provider is overloaded (HTTP 529) or returned a 5xx."""


class ProviderUnavailable(ProviderError):
    """The provider could not be reached: refused connection, DNS failure, timeout."""


class IncompleteResponse(ProviderError):
    """A stream ended before the message was complete; nothing from it is stored."""


class UnreadableDocument(StoreError):
    """A stored memory document whose bytes are not UTF-8 (written by an old build or another
    tool directly into the database). Nothing reads it as text; the way out is to look at the
    raw bytes (``yak memory show --raw``) and restore a revision or save a new text.

    Attributes:
        workspace_id: the workspace.
        version: the stored version.
        raw: the stored bytes, exactly.
    """

    def __init__(self, message: str, *, workspace_id: str, version: int, raw: bytes) -> None:
        super().__init__(message)
        self.workspace_id = workspace_id
        self.version = version
        self.raw = raw
