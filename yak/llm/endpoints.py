"""What each memory endpoint can do, remembered across runs ("The rewrite forms" in
docs/refresh.md): the rewrite form that worked for a base URL and model. An endpoint that
rejects tools, ignores ``tool_choice`` or answers a forced call in text is found out on its first
refresh and asked in the edits form from then on; one that answered with the tool is asked with
it again. Kept in ``endpoints.json`` beside ``settings.json`` (the user's alone), or in memory
when there is no data directory."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from yak.domain import RewriteForm

log = logging.getLogger(__name__)

ENDPOINTS_FILE = "endpoints.json"
_FILE_MODE = 0o600


class EndpointForms:
    """The remembered rewrite form per ``(base URL, model)``; implements
    ``yak.ports.EndpointForms``. Blocking file I/O: call it off the event loop's thread.

    Args:
        data_dir: where ``endpoints.json`` lives; ``None`` keeps it in memory only.
    """

    def __init__(self, data_dir: Path | None) -> None:
        self._path = data_dir / ENDPOINTS_FILE if data_dir is not None else None
        self._lock = threading.Lock()
        self._memory: dict[str, str] = {}

    def remembered(self, base_url: str, model: str) -> RewriteForm | None:
        """The form that worked for this endpoint and model, or ``None`` (never asked, or an
        unreadable file: logged, and the endpoint is found out again)."""
        value = self._read().get(_key(base_url, model))
        try:
            return RewriteForm(value) if value else None
        except ValueError:
            return None

    def remember(self, base_url: str, model: str, form: RewriteForm) -> None:
        """Remember ``form`` for this endpoint and model (a file that cannot be written is
        logged; the endpoint is then found out again next time)."""
        key = _key(base_url, model)
        with self._lock:
            known = self._read()
            if known.get(key) == form.value:
                return
            known[key] = form.value
            if self._path is None:
                self._memory = known
                return
            tmp = self._path.with_suffix(".json.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    file.write(json.dumps(known, indent=2, sort_keys=True))
                os.replace(tmp, self._path)
            except OSError as exc:
                log.warning("could not remember the memory form of %s: %s", key, exc)

    def _read(self) -> dict[str, str]:
        if self._path is None:
            return dict(self._memory)
        try:
            stored = json.loads(self._path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self._path, exc)
            return {}
        if not isinstance(stored, dict):
            return {}
        return {str(k): str(v) for k, v in stored.items()}


def _key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"
