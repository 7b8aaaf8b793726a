"""Reads one data file of a table as Arrow, evolved to the current schema, deletion vector applied.

Mirrors KeyValueFileReaderFactory / SchemaEvolutionUtil: a file written under an older schema is read
with that schema's column names and mapped to the current columns by field id (missing -> null).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_field
from table_format.data.deletion_vector import DeletionFile, read_deletion_vector
from table_format.data.file_format import format_of, read_file
from table_format.errors import CorruptMetadataError
from table_format.meta.manifest import DataFileMeta
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND
from table_format.store.file_store import FileStore
from table_format.types import CharType

_SYSTEM_TYPES = {SEQUENCE_NUMBER: pa.int64(), VALUE_KIND: pa.int8()}


def _check_shape(raw: pa.Table, file: DataFileMeta, path: str, columns: Sequence[str]) -> None:
    """A damaged file must not read as other rows: its row count must be the manifest's, and every column its
    schema version has must be there (a flipped byte in a column name would otherwise read as nulls)."""
    if raw.num_rows != file.row_count:
        raise CorruptMetadataError(
            f"data file {path} holds {raw.num_rows} rows but its manifest entry says {file.row_count}"
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
) -> pa.Table:
    """Columns `names` (current schema) + physical system columns of one file."""
    current = store.schema
    file_schema = store.schema_by_id(file.schema_id)
    by_id = {fld.id: fld for fld in file_schema.fields}
    file_fields = [by_id.get(current.field(n).id) for n in names]
    file_names = [f.name if f is not None else None for f in file_fields]
    path = store.data_file_path(partition, bucket, file.file_name, file.external_path)
    present = [c for c in file_names if c is not None]
    raw = read_file(store.file_io, path, columns=present + list(system))
    _check_shape(raw, file, path, present + list(system))
    orc = format_of(file.file_name) == "orc"
    if deletion_file is not None:
        deleted = read_deletion_vector(store.file_io, deletion_file)
        if len(deleted):
            keep = np.ones(raw.num_rows, dtype=bool)
            keep[deleted[deleted < raw.num_rows]] = False
            raw = raw.filter(pa.array(keep))
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
