"""Column statistics of a data file (min, max, null count), one whole column at a time.

Mirrors org.apache.paimon.format.SimpleStatsCollector / SimpleStatsConverter with the default
`metadata.stats-mode` = truncate(16): strings are cut to 16 code points (max bumped so it stays an
upper bound), binary and complex columns carry only null counts, NaN makes a float column's min/max
unknown.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_format.meta.manifest import SimpleStats
from table_format.row.binary_row import encode_row
from table_format.types import (
    DataType,
    DoubleType,
    FloatType,
    is_atomic,
    is_binary,
    is_string,
)

TRUNCATE_LENGTH = 16


@dataclass(frozen=True, slots=True)
class ColumnStats:
    min: Any
    max: Any
    null_count: int | None


def _truncate_min(s: str) -> str:
    return s[:TRUNCATE_LENGTH]


def _truncate_max(s: str) -> str | None:
    if len(s) <= TRUNCATE_LENGTH:
        return s
    head = list(s[:TRUNCATE_LENGTH])
    for i in range(len(head) - 1, -1, -1):
        cp = ord(head[i]) + 1
        if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
            head[i] = chr(cp)
            return "".join(head[: i + 1])
    return None


def _nanosecond_bounds(column: pa.ChunkedArray | pa.Array) -> tuple[dt.datetime, dt.datetime]:
    """Min floored and max ceiled to whole microseconds (datetime has no nanoseconds; both stay true bounds)."""
    mm = pc.min_max(column.cast(pa.int64()))
    lo_ns, hi_ns = mm["min"].as_py(), mm["max"].as_py()
    tz = dt.timezone.utc if column.type.tz is not None else None
    epoch = dt.datetime(1970, 1, 1, tzinfo=tz)
    return epoch + dt.timedelta(microseconds=lo_ns // 1000), epoch + dt.timedelta(microseconds=-(-hi_ns // 1000))


def column_stats(column: pa.ChunkedArray | pa.Array, data_type: DataType, *, mode: str = "truncate") -> ColumnStats:
    """Min/max/null count of one column; min/max None where Paimon records none."""
    null_count = column.null_count
    if mode == "none":
        return ColumnStats(None, None, None)
    if mode == "counts" or not is_atomic(data_type) or is_binary(data_type):
        return ColumnStats(None, None, null_count)
    if len(column) == null_count:
        return ColumnStats(None, None, null_count)
    if isinstance(data_type, (FloatType, DoubleType)) and pc.any(pc.is_nan(column)).as_py():
        return ColumnStats(None, None, null_count)
    lo: Any
    hi: Any
    if pa.types.is_timestamp(column.type) and column.type.unit == "ns":  # TIMESTAMP(7..9)
        lo, hi = _nanosecond_bounds(column)
    else:
        mm = pc.min_max(column)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if is_string(data_type) and mode == "truncate":
        lo = _truncate_min(lo)
        hi = _truncate_max(hi)
        if hi is None:
            lo = None
    if isinstance(lo, float) and (math.isnan(lo) or (hi is not None and math.isnan(hi))):
        return ColumnStats(None, None, null_count)
    return ColumnStats(lo, hi, null_count)


def collect_stats(
    table: pa.Table, names: Sequence[str], types: Sequence[DataType], *, mode: str = "truncate"
) -> list[ColumnStats]:
    """Stats of the named columns; mode 'full' for keys (no truncation), 'truncate' for values."""
    return [column_stats(table.column(n), t, mode=mode) for n, t in zip(names, types, strict=True)]


def to_simple_stats(stats: Sequence[ColumnStats], types: Sequence[DataType]) -> SimpleStats:
    """Encode as the SimpleStats record: two BinaryRows (all fields nullable) + null counts."""
    nullable = [t.copy(nullable=True) for t in types]
    return SimpleStats(
        min_values=encode_row([s.min for s in stats], nullable, stats=True),
        max_values=encode_row([s.max for s in stats], nullable, stats=True),
        null_counts=tuple(s.null_count for s in stats),
    )
