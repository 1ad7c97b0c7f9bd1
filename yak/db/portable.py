"""SQL that reads the same on SQLite and on PostgreSQL: the few statements whose spelling
differs between them, chosen by the session's dialect."""

from __future__ import annotations

from typing import Any

from sqlalchemy import LargeBinary, String, Table, cast, type_coerce
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import ColumnElement
from sqlalchemy.sql.functions import GenericFunction
from sqlalchemy.sql.roles import ExpressionElementRole

from yak.db.models import Base, table_of


def insert_ignore(s: Session, model: type[Base], **values: Any) -> None:
    """``INSERT … ON CONFLICT DO NOTHING`` of one row of ``model``."""
    s.connection().execute(insert_ignoring(table_of(model), s.get_bind().dialect.name), values)


_IGNORING: dict[tuple[str, str], Any] = {}


def insert_ignoring(table: Table, dialect: str) -> Any:
    """A prebuilt ``INSERT … ON CONFLICT DO NOTHING`` into ``table`` for ``dialect``, to run
    with one or many rows of values (built once per table and dialect)."""
    statement = _IGNORING.get((table.name, dialect))
    if statement is None:
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert as postgresql_insert

            statement = postgresql_insert(table).on_conflict_do_nothing()
        else:
            statement = sqlite_insert(table).on_conflict_do_nothing()
        _IGNORING[(table.name, dialect)] = statement
    return statement


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
