"""``yak memory …``: list, show, set, edit, refresh, history, restore, export, import, delete."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``memory`` command and its subcommands."""
    sub.add_parser("memory", help="read and write workspace memory documents")
