"""Paimon's file index of a data file (FileIndexFormat v1, DataFileIndexWriter, FileIndexPredicate).

A table option `file-index.bloom-filter.columns` = "a,b" gives every data file a bloom filter of those columns
(`file-index.bloom-filter.<col>.items` / `.fpp` size it, defaults 1,000,000 and 0.1). The serialized index is
kept in the file's manifest entry (`_EMBEDDED_FILE_INDEX`) when at most `file-index.in-manifest-threshold` bytes
(default 500 B), else written beside the data file as `<data file name>.index` and listed in its `_EXTRA_FILES`.

Format (big-endian, Java DataOutputStream): magic 1493475289347502 (8 bytes), version 1 (4), head length (4,
counted from the file's start), column count (4); per column its name (writeUTF: 2-byte length + modified
UTF-8), index count (4) and per index its type name (writeUTF), body start (4, absolute) and length (4); a
redundant length 0 (4); then the bodies. Readers (scan/file_index_filter.py) skip a file when an `=` / `in`
filter's values are all absent from an indexed column, honouring `file-index.read.enabled`.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa

from table_format.data.bloom_filter import BLOOM_FILTER, DEFAULT_FPP, DEFAULT_ITEMS, BloomFilter64, fast_hash, indexable
from table_format.errors import CorruptMetadataError, OptionError, UnsupportedFeatureError
from table_format.options import parse_memory_size
from table_format.types import DataField, DataType

MAGIC = 1493475289347502
VERSION = 1
_V2_TAIL_MAGIC = 0x5041464944583032  # "PAFIDX02"
INDEX_SUFFIX = ".index"
_PREFIX = "file-index."
_COLUMNS_SUFFIX = ".columns"


@dataclass(frozen=True, slots=True)
class BloomColumn:
    name: str
    dtype: DataType
    items: int
    fpp: float


@dataclass(frozen=True, slots=True)
class FileIndexOptions:
    """The bloom-filter columns of a table and where their index goes (FileIndexOptions)."""

    columns: tuple[BloomColumn, ...]
    in_manifest_threshold: int  # bytes: an index up to this size is embedded in the manifest

    @staticmethod
    def parse(options: Mapping[str, str], fields: Sequence[DataField], *, table: str) -> FileIndexOptions:
        """Options of a table with columns `fields`; a clear OptionError for a column or value Java refuses."""
        by_name = {f.name: f for f in fields}
        names: list[str] = []
        for key, value in options.items():
            if key == f"{_PREFIX}{BLOOM_FILTER}{_COLUMNS_SUFFIX}":
                for name in value.split(","):
                    if not name.strip():
                        raise OptionError(f"table {table}: option {key!r} = {value!r} names an empty column")
                    if "[" in name and name.strip().endswith("]"):
                        raise UnsupportedFeatureError(f"table {table}: option {key!r} indexes map entries "
                                                      f"({name.strip()!r}), which this implementation does not write")
                    if name.strip() not in names:
                        names.append(name.strip())
        settings: dict[str, dict[str, str]] = {n: {} for n in names}
        for key, value in options.items():
            parts = key[len(_PREFIX):].split(".") if key.startswith(_PREFIX) else []
            if len(parts) == 3 and parts[0] == BLOOM_FILTER:
                if parts[1] not in settings:
                    raise OptionError(f"table {table}: option {key!r} names column {parts[1]!r}, which is not in "
                                      f"'{_PREFIX}{BLOOM_FILTER}{_COLUMNS_SUFFIX}'")
                settings[parts[1]][parts[2]] = value
        columns = []
        for name in names:
            field = by_name.get(name)
            if field is None:
                raise OptionError(f"table {table}: bloom-filter index column {name!r} is not a column "
                                  f"(columns: {list(by_name)})")
            if not indexable(field.type):
                raise UnsupportedFeatureError(f"table {table}: column {name!r} of type {field.type} cannot have a "
                                              "bloom-filter index (Paimon hashes strings, binaries, numbers, "
                                              "dates, times and timestamps)")
            items, fpp = _bloom_settings(settings[name], table=table, column=name)
            columns.append(BloomColumn(name, field.type, items, fpp))
        threshold = parse_memory_size(options.get(f"{_PREFIX}in-manifest-threshold", "500 b"),
                                      option=f"{_PREFIX}in-manifest-threshold")
        index_read_enabled(options)  # checked with the rest
        return FileIndexOptions(tuple(columns), threshold)


def index_read_enabled(options: Mapping[str, str]) -> bool:
    """`file-index.read.enabled` (default true): whether readers skip files by their index."""
    read = str(options.get(f"{_PREFIX}read.enabled", "true")).strip().lower()
    if read not in ("true", "false"):
        raise OptionError(f"option '{_PREFIX}read.enabled': {read!r} is not true or false")
    return read == "true"


def _bloom_settings(settings: Mapping[str, str], *, table: str, column: str) -> tuple[int, float]:
    where = f"table {table}: option '{_PREFIX}{BLOOM_FILTER}.{column}"
    try:
        items = int(settings.get("items", DEFAULT_ITEMS))
        fpp = float(settings.get("fpp", DEFAULT_FPP))
    except ValueError as e:
        raise OptionError(f"{where}.*' is not a number ({e})") from None
    if items <= 0:
        raise OptionError(f"{where}.items' must be positive, got {items}")
    if not 0 < fpp < 1:
        raise OptionError(f"{where}.fpp' must be in (0, 1), got {fpp}")
    return items, fpp


# ---- the format --------------------------------------------------------------------------------------------------
def _utf(text: str) -> bytes:
    data = text.encode("utf-8")  # column and index names: plain UTF-8 equals Java's modified UTF-8 without NULs
    return struct.pack(">H", len(data)) + data


def serialize_index(bodies: Mapping[str, Mapping[str, bytes]]) -> bytes:
    """The file index holding `bodies` (column -> index type -> serialized index)."""
    head_rest = io.BytesIO()
    names = b"".join(_utf(c) + b"".join(_utf(t) for t in types) for c, types in bodies.items())
    head_length = 8 + 4 + 4 + 4 + 8 * sum(len(t) for t in bodies.values()) + 4 * len(bodies) + 4 + len(names)
    head_rest.write(struct.pack(">i", len(bodies)))
    offset = head_length
    for column, types in bodies.items():
        head_rest.write(_utf(column) + struct.pack(">i", len(types)))
        for index_type, body in types.items():
            head_rest.write(_utf(index_type) + struct.pack(">ii", offset, len(body)))
            offset += len(body)
    head_rest.write(struct.pack(">i", 0))
    out = struct.pack(">qii", MAGIC, VERSION, head_length) + head_rest.getvalue()
    return out + b"".join(body for types in bodies.values() for body in types.values())


def parse_index(data: bytes, *, source: str) -> dict[str, dict[str, bytes]]:
    """Column -> index type -> body of a serialized file index (`source` names it in errors). Version 2 (newer
    Paimon: bodies first, the entries in a footer, 8-byte offsets) is read too; a later version reads as no index
    (every file kept); empty entries (start -1, map keys without values) are left out."""
    try:
        magic, version = struct.unpack_from(">qi", data, 0)
        if magic != MAGIC:
            raise CorruptMetadataError(f"{source} is not a Paimon file index (magic {magic})")
        if version == VERSION:
            (head_length,) = struct.unpack_from(">i", data, 12)
            pos, body_start, offsets = 16, head_length, ">ii"
        elif version == 2:
            footer_length, tail_magic = struct.unpack_from(">iq", data, len(data) - 12)
            if tail_magic != _V2_TAIL_MAGIC:
                raise CorruptMetadataError(f"{source}: file index version 2 without its tail magic")
            pos, body_start, offsets = len(data) - 12 - footer_length, 12, ">qq"
        else:
            return {}
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out: dict[str, dict[str, bytes]] = {}
        for _ in range(count):
            column, pos = _read_utf(data, pos)
            (n,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(n):
                index_type, pos = _read_utf(data, pos)
                start, length = struct.unpack_from(offsets, data, pos)
                pos += struct.calcsize(offsets)
                if start == -1:
                    continue
                if start < body_start or start + length > len(data):
                    raise CorruptMetadataError(f"{source}: index {column}/{index_type} lies outside the file")
                out.setdefault(column, {})[index_type] = bytes(data[start:start + length])
        return out
    except (struct.error, UnicodeDecodeError) as e:
        raise CorruptMetadataError(f"{source}: unreadable file index ({e})") from None


def _read_utf(data: bytes, pos: int) -> tuple[str, int]:
    (n,) = struct.unpack_from(">H", data, pos)
    return bytes(data[pos + 2:pos + 2 + n]).decode("utf-8"), pos + 2 + n


def build_index(rows: pa.Table, options: FileIndexOptions) -> bytes:
    """The serialized file index of the rows of one data file (columns by name)."""
    bodies: dict[str, dict[str, bytes]] = {}
    for c in options.columns:
        values = rows.column(c.name).drop_null()
        bloom = BloomFilter64.build(fast_hash(values, c.dtype), items=c.items, fpp=c.fpp)
        bodies[c.name] = {BLOOM_FILTER: bloom.serialize()}
    return serialize_index(bodies)
