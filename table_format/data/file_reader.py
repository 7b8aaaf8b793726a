"""Reads one data file of a table as Arrow, evolved to the current schema, deletion vector applied.

Mirrors KeyValueFileReaderFactory / SchemaEvolutionUtil: a file written under an older schema is read
with that schema's column names and mapped to the current columns by field id (missing -> null).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.data.arrow_schema import to_arrow_field
from table_format.data.deletion_vector import DeletionFile, read_deletion_vector
from table_format.data.file_format import read_file
from table_format.meta.manifest import DataFileMeta
from table_format.store.file_store import FileStore


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
    file_names = []
    for n in names:
        old = by_id.get(current.field(n).id)
        file_names.append(old.name if old is not None else None)
    path = store.data_file_path(partition, bucket, file.file_name, file.external_path)
    raw = read_file(store.file_io, path, columns=[c for c in file_names if c] + list(system))
    if deletion_file is not None:
        deleted = read_deletion_vector(store.file_io, deletion_file)
        if len(deleted):
            keep = np.ones(raw.num_rows, dtype=bool)
            keep[deleted[deleted < raw.num_rows]] = False
            raw = raw.filter(pa.array(keep))
    arrays = []
    fields = []
    for n, fn in zip(names, file_names, strict=True):
        field = to_arrow_field(current.field(n))
        if fn is not None and fn in raw.column_names:
            arrays.append(_cast_column(raw.column(fn), field))
        else:
            arrays.append(pa.nulls(raw.num_rows, field.type))
        fields.append(field)
    for s in system:
        arrays.append(raw.column(s))
        fields.append(raw.schema.field(s))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
