"""Storage: SQLite through SQLAlchemy 2, migrated by Alembic. See ``engine.Database``.

``Database`` and ``open_database`` are loaded on first use, so the plain ``sqlite3`` read path
(``yak.db.sqlite_read``) can be imported without SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yak.db.engine import Database, open_database

__all__ = ["Database", "open_database"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from yak.db import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'yak.db' has no attribute {name!r}")
