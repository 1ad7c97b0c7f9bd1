"""Alembic environment: runs on the connection Yak hands over (``config.attributes``)."""

from alembic import context

from yak.db.models import Base

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only when someone runs the alembic CLI by hand
    raise RuntimeError("Yak migrations run from yak.db.open_database, not the alembic CLI.")

context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
