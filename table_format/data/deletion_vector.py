"""Deletion vectors: the deleted row positions of a data file, stored in DELETION_VECTORS index files.

Mirrors org.apache.paimon.deletionvectors.DeletionVectorsIndexFile / BitmapDeletionVector /
Bitmap64DeletionVector: a version byte, then per data file `int32 BE size | payload | int32 BE CRC32`;
a 32-bit payload is `int32 BE magic 1581511376` + a portable Roaring bitmap, a 64-bit payload is
`int32 LE magic 1681511377` + `int64 LE count` + per 32-bit bitmap `int32 LE high key` + bitmap.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from pyroaring import BitMap

from table_format.errors import CorruptMetadataError
from table_format.io.file_io import FileIO

if TYPE_CHECKING:
    from table_format.meta.snapshot import Snapshot
    from table_format.store.file_store import FileStore

DELETION_VECTORS = "DELETION_VECTORS"  # index type in the index manifest
VERSION_V1 = 1
MAGIC_32 = 1581511376
MAGIC_64 = 1681511377


@dataclass(frozen=True, slots=True)
class DeletionFile:
    """Where the deletion vector of one data file lives (DeletionFile)."""

    path: str
    offset: int
    length: int
    cardinality: int | None = None


def _positions_64(payload: bytes, source: str) -> np.ndarray:
    count = struct.unpack_from("<q", payload, 4)[0]
    pos = 12
    parts = []
    for _ in range(count):
        high = struct.unpack_from("<i", payload, pos)[0]
        pos += 4
        bitmap = BitMap.deserialize(payload[pos:])
        pos += len(bitmap.serialize())
        parts.append((np.int64(high) << 32) | np.array(bitmap.to_array(), dtype=np.int64))
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def checked_payload(blob: bytes, *, source: str) -> bytes:
    """The payload of `int32 BE size | payload | int32 BE CRC` bytes, its length and CRC checked."""
    if len(blob) < 8:
        raise CorruptMetadataError(f"deletion vector in {source} is truncated")
    size = struct.unpack_from(">i", blob, 0)[0]
    payload = blob[4 : 4 + size]
    if len(payload) != size or len(blob) < 8 + size:
        raise CorruptMetadataError(f"deletion vector in {source} is truncated (size {size})")
    crc = struct.unpack_from(">I", blob, 4 + size)[0]
    if zlib.crc32(payload) & 0xFFFFFFFF != crc:
        raise CorruptMetadataError(f"deletion vector in {source} fails its CRC32 check")
    return payload


def decode_deletion_vector(blob: bytes, *, source: str) -> np.ndarray:
    """Deleted positions from `int32 BE size | payload | int32 BE CRC` bytes."""
    payload = checked_payload(blob, source=source)
    try:
        if struct.unpack_from(">i", payload, 0)[0] == MAGIC_32:
            return np.array(BitMap.deserialize(payload[4:]).to_array(), dtype=np.int64)
        if struct.unpack_from("<i", payload, 0)[0] == MAGIC_64:
            return _positions_64(payload, source)
    except (ValueError, struct.error) as e:
        raise CorruptMetadataError(f"deletion vector in {source} is not a valid bitmap: {e}") from None
    raise CorruptMetadataError(f"deletion vector in {source} has an unknown magic number")


def read_deletion_vector(file_io: FileIO, dv: DeletionFile) -> np.ndarray:
    with file_io.open_input_file(dv.path) as f:
        f.seek(dv.offset)
        head = f.read(4)
        if len(head) < 4:
            raise CorruptMetadataError(f"deletion vector at {dv.path}@{dv.offset} is truncated")
        size = struct.unpack(">i", head)[0]
        blob = head + f.read(size + 4)
    return decode_deletion_vector(blob, source=f"{dv.path}@{dv.offset}")


def encode_deletion_vector(positions: np.ndarray) -> bytes:
    """`int32 BE size | magic + portable bitmap | int32 BE CRC` for a 32-bit deletion vector."""
    bitmap = BitMap(positions.astype(np.uint32))
    bitmap.run_optimize()
    payload = struct.pack(">i", MAGIC_32) + bitmap.serialize()
    return struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload) & 0xFFFFFFFF)


def write_deletion_vector_file(
    file_io: FileIO, path: str, vectors: dict[str, np.ndarray]
) -> tuple[int, list[tuple[str, int, int, int]]]:
    """Write a DELETION_VECTORS index file (DeletionVectorsIndexFile.write); returns (size, ranges).

    Each range is (data file name, offset of its size int, payload length, cardinality), as the index
    manifest's `_DELETIONS_VECTORS_RANGES` records it for 32-bit vectors.
    """
    parts = [bytes([VERSION_V1])]
    offset = 1
    ranges = []
    for name, positions in vectors.items():
        blob = encode_deletion_vector(positions)
        ranges.append((name, offset, len(blob) - 8, int(len(np.unique(positions)))))
        parts.append(blob)
        offset += len(blob)
    data = b"".join(parts)
    file_io.write_bytes(path, data)
    return len(data), ranges


def deletion_files_of(store: FileStore, snapshot: Snapshot) -> dict[tuple[bytes, int, str], DeletionFile]:
    """Deletion vector location of every data file that has one (index manifest, DELETION_VECTORS), by
    (partition, bucket, data file name)."""
    from table_format.meta.manifest import FileKind  # noqa: PLC0415 - meta imports this module's neighbours

    out: dict[tuple[bytes, int, str], DeletionFile] = {}
    if not snapshot.index_manifest:
        return out
    for e in store.manifests.read_index_manifest(snapshot.index_manifest):
        meta = e.index_file
        if e.kind != FileKind.ADD or meta.index_type != DELETION_VECTORS or not meta.dv_ranges:
            continue
        path = meta.external_path or store.paths.index_file(meta.file_name)
        for r in meta.dv_ranges:
            out[(e.partition, e.bucket, r.data_file_name)] = DeletionFile(path, r.offset, r.length, r.cardinality)
    return out
