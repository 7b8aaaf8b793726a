"""Thrift compact protocol, as Parquet stores its footer and page indexes: decode to plain values, encode back.

A struct decodes to ``{field id: (compact type, value)}`` in the order read, a list to ``(element type, [values])``;
encoding that structure again gives the same bytes (fields in the order given, short field headers where the id
delta is 1..15). Only what Parquet's footer uses is supported (no maps or sets). Field ids of the Parquet structs
used by the page reader (parquet.thrift) are named below.
"""

from __future__ import annotations

import struct
from typing import Any

from table_format.errors import CorruptMetadataError

STOP, TRUE, FALSE, I8, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
Struct = dict[int, tuple[int, Any]]

# FileMetaData
FMD_VERSION, FMD_SCHEMA, FMD_NUM_ROWS, FMD_ROW_GROUPS = 1, 2, 3, 4
# SchemaElement
SE_TYPE, SE_TYPE_LENGTH, SE_REPETITION, SE_NAME, SE_NUM_CHILDREN = 1, 2, 3, 4, 5
# RowGroup
RG_COLUMNS, RG_TOTAL_BYTE_SIZE, RG_NUM_ROWS, RG_FILE_OFFSET, RG_TOTAL_COMPRESSED = 1, 2, 3, 5, 6
# ColumnChunk
CC_FILE_OFFSET, CC_META, CC_OFFSET_INDEX_OFFSET, CC_OFFSET_INDEX_LENGTH = 2, 3, 4, 5
CC_COLUMN_INDEX_OFFSET, CC_COLUMN_INDEX_LENGTH, CC_CRYPTO = 6, 7, 8
# ColumnMetaData
CM_TYPE, CM_ENCODINGS, CM_PATH, CM_CODEC, CM_NUM_VALUES = 1, 2, 3, 4, 5
CM_UNCOMPRESSED, CM_COMPRESSED, CM_DATA_PAGE_OFFSET, CM_DICTIONARY_PAGE_OFFSET = 6, 7, 9, 11
# OffsetIndex / PageLocation
OI_PAGE_LOCATIONS, PL_OFFSET, PL_SIZE, PL_FIRST_ROW = 1, 1, 2, 3
# ColumnIndex
CI_NULL_PAGES, CI_MINS, CI_MAXS, CI_BOUNDARY_ORDER, CI_NULL_COUNTS = 1, 2, 3, 4, 5


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = bytes(data)
        self.pos = 0

    def varint(self) -> int:
        data, pos = self.data, self.pos
        out = shift = 0
        while True:
            b = data[pos]
            pos += 1
            out |= (b & 0x7F) << shift
            if b < 0x80:
                self.pos = pos
                return out
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, kind: int) -> Any:
        if kind in (I16, I32, I64):
            return self.zigzag()
        if kind == BINARY:
            n = self.varint()
            start = self.pos
            self.pos += n
            if self.pos > len(self.data):
                raise IndexError("binary past the end")
            return self.data[start:self.pos]
        if kind == STRUCT:
            return self.struct()
        if kind in (LIST, SET):
            return self.list()
        if kind == I8:
            self.pos += 1
            return struct.unpack_from("b", self.data, self.pos - 1)[0]
        if kind == DOUBLE:
            self.pos += 8
            return struct.unpack_from("<d", self.data, self.pos - 8)[0]
        if kind in (TRUE, FALSE):  # a bool inside a list: one byte
            self.pos += 1
            return self.data[self.pos - 1] == TRUE
        raise ValueError(f"unsupported thrift compact type {kind}")

    def list(self) -> tuple[int, list[Any]]:
        head = self.data[self.pos]
        self.pos += 1
        kind, size = head & 0x0F, head >> 4
        if size == 15:
            size = self.varint()
        value = self.value
        return kind, [value(kind) for _ in range(size)]

    def struct(self) -> Struct:
        out: Struct = {}
        last = 0
        data = self.data
        while True:
            head = data[self.pos]
            self.pos += 1
            kind = head & 0x0F
            if kind == STOP:
                return out
            delta = head >> 4
            last = last + delta if delta else self.zigzag()
            if kind in (TRUE, FALSE):
                out[last] = (kind, kind == TRUE)
            else:
                out[last] = (kind, self.value(kind))


def decode_struct(data: bytes | memoryview, *, what: str = "thrift struct") -> tuple[Struct, int]:
    """(the struct at the start of `data`, the bytes it took)."""
    reader = _Reader(data)
    try:
        return reader.struct(), reader.pos
    except (IndexError, ValueError, struct.error) as e:
        raise CorruptMetadataError(f"{what} is not valid thrift compact protocol ({e})") from None


def _varint(out: bytearray, n: int) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(out: bytearray, n: int) -> None:
    _varint(out, (n << 1) ^ (n >> 63))


def _value(out: bytearray, kind: int, value: Any) -> None:
    if kind in (I16, I32, I64):
        _zigzag(out, value)
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind == STRUCT:
        _struct(out, value)
    elif kind in (LIST, SET):
        elem, items = value
        if len(items) < 15:
            out.append((len(items) << 4) | elem)
        else:
            out.append(0xF0 | elem)
            _varint(out, len(items))
        for item in items:
            _value(out, elem, item)
    elif kind == I8:
        out += struct.pack("b", value)
    elif kind == DOUBLE:
        out += struct.pack("<d", value)
    elif kind in (TRUE, FALSE):
        out.append(TRUE if value else FALSE)
    else:
        raise ValueError(f"unsupported thrift compact type {kind}")


def _struct(out: bytearray, fields: Struct) -> None:
    last = 0
    for fid, (kind, value) in fields.items():
        if kind in (TRUE, FALSE):
            kind = TRUE if value else FALSE
        delta = fid - last
        if 0 < delta <= 15:
            out.append((delta << 4) | kind)
        else:
            out.append(kind)
            _zigzag(out, fid)
        if kind not in (TRUE, FALSE):
            _value(out, kind, value)
        last = fid
    out.append(STOP)


def encode_struct(fields: Struct) -> bytes:
    """The compact-protocol bytes of a struct (as :func:`decode_struct` returns it)."""
    out = bytearray()
    _struct(out, fields)
    return bytes(out)


def get(fields: Struct, fid: int, default: Any = None) -> Any:
    """A field's value, `default` when absent."""
    item = fields.get(fid)
    return default if item is None else item[1]
