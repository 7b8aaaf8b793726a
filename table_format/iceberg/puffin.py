"""Paimon deletion vectors as Iceberg v3 deletion vectors: Puffin files of `deletion-vector-v1` blobs.

A `deletion-vector-v1` blob (Iceberg Puffin spec) is `uint32 BE length of magic + vector | magic D1 D3 39 64 | vector |
uint32 BE CRC-32 of magic + vector`, the vector a 64-bit Roaring bitmap in the portable layout (`uint64 LE` count of
32-bit buckets, then per bucket a `uint32 LE` high key and a 32-bit portable Roaring bitmap). Paimon's 64-bit deletion
vectors are stored in exactly that framing (its magic 1681511377 written little-endian is D1 D3 39 64), so they are
copied as they are; a 32-bit one (`int32 BE magic 1581511376` + a portable Roaring bitmap) becomes the single bucket
0 of a 64-bit vector, its bitmap bytes reused without decoding. A Puffin file is `PFA1`, the blobs, then the footer
`PFA1 | UTF-8 JSON FileMetadata | int32 LE payload size | 4 flag bytes (0: uncompressed) | PFA1`.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from table_format.data.deletion_vector import MAGIC_32, MAGIC_64, checked_payload, decode_deletion_vector
from table_format.errors import CorruptMetadataError

PUFFIN_MAGIC = b"PFA1"
DV_MAGIC = struct.pack("<I", MAGIC_64)  # D1 D3 39 64
DV_BLOB_TYPE = "deletion-vector-v1"
ROW_POSITION_FIELD_ID = 2147483645  # Iceberg's `_pos` metadata column, the field a deletion vector is computed for
CREATED_BY = "lakehouse table_format (Paimon deletion vectors as Iceberg v3 deletion vectors)"


@dataclass(frozen=True, slots=True)
class DeletionVectorBlob:
    """One data file's deletion vector, framed as a `deletion-vector-v1` blob."""

    referenced_data_file: str  # the data file's location exactly as the data manifests list it
    blob: bytes
    cardinality: int


def iceberg_blob(paimon_dv: bytes, *, source: str) -> bytes:
    """The `deletion-vector-v1` blob of one Paimon deletion vector (`int32 BE size | payload | int32 BE CRC`)."""
    payload = checked_payload(paimon_dv, source=source)
    size = len(payload)
    if payload[:4] == DV_MAGIC:  # Paimon's 64-bit vector: already an Iceberg blob
        return paimon_dv[:8 + size]
    if size < 4 or struct.unpack_from(">i", payload, 0)[0] != MAGIC_32:
        raise CorruptMetadataError(f"deletion vector in {source} has an unknown magic number")
    body = DV_MAGIC + struct.pack("<QI", 1, 0) + payload[4:]
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def cardinality_of(paimon_dv: bytes, *, source: str) -> int:
    """The number of deleted positions, for deletion vectors whose index entry does not record it."""
    return int(len(decode_deletion_vector(paimon_dv, source=source)))


def puffin_file(blobs: Sequence[DeletionVectorBlob]) -> tuple[bytes, list[tuple[int, int]]]:
    """A Puffin file holding the blobs in order; also each blob's (offset, length) in it."""
    parts = [PUFFIN_MAGIC]
    offset = len(PUFFIN_MAGIC)
    ranges: list[tuple[int, int]] = []
    footer_blobs = []
    for b in blobs:
        ranges.append((offset, len(b.blob)))
        footer_blobs.append({
            "type": DV_BLOB_TYPE, "fields": [ROW_POSITION_FIELD_ID], "snapshot-id": -1, "sequence-number": -1,
            "offset": offset, "length": len(b.blob),
            "properties": {"referenced-data-file": b.referenced_data_file, "cardinality": str(b.cardinality)},
        })
        parts.append(b.blob)
        offset += len(b.blob)
    payload = json.dumps({"blobs": footer_blobs, "properties": {"created-by": CREATED_BY}}).encode("utf-8")
    parts += [PUFFIN_MAGIC, payload, struct.pack("<i", len(payload)), b"\x00\x00\x00\x00", PUFFIN_MAGIC]
    return b"".join(parts), ranges
