"""Stripe statistics of an ORC file, read from its tail (pyarrow.orc reads stripes but does not expose them).

An ORC file ends with: Metadata (StripeStatistics per stripe), Footer (stripes, types, ...), PostScript (its
length is the last byte) -- protobuf messages, Metadata and Footer compressed in chunks with a 3-byte header
(length << 1 | is-original, little-endian). Only what stripe pruning needs is decoded here: each stripe's row
count and, for top-level integer, date and string columns, min / max / null count (orc_proto.proto field numbers).
Anything unexpected raises ValueError; the caller then reads the whole file. :func:`read_orc_pruned` reads an
ORC data file without the stripes whose statistics rule a filter out.
"""

from __future__ import annotations

import datetime as _dt
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as paorc
import zstandard

from table_format.data.probe_read import StatsTest
from table_format.errors import CorruptMetadataError
from table_format.io.file_io import FileIO

__all__ = ["StripeStats", "orc_stripe_stats", "read_orc_pruned"]

_NONE, _ZLIB, _SNAPPY, _ZSTD = 0, 1, 2, 5
# Type.Kind: BYTE 1, SHORT 2, INT 3, LONG 4, STRING 7, VARCHAR 16, CHAR 17 (padded: not used), DATE 15
_INTEGER_KINDS, _STRING_KINDS, _DATE_KIND, _STRUCT_KIND = {1, 2, 3, 4}, {7, 16}, 15, 12
_EPOCH_DAY = _dt.date(1970, 1, 1)
_ORC_TAIL_BYTES = 64 << 10  # first guess at the ORC tail (postscript, footer, stripe statistics)


@dataclass(frozen=True, slots=True)
class StripeStats:
    """Row count and per-column (top-level name) min / max / null count of one stripe."""

    rows: int
    mins: dict[str, Any]
    maxs: dict[str, Any]
    nulls: dict[str, int | None]


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = acc = 0
    while True:
        byte = buf[pos]
        pos += 1
        acc |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return acc, pos
        shift += 7
        if shift > 70:
            raise ValueError("varint too long")


def _fields(buf: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, value) of a protobuf message: ints for varints/fixed, bytes for length-delimited."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise ValueError("field beyond the message")
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, value


def _zigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def _packed(value: Any) -> list[int]:
    if isinstance(value, int):
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def _decompress(data: bytes, codec: int) -> bytes:
    if codec == _NONE:
        return data
    out, pos = [], 0
    while pos < len(data):
        if pos + 3 > len(data):
            raise ValueError("truncated chunk header")
        header = int.from_bytes(data[pos : pos + 3], "little")
        size, original = header >> 1, header & 1
        chunk = data[pos + 3 : pos + 3 + size]
        pos += 3 + size
        if original:
            out.append(chunk)
        elif codec == _ZLIB:
            out.append(zlib.decompress(chunk, -15))
        elif codec == _ZSTD:
            out.append(zstandard.ZstdDecompressor().decompressobj().decompress(chunk))
        elif codec == _SNAPPY:
            length, _ = _varint(chunk, 0)  # raw snappy starts with the uncompressed length
            out.append(pa.decompress(chunk, decompressed_size=length, codec="snappy").to_pybytes())
        else:
            raise ValueError(f"ORC compression kind {codec}")
    return b"".join(out)


def _column_stats(raw: bytes, kind: int, rows: int) -> tuple[Any, Any, int | None]:
    values: int | None = None
    low: Any = None
    high: Any = None
    for number, value in _fields(raw):
        if number == 1:
            values = value
        elif number == 2 and kind in _INTEGER_KINDS or number == 7 and kind == _DATE_KIND:
            for n, v in _fields(value):
                if n == 1:
                    low = _zigzag(v)
                elif n == 2:
                    high = _zigzag(v)
        elif number == 4 and kind in _STRING_KINDS:
            for n, v in _fields(value):  # 1/2: exact min/max (absent when truncated: lower/upper bounds 5/6)
                if n == 1:
                    low = v.decode("utf-8")
                elif n == 2:
                    high = v.decode("utf-8")
    if kind == _DATE_KIND and low is not None and high is not None:
        low, high = _EPOCH_DAY + _dt.timedelta(days=low), _EPOCH_DAY + _dt.timedelta(days=high)
    return low, high, None if values is None else rows - values


def orc_stripe_stats(tail: bytes, file_size: int) -> list[StripeStats]:
    """Stripe statistics from the last `len(tail)` bytes of an ORC file of `file_size` bytes (ValueError when the
    tail is too short or not understood)."""
    ps_len = tail[-1]
    postscript = dict(_fields(tail[-1 - ps_len : -1]))
    if postscript.get(8000) != b"ORC":
        raise ValueError("no ORC postscript")
    footer_len, codec, meta_len = postscript.get(1, 0), postscript.get(2, _NONE), postscript.get(5, 0)
    end = len(tail) - 1 - ps_len
    if footer_len + meta_len > end:
        raise ValueError("tail too short")
    footer = _decompress(tail[end - footer_len : end], codec)
    metadata = _decompress(tail[end - footer_len - meta_len : end - footer_len], codec)
    stripe_rows: list[int] = []
    types: list[tuple[int, list[int], list[str]]] = []
    for number, value in _fields(footer):
        if number == 3:  # StripeInformation.numberOfRows = 5
            stripe_rows.append(dict(_fields(value)).get(5, 0))
        elif number == 4:  # Type: kind 1, subtypes 2, fieldNames 3
            kind, subtypes, names = 0, [], []
            for n, v in _fields(value):
                if n == 1:
                    kind = v
                elif n == 2:
                    subtypes.extend(_packed(v))
                elif n == 3:
                    names.append(v.decode("utf-8"))
            types.append((kind, subtypes, names))
    if not types or types[0][0] != _STRUCT_KIND:
        raise ValueError("ORC root type is not a struct")
    columns = {cid: (name, types[cid][0]) for cid, name in zip(types[0][1], types[0][2], strict=True)}
    stripes = [value for number, value in _fields(metadata) if number == 1]
    if len(stripes) != len(stripe_rows):
        raise ValueError("stripe statistics do not match the stripes")
    out = []
    for rows, raw in zip(stripe_rows, stripes, strict=True):
        mins: dict[str, Any] = {}
        maxs: dict[str, Any] = {}
        nulls: dict[str, int | None] = {}
        for cid, col in enumerate(value for number, value in _fields(raw) if number == 1):
            if cid not in columns:
                continue
            name, kind = columns[cid]
            if kind in _INTEGER_KINDS or kind in _STRING_KINDS or kind == _DATE_KIND:
                low, high, null_count = _column_stats(col, kind, rows)
                if low is not None and high is not None:
                    mins[name], maxs[name] = low, high
                nulls[name] = null_count
        out.append(StripeStats(rows, mins, maxs, nulls))
    return out


def read_orc_pruned(
    file_io: FileIO, path: str, *, columns: Sequence[str], stats_columns: Sequence[str], keep: StatsTest
) -> tuple[pa.Table, np.ndarray | None, int]:
    """An ORC data file's `columns` without the stripes whose statistics (of `stats_columns`) fail `keep`: (rows,
    their positions in the file or None for all rows in order, the file's row count)."""
    try:
        with file_io.open_input_file(path) as f:
            of = paorc.ORCFile(f)
            stripes = _orc_stripes(f) if of.nstripes > 1 and stats_columns else None
            wanted = set(stats_columns)
            selected = list(range(of.nstripes)) if stripes is None else [
                i for i, s in enumerate(stripes)
                if keep({k: v for k, v in s.mins.items() if k in wanted}, {k: v for k, v in s.maxs.items() if k in wanted},
                        {k: v for k, v in s.nulls.items() if k in wanted}, s.rows)
            ]
            names = set(of.schema.names)
            cols = [c for c in columns if c in names]
            if stripes is None or len(selected) == of.nstripes:
                return of.read(columns=cols), None, of.nrows
            batches = [of.read_stripe(i, columns=cols) for i in selected]
            table = pa.Table.from_batches(batches) if batches else \
                pa.Table.from_batches([of.read_stripe(0, columns=cols).slice(0, 0)])
    except FileNotFoundError:
        raise CorruptMetadataError(f"data file {path} is missing (referenced by a manifest)") from None
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError, ValueError) as e:
        raise CorruptMetadataError(f"data file {path} is unreadable: {e}") from None
    starts = np.cumsum([0] + [s.rows for s in stripes])
    positions = np.concatenate([np.arange(starts[i], starts[i + 1], dtype=np.int64) for i in selected]) \
        if selected else np.zeros(0, dtype=np.int64)
    return table, positions, int(starts[-1])


def _orc_stripes(f: pa.NativeFile) -> list[StripeStats] | None:
    """Stripe statistics of an open ORC file; None when they cannot be read (the file is then read whole)."""
    size = f.size()
    want = min(size, _ORC_TAIL_BYTES)
    for _ in range(2):
        f.seek(size - want)
        tail = f.read(want)
        try:
            return orc_stripe_stats(tail, size)
        except ValueError as e:
            if "tail too short" not in str(e) or want == size:
                return None
            want = size
        except (IndexError, UnicodeDecodeError, zstandard.ZstdError, zlib.error, pa.ArrowException):
            return None
    return None
