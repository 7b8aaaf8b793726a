"""Column-wise decoding of `manifest-*` files: polars' Avro reader decodes whole columns, then entries are built.

The row-wise decoder (:func:`~table_format.meta.manifest.codecs.decode_manifest_rows`) spends most of its time
making a dict per record and per nested record; here the Avro blocks are decoded into Arrow-like columns in Rust
(zstandard blocks are decompressed first, :func:`~table_format.meta.avro.plain_container`) and each column becomes
one Python list, so building an entry is one tuple of list items. Anything this path does not take as it is (an
unknown codec, a missing field, a bad _VERSION or _KIND, an unreadable file, a record count that disagrees with the
blocks) goes to the row-wise decoder, which returns the same entries or raises its CorruptMetadataError naming the
file.
"""

from __future__ import annotations

import io
from typing import Any

import polars as pl

from table_format.meta.avro import plain_container
from table_format.meta.manifest.codecs import decode_manifest_rows
from table_format.meta.manifest.records import (
    MANIFEST_ENTRY_VERSION,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    SimpleStats,
)

__all__ = ["decode_manifest"]

_ENTRY_REQUIRED = ("_VERSION", "_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE")
_FILE_REQUIRED = (
    "_FILE_NAME",
    "_FILE_SIZE",
    "_ROW_COUNT",
    "_MIN_KEY",
    "_MAX_KEY",
    "_KEY_STATS",
    "_VALUE_STATS",
    "_MIN_SEQUENCE_NUMBER",
    "_MAX_SEQUENCE_NUMBER",
    "_SCHEMA_ID",
    "_LEVEL",
    "_EXTRA_FILES",
)
_FILE_OPTIONAL = (
    "_CREATION_TIME",
    "_DELETE_ROW_COUNT",
    "_EMBEDDED_FILE_INDEX",
    "_FILE_SOURCE",
    "_VALUE_STATS_COLS",
    "_EXTERNAL_PATH",
    "_FIRST_ROW_ID",
    "_WRITE_COLS",
)
_KINDS = (FileKind.ADD, FileKind.DELETE)


class _NotColumnar(Exception):
    """This file goes to the row-wise decoder."""


def decode_manifest(data: bytes, *, source: str) -> list[ManifestEntry]:
    """Entries of a `manifest-*` file written by any Paimon 0.9 .. master or pypaimon writer."""
    try:
        return _decode_columns(data)
    except _NotColumnar:
        pass
    except Exception:  # noqa: BLE001 - polars raises many kinds; the row-wise decoder names the problem
        pass
    except BaseException as e:  # pyo3's PanicException derives from BaseException
        if isinstance(e, KeyboardInterrupt | SystemExit | GeneratorExit):
            raise
    return decode_manifest_rows(data, source=source)


def _tuple_or_none(values: list[Any]) -> list[tuple[Any, ...] | None]:
    return [None if v is None else tuple(v) for v in values]


def _stats(struct: pl.Series) -> list[SimpleStats]:
    names = struct.struct.fields
    if "_MIN_VALUES" not in names or "_MAX_VALUES" not in names:
        raise _NotColumnar
    mins = struct.struct.field("_MIN_VALUES").to_list()
    maxs = struct.struct.field("_MAX_VALUES").to_list()
    counts = struct.struct.field("_NULL_COUNTS").to_list() if "_NULL_COUNTS" in names else [None] * len(mins)
    return [SimpleStats(a, b, tuple(c) if c else ()) for a, b, c in zip(mins, maxs, counts, strict=True)]


def _decode_columns(data: bytes) -> list[ManifestEntry]:
    plain, records = plain_container(data)
    if records == 0:
        raise _NotColumnar
    frame = pl.read_avro(io.BytesIO(plain))
    if frame.height != records or any(c not in frame.columns for c in _ENTRY_REQUIRED):
        raise _NotColumnar
    file = frame["_FILE"]
    if file.dtype != pl.Struct:
        raise _NotColumnar
    if any(frame[c].null_count() for c in _ENTRY_REQUIRED):
        raise _NotColumnar
    fields = file.struct.fields
    if any(c not in fields for c in _FILE_REQUIRED):
        raise _NotColumnar
    if not (frame["_VERSION"] == MANIFEST_ENTRY_VERSION).all() or not frame["_KIND"].is_in([0, 1]).all():
        raise _NotColumnar
    col = file.struct.field
    n = frame.height
    required = [col(c).to_list() for c in _FILE_REQUIRED if c not in ("_KEY_STATS", "_VALUE_STATS", "_EXTRA_FILES")]
    if any(None in values for values in required):
        raise _NotColumnar
    name, size, rows, min_key, max_key, min_seq, max_seq, schema_id, level = required
    extra = col("_EXTRA_FILES").to_list()
    if None in extra:
        raise _NotColumnar
    optional: dict[str, list[Any]] = {}
    for c in _FILE_OPTIONAL:
        if c not in fields:
            optional[c] = [None] * n
            continue
        s = col(c)
        if c == "_CREATION_TIME":
            s = s.dt.epoch("ms") if s.dtype == pl.Datetime else s
        values = s.to_list()
        optional[c] = _tuple_or_none(values) if s.dtype == pl.List else values
    files = [
        DataFileMeta(*r)
        for r in zip(
            name,
            size,
            rows,
            min_key,
            max_key,
            _stats(col("_KEY_STATS")),
            _stats(col("_VALUE_STATS")),
            min_seq,
            max_seq,
            schema_id,
            level,
            [tuple(x) for x in extra],
            *(optional[c] for c in _FILE_OPTIONAL),
            strict=True,
        )
    ]
    kinds = [_KINDS[k] for k in frame["_KIND"].to_list()]
    return [
        ManifestEntry(*r)
        for r in zip(
            kinds,
            frame["_PARTITION"].to_list(),
            frame["_BUCKET"].to_list(),
            frame["_TOTAL_BUCKETS"].to_list(),
            files,
            strict=True,
        )
    ]
