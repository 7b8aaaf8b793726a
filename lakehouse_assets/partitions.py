"""Dagster partitions -> Paimon table partitions: one partition spec per Dagster partition key, checked up front.

Static and dynamic partitions map to a string column holding the key. Time windows map to a ``date`` column
(daily or coarser windows: the window's first day), a ``timestamp`` column (the window start; wall-clock time in
the partitions' timezone for a timestamp without time zone) or a string column (the key as Dagster formats it).
Multi-partitions map each dimension to its own column (``partition_expr`` a dict dimension -> column).
"""

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pyarrow as pa

from lakehouse_assets.table_spec import PaimonAssetError

_SAMPLE = 5


@dataclass(frozen=True)
class PartitionSlice:
    """The table partitions of a set of Dagster partition keys: ``specs[i]`` is the spec of ``keys[i]``."""

    columns: tuple[str, ...]
    keys: tuple[str, ...]
    specs: tuple[Mapping[str, Any], ...]

    def filter(self) -> list[Any]:
        """A DNF filter selecting exactly these partitions (for ``table.scan(filter=...)``)."""
        if len(self.columns) == 1:
            (column,) = self.columns
            return [(column, "in", [spec[column] for spec in self.specs])]
        return [[(column, "=", spec[column]) for column in self.columns] for spec in self.specs]

    def check_rows(self, distinct: pa.Table, *, where: str) -> None:
        """Raise unless every distinct combination of partition values lies in one of the partitions."""
        allowed = {tuple(spec[c] for c in self.columns) for spec in self.specs}
        rows = zip(*(distinct.column(c).to_pylist() for c in self.columns), strict=True)
        outside = [row for row in rows if row not in allowed]
        if outside:
            shown = ", ".join(str(dict(zip(self.columns, row, strict=True))) for row in outside[:_SAMPLE])
            more = f" and {len(outside) - _SAMPLE} more" if len(outside) > _SAMPLE else ""
            keys = ", ".join(self.keys[:_SAMPLE]) + (" ..." if len(self.keys) > _SAMPLE else "")
            raise PaimonAssetError(
                f"{where}: rows of partition {shown}{more} lie outside the materialized partition(s) [{keys}] "
                f"(partition_expr {', '.join(self.columns)}); nothing was written"
            )


def partition_columns(partitions_def: dg.PartitionsDefinition, partition_expr: Any, *, where: str) -> dict[str, str]:
    """Dimension name -> column (the single dimension of a one-dimensional definition is named "")."""
    if partition_expr is None:
        raise PaimonAssetError(
            f"{where} is partitioned but has no 'partition_expr' metadata naming the table partition column "
            "(a dict dimension -> column for multi-partitions)"
        )
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        dims = [d.name for d in partitions_def.partitions_defs]
        if not isinstance(partition_expr, Mapping) or set(partition_expr) != set(dims):
            raise PaimonAssetError(
                f"{where}: multi-partitioned by {dims}, so 'partition_expr' must be a dict naming one column "
                f"per dimension, not {partition_expr!r}"
            )
        return {d: str(partition_expr[d]) for d in dims}
    if not isinstance(partition_expr, str):
        raise PaimonAssetError(f"{where}: 'partition_expr' must be a column name, not {partition_expr!r}")
    return {"": partition_expr}


def partition_slice(
    partitions_def: dg.PartitionsDefinition,
    partition_keys: Sequence[str],
    partition_expr: Any,
    *,
    schema: pa.Schema,
    table_partition_keys: Sequence[str],
    where: str,
) -> PartitionSlice:
    """Check `partition_expr` against the table (partition column, type) and map each key to a partition spec."""
    columns = partition_columns(partitions_def, partition_expr, where=where)
    for column in columns.values():
        if column not in table_partition_keys:
            raise PaimonAssetError(
                f"{where}: partition_expr column {column!r} is not a partition key of the table "
                f"(partition keys: {list(table_partition_keys)}); declare it in metadata 'partition_keys'"
            )
        if column not in schema.names:
            raise PaimonAssetError(f"{where}: partition_expr column {column!r} is not a column ({schema.names})")
    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        dim_defs = {d.name: d.partitions_def for d in partitions_def.partitions_defs}
        keys_by_dim = [_multi_key(partitions_def, key).keys_by_dimension for key in partition_keys]
    else:
        dim_defs = {"": partitions_def}
        keys_by_dim = [{"": key} for key in partition_keys]
    converters = {
        dim: _converter(dim_defs[dim], schema.field(column).type, column=column, where=where)
        for dim, column in columns.items()
    }
    specs = tuple(
        {column: converters[dim](keys[dim]) for dim, column in columns.items()} for keys in keys_by_dim
    )
    return PartitionSlice(columns=tuple(columns.values()), keys=tuple(partition_keys), specs=specs)


def _multi_key(partitions_def: dg.MultiPartitionsDefinition, key: str) -> dg.MultiPartitionKey:
    return key if isinstance(key, dg.MultiPartitionKey) else partitions_def.get_partition_key_from_str(key)


def _converter(dim_def: dg.PartitionsDefinition, arrow_type: pa.DataType, *, column: str, where: str) -> Any:
    """key -> the column value of that partition, after checking that the column type can hold it."""
    is_string = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    if not isinstance(dim_def, dg.TimeWindowPartitionsDefinition):
        if not is_string:
            raise PaimonAssetError(
                f"{where}: partition column {column!r} is {arrow_type}, but static and dynamic partition keys "
                "need a string column"
            )
        return str
    if is_string:
        return str

    def start(key: str) -> dt.datetime:
        return dim_def.time_window_for_partition_key(key).start

    if pa.types.is_date(arrow_type):
        def day(key: str) -> dt.date:
            window = dim_def.time_window_for_partition_key(key)
            if window.start.time() != dt.time(0) or window.end - window.start < dt.timedelta(days=1):
                raise PaimonAssetError(
                    f"{where}: partition {key!r} is a window shorter than a day, but partition column "
                    f"{column!r} is a date; use a timestamp or string column"
                )
            return window.start.date()

        return day
    if pa.types.is_timestamp(arrow_type):
        if arrow_type.tz is None:
            return lambda key: start(key).replace(tzinfo=None)
        return lambda key: start(key).astimezone(dt.timezone.utc)
    raise PaimonAssetError(
        f"{where}: partition column {column!r} is {arrow_type}, but time-window partitions need a date, "
        "timestamp or string column"
    )
