"""SchemaChange: the changes `FileSystemCatalog.alter_table` applies (org.apache.paimon.schema.SchemaChange).

Build them with the constructors on `SchemaChange`; each returns a frozen dataclass:

    SchemaChange.add_column("discount", pa.float64(), comment="percent", after="price")
    SchemaChange.rename_column("qty", "quantity")
    SchemaChange.update_column_type("quantity", pa.int64())

A type is a pyarrow type, a Paimon type (`table_format.types`) or a Paimon type string such as "DECIMAL(12, 2)".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import pyarrow as pa

from table_format.arrow_types import from_arrow_type
from table_format.errors import SchemaError
from table_format.types import DataType, parse_type

TypeLike: TypeAlias = pa.DataType | DataType | str


def to_paimon_type(value: Any, *, column: str) -> DataType:
    """The Paimon type of a pyarrow type, Paimon type or Paimon type string (pyarrow types are nullable)."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, pa.DataType):
        return from_arrow_type(value, nullable=True, where=column)
    if isinstance(value, str):
        return parse_type(value)
    raise SchemaError(f"column {column!r}: type must be a pyarrow type or a Paimon type, got {value!r}")


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise SchemaError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _comment(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SchemaError(f"{what} must be a string or None, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One change of a table's schema; use the static constructors."""

    @staticmethod
    def add_column(name: str, type: TypeLike, *, comment: str | None = None, first: bool = False,
                   after: str | None = None) -> AddColumn:
        """A new nullable column, last (or first, or after another column). Old rows read it as null."""
        name = _name(name, "column name")
        if first and after is not None:
            raise SchemaError(f"column {name!r}: pass first=True or after=..., not both")
        return AddColumn(name, to_paimon_type(type, column=name), _comment(comment, f"comment of {name!r}"),
                         bool(first), None if after is None else _name(after, "after"))

    @staticmethod
    def rename_column(name: str, new_name: str) -> RenameColumn:
        """Rename a column; its data stays (files are read by field id)."""
        return RenameColumn(_name(name, "column name"), _name(new_name, "new column name"))

    @staticmethod
    def drop_column(name: str) -> DropColumn:
        """Drop a column; its data is no longer read. A column added later with that name starts empty."""
        return DropColumn(_name(name, "column name"))

    @staticmethod
    def update_column_type(name: str, type: TypeLike) -> UpdateColumnType:
        """Widen a column's type (see schema_evolution.widening); the column keeps its nullability."""
        name = _name(name, "column name")
        return UpdateColumnType(name, to_paimon_type(type, column=name))

    @staticmethod
    def update_column_nullability(name: str, nullable: bool) -> UpdateColumnNullability:
        """Make a column nullable, or NOT NULL (refused while the column holds nulls)."""
        if not isinstance(nullable, bool):
            raise SchemaError(f"column {name!r}: nullable must be True or False, got {nullable!r}")
        return UpdateColumnNullability(_name(name, "column name"), nullable)

    @staticmethod
    def update_column_comment(name: str, comment: str | None) -> UpdateColumnComment:
        return UpdateColumnComment(_name(name, "column name"), _comment(comment, f"comment of {name!r}"))

    @staticmethod
    def set_option(key: str, value: Any) -> SetOption:
        """Set a table option (values are stored as strings, as Paimon does)."""
        if value is None:
            raise SchemaError(f"option {key!r}: value must not be None; use remove_option to unset it")
        return SetOption(_name(key, "option key"), str(value))

    @staticmethod
    def remove_option(key: str) -> RemoveOption:
        return RemoveOption(_name(key, "option key"))

    @staticmethod
    def update_comment(comment: str | None) -> UpdateComment:
        """The table's comment."""
        return UpdateComment(_comment(comment, "table comment"))

    @staticmethod
    def move_column(name: str, *, first: bool = False, after: str | None = None,
                    before: str | None = None) -> MoveColumn:
        """Move a column first, or after / before another one (only the column order changes)."""
        name = _name(name, "column name")
        if sum((bool(first), after is not None, before is not None)) != 1:
            raise SchemaError(f"column {name!r}: move_column needs exactly one of first=True, after=..., before=...")
        return MoveColumn(name, bool(first), after, before)


@dataclass(frozen=True, slots=True)
class AddColumn(SchemaChange):
    name: str
    type: DataType
    comment: str | None = None
    first: bool = False
    after: str | None = None


@dataclass(frozen=True, slots=True)
class RenameColumn(SchemaChange):
    name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class DropColumn(SchemaChange):
    name: str


@dataclass(frozen=True, slots=True)
class UpdateColumnType(SchemaChange):
    name: str
    type: DataType


@dataclass(frozen=True, slots=True)
class UpdateColumnNullability(SchemaChange):
    name: str
    nullable: bool


@dataclass(frozen=True, slots=True)
class UpdateColumnComment(SchemaChange):
    name: str
    comment: str | None


@dataclass(frozen=True, slots=True)
class SetOption(SchemaChange):
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class RemoveOption(SchemaChange):
    key: str


@dataclass(frozen=True, slots=True)
class UpdateComment(SchemaChange):
    comment: str | None


@dataclass(frozen=True, slots=True)
class MoveColumn(SchemaChange):
    name: str
    first: bool = False
    after: str | None = None
    before: str | None = None
