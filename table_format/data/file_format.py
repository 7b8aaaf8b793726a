"""Data-file formats: Parquet, ORC and Avro files <-> Arrow tables.

Mirrors Paimon's FileFormat implementations (ParquetFileFormat, OrcFileFormat, AvroFileFormat): the
format of a file comes from its extension (DataFilePathFactory.formatIdentifier), so mixed-format
tables read fine. Parquet is written with Paimon's field ids, zstd level 1 by default and the
timestamp bands of ParquetSchemaConverter (INT96 for precision > 6).
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from table_format.data.avro_data import read_avro_table, write_avro_table
from table_format.errors import CorruptMetadataError, OptionError
from table_format.io.file_io import FileIO

_COMPRESSION_EXTS = {"gz", "zst", "zstd", "snappy", "lz4", "bz2", "deflate", "lzo", "br", "xz"}
_PARQUET_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "none": "none", "brotli": "brotli"}
_ORC_CODECS = {"zstd": "zstd", "snappy": "snappy", "lz4": "lz4", "zlib": "zlib", "none": "uncompressed"}


def format_of(file_name: str) -> str:
    """Format identifier of a data file name, e.g. 'data-x-0.parquet' -> 'parquet'."""
    parts = file_name.split(".")
    if len(parts) < 2:
        raise CorruptMetadataError(f"data file {file_name!r} has no format extension")
    ext = parts[-1].lower()
    if ext in _COMPRESSION_EXTS and len(parts) >= 3:
        ext = parts[-2].lower()
    return ext


def write_file(
    file_io: FileIO,
    path: str,
    table: pa.Table,
    *,
    file_format: str,
    compression: str = "zstd",
    zstd_level: int = 1,
) -> int:
    """Write `table` as one data file; returns its exact byte size (DataFileMeta._FILE_SIZE)."""
    buf = io.BytesIO()
    if file_format == "parquet":
        codec = _PARQUET_CODECS.get(compression)
        if codec is None:
            raise OptionError(f"option 'file.compression': {compression!r} is not supported for parquet")
        needs_int96 = any(
            pa.types.is_timestamp(f.type) and f.type.unit == "ns" for f in table.schema
        )
        pq.write_table(
            table,
            buf,
            compression=codec,
            compression_level=zstd_level if codec == "zstd" else None,
            use_deprecated_int96_timestamps=needs_int96,
            coerce_timestamps=None,
            allow_truncated_timestamps=False,
            row_group_size=1 << 20,
            write_statistics=True,
            store_schema=False,
            store_decimal_as_integer=True,  # Paimon 0.9 reads DECIMAL(p<=18) only as INT32/INT64
        )
    elif file_format == "orc":
        codec = _ORC_CODECS.get(compression)
        if codec is None:
            raise OptionError(f"option 'file.compression': {compression!r} is not supported for orc")
        paorc.write_table(table, buf, compression=codec)
    elif file_format == "avro":
        buf.write(write_avro_table(table, compression=compression))
    else:
        raise OptionError(f"option 'file.format': {file_format!r} is not supported")
    data = buf.getvalue()
    file_io.write_bytes(path, data)
    return len(data)


def read_file(file_io: FileIO, path: str, *, columns: Sequence[str] | None = None) -> pa.Table:
    """Read a data file (all or some columns, by name) as Arrow; clear errors name the file."""
    fmt = format_of(path.rsplit("/", 1)[-1])
    try:
        if fmt == "parquet":
            with file_io.open_input_file(path) as f:
                pf = pq.ParquetFile(f)
                cols = _present(columns, pf.schema_arrow.names)
                return pf.read(columns=cols, use_threads=True)
        if fmt == "orc":
            with file_io.open_input_file(path) as f:
                of = paorc.ORCFile(f)
                cols = _present(columns, of.schema.names)
                return of.read(columns=cols)
        if fmt == "avro":
            table = read_avro_table(file_io.read_bytes(path), source=path)
            cols = _present(columns, table.column_names)
            return table.select(cols) if cols is not None else table
    except FileNotFoundError:
        raise CorruptMetadataError(f"data file {path} is missing (referenced by a manifest)") from None
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, ValueError) as e:
        raise CorruptMetadataError(f"data file {path} is unreadable: {e}") from None
    raise CorruptMetadataError(f"data file {path}: unsupported format {fmt!r}")


def _present(columns: Sequence[str] | None, names: Sequence[str]) -> list[str] | None:
    if columns is None:
        return None
    have = set(names)
    return [c for c in columns if c in have]
