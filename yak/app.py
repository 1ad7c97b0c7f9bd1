"""The desktop app's composition root: builds the services and the main window on qasync."""

from __future__ import annotations


def run(*, data_dir_override: str | None = None, workspace: str | None = None) -> int:
    """Open the desktop app; returns the process exit status."""
    raise NotImplementedError
