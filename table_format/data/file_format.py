"""Data-file formats: Parquet, ORC and Avro files <-> Arrow tables.

Mirrors Paimon's FileFormat implementations (ParquetFileFormat, OrcFileFormat, AvroFileFormat): the
format of a file comes from its extension (DataFilePathFactory.formatIdentifier), so mixed-format
tables read fine. Parquet is written with Paimon's field ids, zstd level 1 by default and the
timestamp bands of ParquetSchemaConverter (INT96 for precision > 6).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pyarrow.orc as paorc
import pyarrow.parquet as pq

from table_format.data.avro_data import read_avro_table, write_avro_table
from table_format.data.orc_stats import read_orc_pruned
from table_format.data.page_index import read_by_pages
from table_format.data.probe_read import RowProbe, StatsTest, probe_row_groups, read_probed
from table_format.errors import CorruptMetadataError, OptionError, UnsupportedFeatureError
from table_format.io.file_io import FileIO

_COMPRESSION_EXTS = {"gz", "zst", "zstd", "snappy", "lz4", "bz2", "deflate", "lzo", "br", "xz"}
_PARQUET_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "none": "none", "brotli": "brotli"}
# Rows per Parquet row group: a key range of a sorted file reads only the row groups it meets (their min/max
# statistics rule out the rest), so groups are capped well below a file; `parquet.block.size` (bytes, Java's
# ParquetOutputFormat option, default 128 MB) lowers it further for wide rows.
MAX_ROW_GROUP_ROWS = 1 << 17
DEFAULT_PARQUET_BLOCK_SIZE = 128 << 20
DEFAULT_PARQUET_PAGE_ROWS = 20_000  # parquet-mr's parquet.page.row.count.limit (and pyarrow's max_rows_per_page)
_MIN_ORC_STRIPE, _MAX_ORC_STRIPE = 1 << 20, 64 << 20  # pyarrow's default stripe size is the maximum
_DICTIONARY_SAMPLE_ROWS = 1 << 13
# Parquet reads go through Arrow's dataset reader: on local disks it decodes faster than ParquetFile.read (row groups
# read ahead on its IO threads). Every page's CRC32 is verified (pages written without one are not checked) unless the
# table sets `parquet.page.verify-checksum.enabled` = false (parquet-mr's key; its default is false, ours true).
_PARQUET_READERS = {verify: pads.ParquetFileFormat(
    default_fragment_scan_options=pads.ParquetFragmentScanOptions(page_checksum_verification=verify))
    for verify in (True, False)}
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
    parquet_block_size: int = DEFAULT_PARQUET_BLOCK_SIZE,
    parquet_page_rows: int = DEFAULT_PARQUET_PAGE_ROWS,
    orc_stripe_size: int | None = None,
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
        if needs_int96:
            table = _timestamps_as_int64_beside_int96(table)
        with file_io.open_output_stream(path) as out:  # streamed: no in-memory copy of the file
            pq.write_table(
                table,
                out,
                compression=codec,
                compression_level=zstd_level if codec == "zstd" else None,
                use_deprecated_int96_timestamps=needs_int96,
                coerce_timestamps=None,
                allow_truncated_timestamps=False,
                row_group_size=row_group_rows(table, parquet_block_size),
                use_dictionary=dictionary_columns(table),
                write_statistics=True,
                store_schema=False,
                store_decimal_as_integer=True,  # Paimon 0.9 reads DECIMAL(p<=18) only as INT32/INT64
                write_page_checksum=True,  # CRC32 of every page (Parquet spec): flipped bytes are detected, not read
                write_page_index=True,  # pages' min/max and locations: a key lookup decodes only its pages
                max_rows_per_page=parquet_page_rows,
            )
            return int(out.tell())
    elif file_format == "orc":
        codec = _ORC_CODECS.get(compression)
        if codec is None:
            raise OptionError(f"option 'file.compression': {compression!r} is not supported for orc")
        _check_orc_timestamps(table)
        paorc.write_table(_for_orc(table), buf, compression=codec, stripe_size=orc_stripe_size or orc_stripe_bytes(table, parquet_block_size))
    elif file_format == "avro":
        buf.write(write_avro_table(table, compression=compression))
    else:
        raise OptionError(f"option 'file.format': {file_format!r} is not supported")
    data = buf.getvalue()
    file_io.write_bytes(path, data)
    return len(data)


def row_group_rows(table: pa.Table, block_size: int) -> int:
    """Rows per Parquet row group: `block_size` bytes of (uncompressed) rows, at most MAX_ROW_GROUP_ROWS."""
    row_bytes = max(1, table.nbytes // max(1, table.num_rows))
    return max(1, min(MAX_ROW_GROUP_ROWS, block_size // row_bytes))


def dictionary_columns(table: pa.Table) -> list[str]:
    """Columns worth dictionary-encoding: at most half of a sample's values distinct (e.g. a category, a flag).

    Parquet writers try a dictionary per row group and fall back to plain encoding once it overflows; on a column
    of mostly distinct values (keys, measures, free text) every row group pays for the failed attempt, which made
    writes with Parquet-block-sized row groups several times slower than the same data in one row group.
    """
    sample = table.slice(0, min(table.num_rows, _DICTIONARY_SAMPLE_ROWS))
    out = []
    for name, column in zip(sample.column_names, sample.columns, strict=True):
        if pa.types.is_nested(column.type):
            continue
        if column.type == pa.bool_() or pc.count_distinct(column).as_py() * 2 <= max(1, len(column)):
            out.append(name)
    return out


def orc_stripe_bytes(table: pa.Table, block_size: int) -> int:
    """ORC stripe size for about as many rows as a Parquet row group (:func:`row_group_rows`), so that stripe
    statistics prune as finely; the ORC writer measures stripes after encoding, taken as ~4x smaller."""
    row_bytes = max(1, table.nbytes // max(1, table.num_rows))
    return max(_MIN_ORC_STRIPE, min(_MAX_ORC_STRIPE, row_group_rows(table, block_size) * row_bytes // 4))


def _timestamps_as_int64_beside_int96(table: pa.Table) -> pa.Table:
    """pyarrow's INT96 switch applies to every timestamp column of a file, but Paimon 0.9 reads TIMESTAMP(0..6)
    only from INT64 (ParquetSplitReaderUtil gives them a long vector; INT96 is for precision > 6). So in a file
    with a TIMESTAMP(7..9) column the ms/us columns are stored as plain INT64 epoch millis/micros, the same
    values Paimon writes; `file_reader` casts them back."""
    for i, f in enumerate(table.schema):
        if pa.types.is_timestamp(f.type) and f.type.unit != "ns":
            table = table.set_column(i, f.with_type(pa.int64()), table.column(i).cast(pa.int64()))
    return table


def _for_orc(table: pa.Table) -> pa.Table:
    """Work around what pyarrow's ORC writer cannot do.

    * ORC has no TIME type: Paimon stores TIME as an ORC int (millis of day); pyarrow cannot write time32.
    * A sliced struct column (offset > 0, e.g. one bucket's rows of a sorted batch) is written from offset 0,
      i.e. with the wrong rows (seen with pyarrow 26): such columns are copied to offset 0 first.
    """
    for i, f in enumerate(table.schema):
        col = table.column(i)
        if pa.types.is_time32(f.type):
            table = table.set_column(i, f.with_type(pa.int32()), col.cast(pa.int32()))
        elif pa.types.is_struct(f.type) and any(chunk.offset for chunk in col.chunks):
            table = table.set_column(i, f, col.take(pa.array(np.arange(len(col)))))
    return table


def _check_orc_timestamps(table: pa.Table) -> None:
    """Refuse what Java's ORC reader cannot read back: pre-1970 timestamps with sub-millisecond digits
    (the ORC C++ writer and Java's reader disagree on the seconds/nanos split of negative values)."""
    for f in table.schema:
        if not pa.types.is_timestamp(f.type) or f.type.unit in ("s", "ms"):
            continue
        per_ms = 1000 if f.type.unit == "us" else 1_000_000
        values = pc.fill_null(pc.cast(table.column(f.name), pa.int64()), 0).to_numpy()
        bad = (values < 0) & (values % per_ms != 0)
        if bad.any():
            raise UnsupportedFeatureError(
                f"column {f.name!r}: ORC data files cannot hold timestamps before 1970 with sub-millisecond "
                "digits readable by Java Paimon; use file.format parquet or avro, or round to milliseconds"
            )


def read_file(file_io: FileIO, path: str, *, columns: Sequence[str] | None = None,
              verify_checksums: bool = True) -> pa.Table:
    """Read a data file (all or some columns, by name) as Arrow; clear errors name the file. `verify_checksums`:
    Parquet page CRCs."""
    fmt = format_of(path.rsplit("/", 1)[-1])
    try:
        if fmt == "parquet":
            with file_io.open_input_file(path) as f:
                fragment = _PARQUET_READERS[verify_checksums].make_fragment(f)
                return fragment.to_table(columns=_present(columns, fragment.physical_schema.names), use_threads=True)
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


RowGroupTest = StatsTest  # (min, max, null count by column, row count) of a row group -> may it hold matching rows


def read_file_pruned(
    file_io: FileIO, path: str, *, columns: Sequence[str], stats_columns: Sequence[str], keep: RowGroupTest,
    verify_checksums: bool = True, probe: RowProbe | None = None, probe_exact: bool = False,
    sorted_by: str | None = None,
) -> tuple[pa.Table, np.ndarray | None, int, bool]:
    """Read a data file skipping the Parquet row groups (ORC stripes: :mod:`.orc_stats`) whose statistics (of
    `stats_columns`, file names) fail `keep`; Avro is read whole. With a `probe` (Parquet) the `stats_columns` are
    decoded first, the rest only where it keeps rows (data/probe_read.py; `probe_exact`: only its rows are returned;
    `sorted_by`: the file's sort column). Returns (rows, their positions in the file or None for all rows in order,
    the file's row count, whether only the probe's rows were returned)."""
    fmt = format_of(path.rsplit("/", 1)[-1])
    if fmt == "orc":
        return (*read_orc_pruned(file_io, path, columns=columns, stats_columns=stats_columns, keep=keep), False)
    if fmt != "parquet":
        table = read_file(file_io, path, columns=columns)
        return table, None, table.num_rows, False
    try:
        with file_io.open_input_file(path) as f:
            fragment = _PARQUET_READERS[verify_checksums].make_fragment(f)
            meta = fragment.metadata
            selected = _row_groups_to_read(meta, stats_columns, keep)
            cols = _present(columns, fragment.physical_schema.names)
            if probe is not None and selected:
                paged = read_by_pages(f, path, meta, fragment.physical_schema, selected, cols or [], stats_columns,
                                      keep, probe, sorted_file=sorted_by is not None,
                                      verify_checksums=verify_checksums)
                if paged is not None:
                    return paged[0], paged[1], meta.num_rows, probe_exact
                last_hits, hits = probe_row_groups(f, fragment, meta, selected, stats_columns, probe, keep=keep,
                                                   sorted_by=sorted_by, verify_checksums=verify_checksums)
                if not last_hits:
                    return fragment.subset(row_group_ids=[]).to_table(columns=cols), hits, meta.num_rows, True
                table, positions = read_probed(f, fragment, meta, last_hits, cols, verify_checksums=verify_checksums,
                                               only=hits if probe_exact else None)
                return table, positions, meta.num_rows, probe_exact
            if len(selected) == meta.num_row_groups:
                return fragment.to_table(columns=cols, use_threads=True), None, meta.num_rows, False
            table = fragment.subset(row_group_ids=selected).to_table(columns=cols, use_threads=True)
    except FileNotFoundError:
        raise CorruptMetadataError(f"data file {path} is missing (referenced by a manifest)") from None
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, ValueError) as e:
        raise CorruptMetadataError(f"data file {path} is unreadable: {e}") from None
    starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    return table, np.concatenate([np.arange(starts[i], starts[i + 1], dtype=np.int64) for i in selected] or
                                 [np.zeros(0, dtype=np.int64)]), meta.num_rows, False


def _row_groups_to_read(meta: pq.FileMetaData, stats_columns: Sequence[str], keep: RowGroupTest) -> list[int]:
    if meta.num_row_groups == 0:
        return []
    first = meta.row_group(0)
    index = {first.column(j).path_in_schema: j for j in range(first.num_columns)}
    wanted = [(c, index[c]) for c in stats_columns if c in index]
    selected = []
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        mins: dict[str, Any] = {}
        maxs: dict[str, Any] = {}
        nulls: dict[str, int | None] = {}
        for name, j in wanted:
            st = rg.column(j).statistics
            if st is None:
                continue
            if st.has_min_max:
                mins[name], maxs[name] = st.min, st.max
            nulls[name] = st.null_count if st.has_null_count else None
        if keep(mins, maxs, nulls, rg.num_rows):
            selected.append(i)
    return selected


def _row_group_batches(groups: Sequence[int], sizes: Sequence[int], batch_rows: int) -> Iterator[list[int]]:
    """Consecutive row groups (of `groups`, file order) packed into runs of at most `batch_rows` rows; a group
    larger than that is a run of its own."""
    run: list[int] = []
    rows = 0
    for g in groups:
        if run and (rows + sizes[g] > batch_rows or g != run[-1] + 1):
            yield run
            run, rows = [], 0
        run.append(g)
        rows += sizes[g]
    if run:
        yield run


def _present(columns: Sequence[str] | None, names: Sequence[str]) -> list[str] | None:
    if columns is None:
        return None
    have = set(names)
    return [c for c in columns if c in have]


def iter_file_batches(
    file_io: FileIO, path: str, *, columns: Sequence[str], batch_rows: int,
    stats_columns: Sequence[str] = (), keep: RowGroupTest | None = None, verify_checksums: bool = True,
) -> Iterator[tuple[pa.Table, int, int]]:
    """A data file in slices of at most `batch_rows` rows, in file order: (rows, position of the first row in the
    file, the file's row count). Parquet is decoded one row group (and `batch_rows`) at a time, skipping the row
    groups whose statistics fail `keep`; ORC one stripe at a time; Avro is read whole and sliced."""
    fmt = format_of(path.rsplit("/", 1)[-1])
    try:
        if fmt == "parquet":
            with file_io.open_input_file(path) as f:
                fragment = _PARQUET_READERS[verify_checksums].make_fragment(f)
                meta = fragment.metadata
                cols = _present(columns, fragment.physical_schema.names)
                groups = (list(range(meta.num_row_groups)) if keep is None
                          else _row_groups_to_read(meta, stats_columns, keep))
                sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
                starts = np.cumsum([0, *sizes])
                pf: pq.ParquetFile | None = None  # for row groups larger than a batch, sliced as they decode
                for run in _row_group_batches(groups, sizes, batch_rows):
                    pos = int(starts[run[0]])
                    if len(run) > 1 or sizes[run[0]] <= batch_rows:  # whole row groups: decoded in parallel
                        yield fragment.subset(row_group_ids=run).to_table(columns=cols, use_threads=True), pos, \
                            meta.num_rows
                        continue
                    pf = pf or pq.ParquetFile(f, page_checksum_verification=verify_checksums)
                    for batch in pf.iter_batches(batch_size=batch_rows, row_groups=run, columns=cols,
                                                 use_threads=True):
                        yield pa.Table.from_batches([batch]), pos, meta.num_rows
                        pos += batch.num_rows
            return
        if fmt == "orc":
            with file_io.open_input_file(path) as f:
                of = paorc.ORCFile(f)
                cols = _present(columns, of.schema.names)
                pos = 0
                for s in range(of.nstripes):
                    stripe = pa.Table.from_batches([of.read_stripe(s, columns=cols)])
                    for off in range(0, stripe.num_rows, batch_rows):
                        yield stripe.slice(off, batch_rows), pos + off, of.nrows
                    pos += stripe.num_rows
            return
    except FileNotFoundError:
        raise CorruptMetadataError(f"data file {path} is missing (referenced by a manifest)") from None
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, ValueError) as e:
        raise CorruptMetadataError(f"data file {path} is unreadable: {e}") from None
    table = read_file(file_io, path, columns=columns)
    for off in range(0, table.num_rows, batch_rows):
        yield table.slice(off, batch_rows), off, table.num_rows
