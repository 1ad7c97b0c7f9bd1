"""SQL that reads the same on SQLite and on PostgreSQL: the few statements whose spelling
differs between them, chosen by the session's dialect."""

from __future__ import annotations

from typing import Any

from sqlalchemy import LargeBinary, String, cast, type_coerce
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.sql.functions import GenericFunction
from sqlalchemy.sql.roles import ExpressionElementRole


def insert_ignore(s: Session, model: type[Any], **values: Any) -> None:
    """``INSERT … ON CONFLICT DO NOTHING`` of one row of ``model``."""
    if s.get_bind().dialect.name == "postgresql":
        # imported here: PostgreSQL's dialect costs every SQLite command's start-up otherwise
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        s.execute(postgresql_insert(model).values(**values).on_conflict_do_nothing())
    else:
        s.execute(sqlite_insert(model).values(**values).on_conflict_do_nothing())


class utf8_bytes(GenericFunction[bytes]):  # noqa: N801 - an SQL function's name
    """A text column read as its UTF-8 bytes: ``CAST(x AS BLOB)`` on SQLite (where a column may
    hold bytes that are not UTF-8, written by another program), ``convert_to(x, 'UTF8')`` on
    PostgreSQL (whose text is always valid)."""

    type = LargeBinary()
    inherit_cache = True


@compiles(utf8_bytes)
def _utf8_bytes_sqlite(element: utf8_bytes, compiler: Any, **kw: Any) -> str:
    return f"CAST({compiler.process(element.clauses, **kw)} AS BLOB)"


@compiles(utf8_bytes, "postgresql")
def _utf8_bytes_postgresql(element: utf8_bytes, compiler: Any, **kw: Any) -> str:
    return f"convert_to({compiler.process(element.clauses, **kw)}, 'UTF8')"


def as_text(column: ExpressionElementRole[Any], dialect: str) -> ColumnElement[Any]:
    """``column`` read as its stored text (times, JSON), without per-value conversion: SQLite
    already stores them as text; PostgreSQL casts."""
    if dialect == "postgresql":
        return cast(column, String)
    return type_coerce(column, String)
