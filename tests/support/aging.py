"""Moving stored times into the past in the SQLite file, for the tests of a memory line's age
("Age and staleness" in docs/memory.md): nothing sleeps, the rows say they are older."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from yak.db.schema import DB_FILE


def days_ago(days: float) -> datetime:
    """Now minus ``days``, UTC."""
    return datetime.now(UTC) - timedelta(days=days)


def _stored(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def age_revision(data_dir: Path, version: int, days: float) -> None:
    """Say the revision that wrote ``version`` (of every workspace) was stored ``days`` ago."""
    with sqlite3.connect(data_dir / DB_FILE) as db:
        db.execute(
            "UPDATE memory_revisions SET created_at = ? WHERE version = ?",
            (_stored(days_ago(days)), version),
        )


def age_messages(data_dir: Path, days: float) -> None:
    """Say every stored chat message was written ``days`` ago."""
    with sqlite3.connect(data_dir / DB_FILE) as db:
        db.execute("UPDATE chat_messages SET created_at = ?", (_stored(days_ago(days)),))
