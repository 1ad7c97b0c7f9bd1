"""Fresh PostgreSQL databases for the tests that run against both databases.

``YAK_TEST_DATABASE_URL`` names a server and a user allowed to create databases (e.g. the URL
``python -m tests.support.postgres_server start DIR`` prints). The first use migrates a template
database; each test then gets ``CREATE DATABASE … TEMPLATE`` of it (a file copy on the server,
much faster than migrating), dropped after the test.
"""

from __future__ import annotations

import itertools
import os

from sqlalchemy.engine import make_url

ENV = "YAK_TEST_DATABASE_URL"


def server_url() -> str | None:
    """The test server's URL, or ``None`` when none is configured."""
    return os.environ.get(ENV, "").strip() or None


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` (the password kept)."""
    return make_url(url).set(database=name).render_as_string(hide_password=False)


class Databases:
    """Creates and drops the test databases on the server at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._names = (f"yak_test_{os.getpid()}_{n}" for n in itertools.count())
        self.template: str | None = None

    def _execute(self, *statements: str) -> None:
        import psycopg

        libpq = (
            make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)
        )
        with psycopg.connect(libpq, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)  # type: ignore[arg-type]

    def create(self, *, empty: bool = False) -> str:
        """A new database's URL: a copy of the migrated template, or ``empty`` (no tables)."""
        if self.template is None and not empty:
            template = self.create(empty=True)
            from yak.db.engine import open_database

            open_database(None, url=template).close()
            self.template = make_url(template).database
        name = next(self._names)
        if empty:
            self._execute(f'CREATE DATABASE "{name}"')
        else:
            self._execute(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"')
        return with_database(self.url, name)

    def drop(self, url: str) -> None:
        """Drop the database ``url`` names, closing its connections."""
        name = make_url(url).database
        self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        """Drop the template."""
        if self.template is not None:
            self._execute(f'DROP DATABASE IF EXISTS "{self.template}" WITH (FORCE)')
