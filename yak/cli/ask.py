"""``yak ask``: one agent turn without a window, then the workspace's memory refresh."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ask`` command."""
    sub.add_parser("ask", help="one agent turn without a window")
