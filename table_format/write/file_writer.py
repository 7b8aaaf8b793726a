"""Writes one sorted slice of rows of one (partition, bucket) as data files, rolling at target-file-size.

Mirrors KeyValueDataFileWriter / RowDataRollingFileWriter: primary-key files get `_KEY_<k>`,
`_SEQUENCE_NUMBER`, `_VALUE_KIND` before the table columns and carry min/max keys and key stats;
append files hold the table columns only. Returns DataFileMeta records ready for a manifest.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import FIELD_ID_KEY, to_arrow_field
from table_format.data.file_format import write_file
from table_format.data.file_index import INDEX_SUFFIX, FileIndexOptions, build_index
from table_format.data.stats import collect_stats, to_simple_stats
from table_format.meta.manifest import (
    EMPTY_ROW,
    EMPTY_STATS,
    DataFileMeta,
    FileSource,
    local_wall_clock_millis,
)
from table_format.row.binary_row import encode_row
from table_format.row.row_kind import (
    KEY_FIELD_ID_START,
    KEY_PREFIX,
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_FIELD_ID,
    VALUE_KIND,
    VALUE_KIND_FIELD_ID,
    RowKind,
)
from table_format.store.file_store import FileStore


def kv_schema(store: FileStore) -> pa.Schema:
    """Physical schema of primary-key data files (KeyValue.createKeyValueFields)."""
    fields = []
    for f in store.key_fields:
        af = to_arrow_field(f)
        fields.append(
            pa.field(KEY_PREFIX + f.name, af.type, nullable=False,
                     metadata={FIELD_ID_KEY: str(f.id + KEY_FIELD_ID_START).encode()})
        )
    fields.append(pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False,
                           metadata={FIELD_ID_KEY: str(SEQUENCE_NUMBER_FIELD_ID).encode()}))
    fields.append(pa.field(VALUE_KIND, pa.int8(), nullable=False,
                           metadata={FIELD_ID_KEY: str(VALUE_KIND_FIELD_ID).encode()}))
    fields.extend(to_arrow_field(f) for f in store.schema.fields)
    return pa.schema(fields)


class DataFileWriter:
    """Writes files of one (partition, bucket) directory."""

    def __init__(self, store: FileStore, partition: bytes, bucket: int, *, level: int = 0,
                 file_source: FileSource = FileSource.APPEND, prefix: str = "data-") -> None:
        self.store = store
        self.partition = partition
        self.bucket = bucket
        self.level = level
        self.file_source = file_source
        self.prefix = prefix
        self.directory = store.paths.bucket_dir(store.partition_path(partition), bucket)
        self.written_paths: list[str] = []
        self.index_options = FileIndexOptions.parse(store.options.raw, store.schema.fields, table=store.identifier)

    def write(self, rows: pa.Table, *, sequence_numbers: np.ndarray, kinds: pa.Array | None) -> list[DataFileMeta]:
        """rows: table columns in schema order, already sorted (by key for PK tables)."""
        if rows.num_rows == 0:
            return []
        target = self.store.options.target_file_size
        per_row = max(1.0, rows.nbytes / rows.num_rows)
        chunk = max(1, int(target / per_row))
        out: list[DataFileMeta] = []
        start = 0
        while start < rows.num_rows:
            end = min(rows.num_rows, start + chunk)
            meta = self._write_one(rows.slice(start, end - start), sequence_numbers[start:end],
                                   None if kinds is None else kinds.slice(start, end - start))
            out.append(meta)
            # adapt the chunk to the real (compressed) bytes per row of what we just wrote
            chunk = max(1, int(target / max(1e-3, meta.file_size / meta.row_count)))
            start = end
        return out

    def write_file(self, rows: pa.Table, *, sequence_numbers: np.ndarray, kinds: pa.Array | None) -> DataFileMeta:
        """`rows` (non-empty, sorted) as exactly one file, whatever its size (callers that roll files themselves)."""
        return self._write_one(rows, sequence_numbers, kinds)

    def _write_one(self, rows: pa.Table, seqs: np.ndarray, kinds: pa.Array | None) -> DataFileMeta:
        store = self.store
        fmt = store.options.file_format
        name = store.paths.new_name(self.prefix, "." + fmt)
        path = f"{self.directory}/{name}"
        n = rows.num_rows
        schema_fields = list(store.schema.fields)
        value_stats = to_simple_stats(
            collect_stats(rows, [f.name for f in schema_fields], [f.type for f in schema_fields]),
            [f.type for f in schema_fields],
        )
        if store.has_primary_key:
            kinds = kinds if kinds is not None else pa.array(np.zeros(n, dtype=np.int8))
            key_names = [f.name for f in store.key_fields]
            physical = pa.Table.from_arrays(
                [rows.column(k) for k in key_names]
                + [pa.array(seqs, type=pa.int64()), kinds]
                + rows.columns,
                schema=kv_schema(store),
            )
            key_types = store.key_types
            first = [rows.column(k)[0].as_py() for k in key_names]
            last = [rows.column(k)[n - 1].as_py() for k in key_names]
            min_key = encode_row(first, key_types)
            max_key = encode_row(last, key_types)
            key_stats = to_simple_stats(collect_stats(rows, key_names, key_types, mode="full"), key_types)
            delete_rows = int(pc.sum(pc.is_in(kinds, pa.array([RowKind.UPDATE_BEFORE, RowKind.DELETE],
                                                             pa.int8()))).as_py() or 0)
        else:
            physical = rows
            min_key = max_key = EMPTY_ROW
            key_stats = EMPTY_STATS
            delete_rows = 0
        self.written_paths.append(path)  # before writing: a failed write leaves a partial file to delete
        size = write_file(store.file_io, path, physical, file_format=fmt,
                          compression=store.options.file_compression, zstd_level=store.options.zstd_level,
                          parquet_block_size=store.options.parquet_block_size,
                          parquet_page_rows=store.options.parquet_page_rows,
                          orc_stripe_size=store.options.orc_stripe_size)
        extra_files, embedded_index = self._write_index(rows, name)
        return DataFileMeta(
            file_name=name,
            file_size=size,
            row_count=n,
            min_key=min_key,
            max_key=max_key,
            key_stats=key_stats,
            value_stats=value_stats,
            min_sequence_number=int(seqs.min()),
            max_sequence_number=int(seqs.max()),
            schema_id=store.schema.id,
            level=self.level,
            extra_files=extra_files,
            creation_time=local_wall_clock_millis(),
            delete_row_count=delete_rows,
            embedded_index=embedded_index,
            file_source=int(self.file_source),
        )

    def _write_index(self, rows: pa.Table, name: str) -> tuple[tuple[str, ...], bytes | None]:
        """The file index of a data file (DataFileIndexWriter): (extra files, embedded index). At most
        `file-index.in-manifest-threshold` bytes go into the manifest, more into `<name>.index` beside the file."""
        options = self.index_options
        if not options.columns:
            return (), None
        data = build_index(rows, options)
        if len(data) <= options.in_manifest_threshold:
            return (), data
        index_name = name + INDEX_SUFFIX
        path = f"{self.directory}/{index_name}"
        self.written_paths.append(path)
        self.store.file_io.write_bytes(path, data)
        return (index_name,), None
