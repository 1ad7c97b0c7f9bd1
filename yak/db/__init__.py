"""Storage: SQLite through SQLAlchemy 2, migrated by Alembic. See ``engine.Database``."""

from yak.db.engine import Database, open_database

__all__ = ["Database", "open_database"]
