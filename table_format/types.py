"""Paimon data types as classes, parsed once from (and printed back to) Paimon's schema JSON.

Mirrors org.apache.paimon.types.* and DataTypeJsonParser: atomic types are SQL-like strings
("INT NOT NULL", "DECIMAL(10, 2)", "TIMESTAMP(6) WITH LOCAL TIME ZONE"), composite types are JSON
objects ({"type": "ARRAY", "element": ...}).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from table_format.errors import SchemaError, UnsupportedFeatureError

MAX_LENGTH = 2147483647  # VarCharType.MAX_LENGTH / VarBinaryType.MAX_LENGTH

JsonType = str | dict[str, Any]


@dataclass(frozen=True, slots=True)
class DataType:
    """Base of every Paimon type; `nullable` is False for NOT NULL."""

    nullable: bool = field(default=True, kw_only=True)

    SQL: ClassVar[str] = ""

    def copy(self, *, nullable: bool) -> DataType:
        return replace(self, nullable=nullable)

    def _sql(self) -> str:
        return self.SQL

    def to_json(self) -> JsonType:
        return self.as_sql()

    def as_sql(self) -> str:
        return self._sql() + ("" if self.nullable else " NOT NULL")

    def __str__(self) -> str:
        return self.as_sql()


@dataclass(frozen=True, slots=True)
class BooleanType(DataType):
    SQL: ClassVar[str] = "BOOLEAN"


@dataclass(frozen=True, slots=True)
class TinyIntType(DataType):
    SQL: ClassVar[str] = "TINYINT"


@dataclass(frozen=True, slots=True)
class SmallIntType(DataType):
    SQL: ClassVar[str] = "SMALLINT"


@dataclass(frozen=True, slots=True)
class IntType(DataType):
    SQL: ClassVar[str] = "INT"


@dataclass(frozen=True, slots=True)
class BigIntType(DataType):
    SQL: ClassVar[str] = "BIGINT"


@dataclass(frozen=True, slots=True)
class FloatType(DataType):
    SQL: ClassVar[str] = "FLOAT"


@dataclass(frozen=True, slots=True)
class DoubleType(DataType):
    SQL: ClassVar[str] = "DOUBLE"


@dataclass(frozen=True, slots=True)
class DateType(DataType):
    SQL: ClassVar[str] = "DATE"


@dataclass(frozen=True, slots=True)
class DecimalType(DataType):
    precision: int = 10
    scale: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= 38 or not 0 <= self.scale <= self.precision:
            raise SchemaError(f"invalid DECIMAL({self.precision}, {self.scale}): precision 1..38, scale 0..precision")

    def _sql(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"


@dataclass(frozen=True, slots=True)
class CharType(DataType):
    length: int = 1

    def _sql(self) -> str:
        return f"CHAR({self.length})"


@dataclass(frozen=True, slots=True)
class VarCharType(DataType):
    length: int = MAX_LENGTH

    def _sql(self) -> str:
        return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"


@dataclass(frozen=True, slots=True)
class BinaryType(DataType):
    length: int = 1

    def _sql(self) -> str:
        return f"BINARY({self.length})"


@dataclass(frozen=True, slots=True)
class VarBinaryType(DataType):
    length: int = MAX_LENGTH

    def _sql(self) -> str:
        return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"


@dataclass(frozen=True, slots=True)
class TimeType(DataType):
    precision: int = 0

    def _sql(self) -> str:
        return f"TIME({self.precision})"


@dataclass(frozen=True, slots=True)
class TimestampType(DataType):
    precision: int = 6

    def __post_init__(self) -> None:
        if not 0 <= self.precision <= 9:
            raise SchemaError(f"invalid TIMESTAMP({self.precision}): precision must be 0..9")

    def _sql(self) -> str:
        return f"TIMESTAMP({self.precision})"


@dataclass(frozen=True, slots=True)
class LocalZonedTimestampType(DataType):
    precision: int = 6

    def __post_init__(self) -> None:
        if not 0 <= self.precision <= 9:
            raise SchemaError(f"invalid TIMESTAMP_LTZ({self.precision}): precision must be 0..9")

    def _sql(self) -> str:
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"


@dataclass(frozen=True, slots=True)
class ArrayType(DataType):
    element: DataType = field(default_factory=IntType)

    def _sql(self) -> str:
        return f"ARRAY<{self.element.as_sql()}>"

    def to_json(self) -> JsonType:
        return {"type": "ARRAY" + ("" if self.nullable else " NOT NULL"), "element": self.element.to_json()}


@dataclass(frozen=True, slots=True)
class MultisetType(DataType):
    element: DataType = field(default_factory=IntType)

    def _sql(self) -> str:
        return f"MULTISET<{self.element.as_sql()}>"

    def to_json(self) -> JsonType:
        return {"type": "MULTISET" + ("" if self.nullable else " NOT NULL"), "element": self.element.to_json()}


@dataclass(frozen=True, slots=True)
class MapType(DataType):
    key: DataType = field(default_factory=IntType)
    value: DataType = field(default_factory=IntType)

    def _sql(self) -> str:
        return f"MAP<{self.key.as_sql()}, {self.value.as_sql()}>"

    def to_json(self) -> JsonType:
        return {
            "type": "MAP" + ("" if self.nullable else " NOT NULL"),
            "key": self.key.to_json(),
            "value": self.value.to_json(),
        }


@dataclass(frozen=True, slots=True)
class DataField:
    """A named, id-carrying column (org.apache.paimon.types.DataField)."""

    id: int
    name: str
    type: DataType
    description: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> DataField:
        try:
            return DataField(
                id=int(obj["id"]),
                name=str(obj["name"]),
                type=parse_type(obj["type"]),
                description=obj.get("description"),
            )
        except KeyError as e:
            raise SchemaError(f"data field {obj!r} lacks key {e.args[0]!r}") from None


@dataclass(frozen=True, slots=True)
class RowType(DataType):
    fields: tuple[DataField, ...] = ()

    def _sql(self) -> str:
        inner = ", ".join(f"{f.name} {f.type.as_sql()}" for f in self.fields)
        return f"ROW<{inner}>"

    def to_json(self) -> JsonType:
        return {"type": "ROW" + ("" if self.nullable else " NOT NULL"), "fields": [f.to_json() for f in self.fields]}

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"no field {name!r} in {self.field_names}")


ATOMIC_TYPES: tuple[type[DataType], ...] = (
    BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DateType,
    DecimalType, CharType, VarCharType, BinaryType, VarBinaryType, TimeType, TimestampType,
    LocalZonedTimestampType,
)

_INT_ALIASES: dict[str, type[DataType]] = {
    "BOOLEAN": BooleanType,
    "TINYINT": TinyIntType,
    "SMALLINT": SmallIntType,
    "INT": IntType,
    "INTEGER": IntType,
    "BIGINT": BigIntType,
    "FLOAT": FloatType,
    "DOUBLE": DoubleType,
    "DOUBLE PRECISION": DoubleType,
    "DATE": DateType,
}

_ATOMIC_RE = re.compile(
    r"^\s*(?P<name>[A-Z_]+(?: PRECISION)?)\s*(?:\(\s*(?P<a>\d+)\s*(?:,\s*(?P<b>\d+)\s*)?\))?"
    r"(?P<ltz>\s+WITH LOCAL TIME ZONE)?\s*$"
)


# types of Paimon 1.x/2.0 that this implementation does not read or write
_NEWER_TYPES = ("BLOB", "VARIANT", "VECTOR")


def _refuse_newer_type(upper: str, text: Any) -> None:
    head = re.split(r"[\s(<]", upper.strip(), maxsplit=1)[0]
    if head in _NEWER_TYPES:
        raise UnsupportedFeatureError(f"the {head} type (Paimon 1.x/2.0) is not supported: {text!r}")


def _parse_atomic(text: str) -> DataType:
    upper = text.strip().upper()
    nullable = True
    if upper.endswith("NOT NULL"):
        nullable = False
        upper = upper[: -len("NOT NULL")].rstrip()
    elif upper.endswith(" NULL"):
        upper = upper[: -len(" NULL")].rstrip()
    _refuse_newer_type(upper, text)
    m = _ATOMIC_RE.match(upper)
    if not m:
        raise SchemaError(f"cannot parse Paimon type {text!r}")
    name, a, b, ltz = m.group("name"), m.group("a"), m.group("b"), m.group("ltz")
    ia = int(a) if a is not None else None
    ib = int(b) if b is not None else None
    if name in _INT_ALIASES and ia is None:
        return _INT_ALIASES[name](nullable=nullable)
    if name in ("DECIMAL", "DEC", "NUMERIC"):
        return DecimalType(ia if ia is not None else 10, ib if ib is not None else 0, nullable=nullable)
    if name == "STRING" and ia is None:
        return VarCharType(MAX_LENGTH, nullable=nullable)
    if name == "BYTES" and ia is None:
        return VarBinaryType(MAX_LENGTH, nullable=nullable)
    if name == "VARCHAR":
        return VarCharType(ia if ia is not None else 1, nullable=nullable)
    if name == "CHAR":
        return CharType(ia if ia is not None else 1, nullable=nullable)
    if name == "VARBINARY":
        return VarBinaryType(ia if ia is not None else 1, nullable=nullable)
    if name == "BINARY":
        return BinaryType(ia if ia is not None else 1, nullable=nullable)
    if name == "TIME" and ltz is None:
        return TimeType(ia if ia is not None else 0, nullable=nullable)
    if name == "TIMESTAMP":
        p = ia if ia is not None else 6
        return LocalZonedTimestampType(p, nullable=nullable) if ltz else TimestampType(p, nullable=nullable)
    if name == "TIMESTAMP_LTZ" and ltz is None:
        return LocalZonedTimestampType(ia if ia is not None else 6, nullable=nullable)
    raise SchemaError(f"unsupported Paimon type {text!r}")


def parse_type(obj: JsonType) -> DataType:
    """Parse a type as it appears in schema/schema-N JSON (DataTypeJsonParser)."""
    if isinstance(obj, str):
        return _parse_atomic(obj)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise SchemaError(f"cannot parse Paimon type {obj!r}")
    kind: str = obj["type"]
    _refuse_newer_type(kind.upper(), obj)
    nullable = "NOT NULL" not in kind.upper()
    head = kind.upper().split()[0] if kind.strip() else ""
    try:
        if head == "ARRAY":
            return ArrayType(parse_type(obj["element"]), nullable=nullable)
        if head == "MULTISET":
            return MultisetType(parse_type(obj["element"]), nullable=nullable)
        if head == "MAP":
            return MapType(parse_type(obj["key"]), parse_type(obj["value"]), nullable=nullable)
        if head == "ROW":
            return RowType(tuple(DataField.from_json(f) for f in obj["fields"]), nullable=nullable)
    except KeyError as e:
        raise SchemaError(f"composite type {obj!r} lacks key {e.args[0]!r}") from None
    raise SchemaError(f"unsupported Paimon type {obj!r}")


def is_string(t: DataType) -> bool:
    return isinstance(t, (VarCharType, CharType))


def is_binary(t: DataType) -> bool:
    return isinstance(t, (VarBinaryType, BinaryType))


def is_atomic(t: DataType) -> bool:
    return isinstance(t, ATOMIC_TYPES)


def timestamp_precision(t: DataType) -> int | None:
    """Precision of TIMESTAMP / TIMESTAMP_LTZ, else None."""
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return t.precision
    return None


def nested_fields(t: DataType) -> list[DataField]:
    """Every DataField nested inside t (ROW fields at any depth inside ARRAY/MAP/ROW), pre-order."""
    out: list[DataField] = []
    if isinstance(t, RowType):
        for f in t.fields:
            out.append(f)
            out.extend(nested_fields(f.type))
    elif isinstance(t, (ArrayType, MultisetType)):
        out.extend(nested_fields(t.element))
    elif isinstance(t, MapType):
        out.extend(nested_fields(t.key))
        out.extend(nested_fields(t.value))
    return out
