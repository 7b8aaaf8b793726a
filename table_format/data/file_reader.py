"""Reads one data file of a table as Arrow, evolved to the current schema, deletion vector applied.

Mirrors KeyValueFileReaderFactory / SchemaEvolutionUtil: a file written under an older schema is read
with that schema's column names and mapped to the current columns by field id (missing -> null).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_field
from table_format.data.deletion_vector import DeletionFile, read_deletion_vector
from table_format.data.file_format import format_of, iter_file_batches, read_file, read_file_pruned
from table_format.data.probe_read import RowProbe
from table_format.errors import CorruptMetadataError
from table_format.meta.manifest import DataFileMeta
from table_format.predicate import Predicate, equality_values
from table_format.predicate.mask import row_mask
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND
from table_format.schema import TableSchema
from table_format.store.file_store import FileStore
from table_format.types import (
    BigIntType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    IntType,
    SmallIntType,
    TinyIntType,
    VarCharType,
)

_SYSTEM_TYPES = {SEQUENCE_NUMBER: pa.int64(), VALUE_KIND: pa.int8()}
# Parquet statistics of these types read back as the column's Python values (floats: NaN is left out of min/max)
_MAX_PROBE_VALUES = 100_000  # a filter pinning a column to at most this many values decodes it first (RowProbe)
_PRUNABLE_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType, BooleanType, DateType, DecimalType, VarCharType)


def _stats_names(predicate: Predicate, current: TableSchema, file_schema: TableSchema) -> dict[str, str]:
    """File column name -> current name, for the predicate's columns whose row-group statistics can prune: same
    field id and the same type in the file (a widened or re-typed column's statistics are not compared)."""
    by_id = {f.id: f for f in file_schema.fields}
    out = {}
    for name in predicate.fields():
        target = current.field(name)
        in_file = by_id.get(target.id)
        if (in_file is not None and isinstance(target.type, _PRUNABLE_TYPES)
                and _same_type(in_file.type, target.type)):
            out[in_file.name] = name
    return out


def _row_probe(predicate: Predicate, to_current: dict[str, str], *, sorted_file: bool) -> RowProbe | None:
    """The mask of the rows (file column names) the filter's part on columns with row-group statistics keeps, for a
    filter pinning one of them to a few values (a key lookup) or any such filter on a file sorted by them (a
    primary-key file: a key range's rows are contiguous); None otherwise."""
    names = list(to_current.values())
    if not sorted_file and not any(
            equality_values(predicate, [n], max_combinations=_MAX_PROBE_VALUES) is not None for n in names):
        return None
    part = predicate.project(names)
    if part is None:
        return None
    fast = row_mask(part)
    if fast is not None:
        return lambda rows: fast(rows.rename_columns([to_current[c] for c in rows.column_names]))
    expression = part.to_arrow_expression()

    def probe(rows: pa.Table) -> np.ndarray:
        rows = rows.rename_columns([to_current[c] for c in rows.column_names])
        kept = rows.append_column("__row", pa.array(np.arange(rows.num_rows, dtype=np.int64))).filter(expression)
        mask = np.zeros(rows.num_rows, dtype=bool)
        mask[kept.column("__row").to_numpy()] = True
        return mask

    return probe


def _sort_column(store: FileStore, file_schema: TableSchema, to_current: dict[str, str]) -> str | None:
    """The file's name of the first key column (primary-key files are sorted by the key) when the filter tests it."""
    first = store.key_fields[0] if store.key_fields else None
    by_id = {f.id: f.name for f in file_schema.fields}
    name = by_id.get(first.id) if first is not None else None
    return name if name is not None and name in to_current else None


def _same_type(a: DataType, b: DataType) -> bool:
    return a.copy(nullable=True) == b.copy(nullable=True)


def _check_shape(raw: pa.Table, file: DataFileMeta, path: str, columns: Sequence[str], file_rows: int) -> None:
    """A damaged file must not read as other rows: its row count must be the manifest's, and every column its
    schema version has must be there (a flipped byte in a column name would otherwise read as nulls)."""
    if file_rows != file.row_count:
        raise CorruptMetadataError(
            f"data file {path} holds {file_rows} rows but its manifest entry says {file.row_count}"
        )
    missing = [c for c in columns if c not in raw.column_names]
    if missing:
        raise CorruptMetadataError(f"data file {path} lacks column(s) {missing} of the schema it was written with")


def _cast_column(col: pa.ChunkedArray | pa.Array, field: pa.Field) -> pa.ChunkedArray | pa.Array:
    if col.type == field.type:
        return col
    safe = not pa.types.is_timestamp(field.type) and not pa.types.is_time(field.type)
    return pc.cast(col, field.type, safe=safe)


def read_data_file(
    store: FileStore,
    partition: bytes,
    bucket: int,
    file: DataFileMeta,
    names: Sequence[str],
    *,
    system: Sequence[str] = (),
    deletion_file: DeletionFile | None = None,
    predicate: Predicate | None = None,
    prune_only: bool = False,
    sorted_file: bool = False,
) -> pa.Table:
    """Columns `names` (current schema) + physical system columns of one file. With a `predicate` (on columns of
    `names`), only the rows matching it are returned, and Parquet row groups whose statistics rule it out are
    not read; with `prune_only` every row of the row groups read is returned (Java's key filter: row groups).
    `sorted_file`: the file is sorted by the predicate's columns (a primary-key file and a key predicate), so a key
    range is decoded only up to its last row (data/probe_read.py)."""
    current = store.schema
    file_schema = store.schema_by_id(file.schema_id)
    by_id = {fld.id: fld for fld in file_schema.fields}
    file_fields = [by_id.get(current.field(n).id) for n in names]
    file_names = [f.name if f is not None else None for f in file_fields]
    path = store.data_file_path(partition, bucket, file.file_name, file.external_path)
    present = [c for c in file_names if c is not None]
    positions: np.ndarray | None = None
    filtered = False  # only the rows matching `predicate` were read
    verify = store.options.parquet_verify_checksums
    if predicate is None:
        raw = read_file(store.file_io, path, columns=present + list(system), verify_checksums=verify)
        _check_shape(raw, file, path, present + list(system), raw.num_rows)
    else:
        to_current = _stats_names(predicate, current, file_schema)

        def keep_group(mins: Any, maxs: Any, nulls: Any, rows: int) -> bool:
            return predicate.test_stats({to_current[k]: v for k, v in mins.items()},
                                        {to_current[k]: v for k, v in maxs.items()},
                                        {to_current[k]: v for k, v in nulls.items()}, rows)

        probe = None if prune_only else _row_probe(predicate, to_current, sorted_file=sorted_file)
        raw, positions, file_rows, filtered = read_file_pruned(
            store.file_io, path, columns=present + list(system), stats_columns=list(to_current), keep=keep_group,
            verify_checksums=verify, probe=probe,
            probe_exact=probe is not None and predicate.fields() <= set(to_current.values()),
            sorted_by=_sort_column(store, file_schema, to_current) if sorted_file else None)
        _check_shape(raw, file, path, present + list(system), file_rows)
    if deletion_file is not None:
        deleted = read_deletion_vector(store.file_io, deletion_file)
        if len(deleted):
            if positions is None:
                keep = np.ones(raw.num_rows, dtype=bool)
                keep[deleted[deleted < raw.num_rows]] = False
            else:
                keep = ~np.isin(positions, deleted)
            raw = raw.filter(pa.array(keep))
    out = _evolve(raw, current, names, file_fields, system, path, orc=format_of(file.file_name) == "orc")
    if predicate is None or prune_only or filtered:
        return out
    return out.filter(predicate.to_arrow_expression())


def iter_data_file(
    store: FileStore,
    partition: bytes,
    bucket: int,
    file: DataFileMeta,
    names: Sequence[str],
    *,
    batch_rows: int,
    system: Sequence[str] = (),
    deletion_file: DeletionFile | None = None,
    predicate: Predicate | None = None,
    prune_only: bool = False,
) -> Iterator[pa.Table]:
    """`read_data_file` in slices of at most `batch_rows` rows of the file, in file order (a bounded part of the
    file in memory at a time); Parquet row groups whose statistics rule out `predicate` are not read."""
    current = store.schema
    file_schema = store.schema_by_id(file.schema_id)
    by_id = {fld.id: fld for fld in file_schema.fields}
    file_fields = [by_id.get(current.field(n).id) for n in names]
    path = store.data_file_path(partition, bucket, file.file_name, file.external_path)
    columns = [f.name for f in file_fields if f is not None] + list(system)
    orc = format_of(file.file_name) == "orc"
    deleted = read_deletion_vector(store.file_io, deletion_file) if deletion_file is not None else None
    to_current = _stats_names(predicate, current, file_schema) if predicate is not None else {}
    keep_group = None
    if predicate is not None:
        def keep_group(mins: Any, maxs: Any, nulls: Any, rows: int) -> bool:
            return predicate.test_stats({to_current[k]: v for k, v in mins.items()},
                                        {to_current[k]: v for k, v in maxs.items()},
                                        {to_current[k]: v for k, v in nulls.items()}, rows)
    checked = False
    for raw, start, file_rows in iter_file_batches(store.file_io, path, columns=columns, batch_rows=batch_rows,
                                                   stats_columns=list(to_current), keep=keep_group,
                                                   verify_checksums=store.options.parquet_verify_checksums):
        if not checked:
            _check_shape(raw, file, path, columns, file_rows)
            checked = True
        if deleted is not None and len(deleted):
            keep = ~np.isin(np.arange(start, start + raw.num_rows, dtype=np.int64), deleted)
            if not keep.all():
                raw = raw.filter(pa.array(keep))
        out = _evolve(raw, current, names, file_fields, system, path, orc=orc)
        if predicate is not None and not prune_only:
            out = out.filter(predicate.to_arrow_expression())
        if out.num_rows:
            yield out


def _evolve(raw: pa.Table, current: TableSchema, names: Sequence[str], file_fields: Sequence[DataField | None],
            system: Sequence[str], path: str, *, orc: bool) -> pa.Table:
    """Rows of a file (its own column names) as columns `names` of the current schema + system columns."""
    arrays = []
    fields = []
    for n, file_field in zip(names, file_fields, strict=True):
        target = current.field(n)
        field = to_arrow_field(target)
        if file_field is not None and file_field.name in raw.column_names:
            fn = file_field.name
            try:
                col = _cast_column(raw.column(fn), field)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise CorruptMetadataError(
                    f"data file {path}: column {fn!r} of type {raw.column(fn).type} does not read as "
                    f"{field.type} ({e})"
                ) from None
            if orc and isinstance(file_field.type, CharType):
                col = pc.utf8_rtrim(col, characters=" ")  # ORC pads CHAR(n) with spaces; Java's ORC reader trims
            if isinstance(target.type, CharType) and not (
                isinstance(file_field.type, CharType) and file_field.type.length == target.type.length
            ):
                col = pc.utf8_rpad(col, width=target.type.length)  # cast to CHAR(n): Java's cast pads to n
            arrays.append(col)
        else:
            arrays.append(pa.nulls(raw.num_rows, field.type))
        fields.append(field)
    for s in system:
        # Avro files hold _VALUE_KIND as int and ORC may widen: system columns get their canonical types
        canonical = _SYSTEM_TYPES.get(s)
        col = raw.column(s)
        if canonical is not None and col.type != canonical:
            try:
                col = pc.cast(col, canonical)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise CorruptMetadataError(f"data file {path}: system column {s!r} is unreadable ({e})") from None
        arrays.append(col)
        fields.append(pa.field(s, col.type, nullable=False))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
