"""Storage: SQLite through SQLAlchemy 2 (PostgreSQL by URL), migrated by Alembic.

``yak.db.engine`` opens a database; the repositories sit beside it. Nothing is imported here,
so the plain ``sqlite3`` read path (``yak.db.sqlite_read``) loads without SQLAlchemy.
"""
