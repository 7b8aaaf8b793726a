"""Render Arrow rows the way the paimon-oracle prints them, so results compare as JSON lines."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa

from table_format.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
)


class _Nanos:
    """A TIMESTAMP(7..9) value: datetime.datetime has no nanoseconds, so keep them beside it."""

    def __init__(self, epoch_nanos: int) -> None:
        seconds, self.nanos = divmod(epoch_nanos, 1_000_000_000)
        self.seconds = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)


def _ts(value: dt.datetime | _Nanos, precision: int) -> str:
    if isinstance(value, _Nanos):
        base = value.seconds.strftime("%Y-%m-%dT%H:%M:%S")
        return base + "." + f"{value.nanos:09d}"[:precision] if precision else base
    if value.tzinfo is not None:
        value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    base = value.strftime("%Y-%m-%dT%H:%M:%S")
    if precision == 0:
        return base
    frac = f"{value.microsecond:06d}" + "000"
    return base + "." + frac[:precision]


def render(value: Any, t: DataType) -> Any:
    if value is None:
        return None
    if isinstance(t, DecimalType):
        with decimal.localcontext() as ctx:
            ctx.prec = 80  # DECIMAL(38, s) does not fit the default 28 digits
            return format(Decimal(value).quantize(Decimal(1).scaleb(-t.scale)), "f")
    if isinstance(t, (VarBinaryType, BinaryType)):
        return base64.b64encode(value).decode()
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return _ts(value, t.precision)
    if isinstance(t, TimeType):  # the oracle prints at most millis
        digits = min(3, t.precision)
        return value.strftime("%H:%M:%S") + ("." + f"{value.microsecond:06d}"[:digits] if digits else "")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(t, ArrayType):
        return [render(v, t.element) for v in value]
    if isinstance(t, (MapType, MultisetType)):
        kt, vt = (t.key, t.value) if isinstance(t, MapType) else (t.element, None)
        pairs = [[render(k, kt), render(v, vt) if vt is not None else v] for k, v in value]
        return sorted(pairs, key=lambda p: json.dumps(p[0]))
    if isinstance(t, RowType):
        return {f.name: render(value.get(f.name), f.type) for f in t.fields}
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return value


def canonical_lines(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in rows)


def ours_as_oracle(table: pa.Table, fields: list[Any]) -> list[str]:
    """Our rows (Arrow) rendered as the oracle renders them, sorted canonical JSON lines."""
    types = {f.name: f.type for f in fields}
    columns = {}
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
            nanos = column.cast(pa.int64()).to_pylist()  # as_py() cannot give nanoseconds without pandas
            columns[name] = [None if n is None else _Nanos(n) for n in nanos]
        else:
            columns[name] = column.to_pylist()
    rows = [
        {k: render(columns[k][i], types[k]) for k in table.column_names} for i in range(table.num_rows)
    ]
    return canonical_lines(rows)


def oracle_lines(rows: list[dict[str, Any]]) -> list[str]:
    return canonical_lines(rows)
