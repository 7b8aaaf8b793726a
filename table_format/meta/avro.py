"""Thin fastavro wrapper for Paimon's Avro object-container metadata files.

Mirrors the container handling of org.apache.paimon.format.avro.AvroFileFormat as used for manifests,
manifest lists and index manifests: codec from `manifest.compression` (zstd -> Avro `zstandard`), schema
records resolved by field name. Every decode failure becomes a CorruptMetadataError naming the file.

fastavro >= 1.13 only supports `zstandard` through `backports.zstd`; when that is missing, a block codec
backed by the `zstandard` package is registered here (only filling the gap, never replacing a working one).
"""

from __future__ import annotations

import importlib
import io
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import fastavro
import fastavro.read
import fastavro.write
import zstandard

from table_format.errors import CorruptMetadataError, OptionError, UnsupportedFeatureError

__all__ = ["avro_codec", "PlainContainer", "plain_container", "read_avro", "write_avro", "writer_schema_json", "AVRO_CODECS"]

# manifest.compression value (lower case) -> Avro codec name (CodecFactory.fromString names).
_CODEC_ALIASES: dict[str, str] = {
    "zstd": "zstandard",
    "zstandard": "zstandard",
    "none": "null",
    "null": "null",
    "uncompressed": "null",
    "snappy": "snappy",
    "deflate": "deflate",
    "bzip2": "bzip2",
    "xz": "xz",
}
AVRO_CODECS = frozenset(_CODEC_ALIASES.values())


def avro_codec(compression: str) -> str:
    """Map a Paimon `manifest.compression` value (zstd, none, snappy, deflate, ...) to the Avro codec name."""
    codec = _CODEC_ALIASES.get(compression.strip().lower())
    if codec is None:
        raise OptionError(
            f"manifest.compression={compression!r} is not an Avro codec; use one of {sorted(_CODEC_ALIASES)}"
        )
    return codec


# ---- zstandard codec backed by the `zstandard` package ---------------------------------------------------------


def _read_avro_long(fo: Any) -> int:
    shift = 0
    acc = 0
    while True:
        b = fo.read(1)
        if not b:
            raise EOFError("end of data inside a block length")
        byte = b[0]
        acc |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (acc >> 1) ^ -(acc & 1)
        shift += 7
        if shift > 63:
            raise ValueError("block length varint too long")


def _avro_long_bytes(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z & ~0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _zstd_decompress(data: bytes) -> bytes:
    """Decompress one or more complete zstd frames; truncated or trailing garbage is an error."""
    out: list[bytes] = []
    rest = data
    while True:
        d = zstandard.ZstdDecompressor().decompressobj()
        out.append(d.decompress(rest))
        if not d.eof:
            raise ValueError("zstd block is truncated")
        rest = d.unused_data
        if not rest:
            return b"".join(out)


def _zstd_read_block(fo_or_decoder: Any) -> io.BytesIO:
    if hasattr(fo_or_decoder, "read_fixed"):  # fastavro's pure-Python reader passes a decoder
        data = fo_or_decoder.read_fixed(fo_or_decoder.read_long())
    else:
        length = _read_avro_long(fo_or_decoder)
        if length < 0:
            raise ValueError("negative block length")
        data = fo_or_decoder.read(length)
        if len(data) != length:
            raise EOFError("end of data inside a block")
    return io.BytesIO(_zstd_decompress(data))


def _zstd_write_block(fo_or_encoder: Any, block_bytes: bytes, compression_level: int | None) -> None:
    compressed = zstandard.ZstdCompressor(
        level=3 if compression_level is None else compression_level, write_checksum=True
    ).compress(bytes(block_bytes))
    if hasattr(fo_or_encoder, "write_long"):  # pure-Python writer passes an encoder
        fo_or_encoder.write_long(len(compressed))
        fo_or_encoder._fo.write(compressed)
    else:
        fo_or_encoder.write(_avro_long_bytes(len(compressed)))
        fo_or_encoder.write(compressed)


def _is_missing_codec(fn: Callable[..., Any] | None) -> bool:
    return fn is None or "missing" in getattr(fn, "__qualname__", "")


def _register_zstandard() -> None:
    readers = fastavro.read.BLOCK_READERS
    if _is_missing_codec(readers.get("zstandard")):
        readers["zstandard"] = _zstd_read_block
    write_impl = importlib.import_module(getattr(fastavro.write.writer, "__module__", None) or "fastavro._write")
    writers: dict[str, Any] | None = getattr(write_impl, "BLOCK_WRITERS", None)
    if writers is not None and _is_missing_codec(writers.get("zstandard")):
        writers["zstandard"] = _zstd_write_block


_register_zstandard()

# ---- public API --------------------------------------------------------------------------------------------------


def write_avro(
    schema: dict[str, Any], records: Iterable[dict[str, Any]], *, codec: str = "zstandard", level: int | None = 1
) -> bytes:
    """Encode `records` as one Avro object-container file (the bytes of a manifest/manifest-list file).

    `codec` is an Avro codec name or a `manifest.compression` value; `level` applies to zstandard only
    (Paimon passes `file.compression.zstd-level`, default 1), other codecs use their library defaults.
    """
    if codec not in AVRO_CODECS:
        codec = avro_codec(codec)
    buf = io.BytesIO()
    try:
        fastavro.writer(
            buf,
            schema,  # unparsed, so the header keeps the schema exactly as given (Java's spelling)
            records,
            codec=codec,
            codec_compression_level=level if codec == "zstandard" else None,
        )
    except ValueError as e:
        if "codec" in str(e):
            raise UnsupportedFeatureError(f"Avro codec {codec!r} is not available here: {e}") from None
        raise
    return buf.getvalue()


def read_avro(data: bytes, *, source: str) -> list[dict[str, Any]]:
    """Decode every record of an Avro container; any failure is a CorruptMetadataError naming `source`.

    Each block must be consumed exactly by its record count: the count sits outside the compressed data, so a
    damaged count would otherwise silently drop the block's last records.
    """
    records: list[dict[str, Any]] = []
    try:
        for block in fastavro.block_reader(io.BytesIO(data)):
            records.extend(cast(Iterable[dict[str, Any]], block))
            body = getattr(block, "bytes_", None)  # the decompressed block (fastavro's Block)
            if isinstance(body, io.BytesIO) and body.tell() != len(body.getbuffer()):
                raise CorruptMetadataError(
                    f"{source}: Avro block at byte {block.offset} holds {len(body.getbuffer()) - body.tell()} bytes "
                    f"beyond its {block.num_records} records"
                )
    except CorruptMetadataError:
        raise
    except Exception as e:  # noqa: BLE001 - fastavro/zstd raise many kinds; all mean "unreadable"
        raise CorruptMetadataError(f"{source}: unreadable Avro file ({type(e).__name__}: {e})") from None
    return records


def writer_schema_json(data: bytes, *, source: str) -> str:
    """The raw `avro.schema` header string of a container file (the writer schema as its writer spelled it)."""
    try:
        reader = fastavro.reader(io.BytesIO(data))
        raw = reader.metadata["avro.schema"]
    except Exception as e:  # noqa: BLE001
        raise CorruptMetadataError(f"{source}: unreadable Avro header ({type(e).__name__}: {e})") from None
    return raw if isinstance(raw, str) else bytes(raw).decode("utf-8")


# ---- container transcoding (for column-wise readers) -------------------------------------------------------------

_MAGIC = b"Obj\x01"
_PLAIN_CODECS = frozenset({"null", "deflate", "zstandard"})  # what plain_container decompresses


class _Cursor:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def long(self) -> int:
        shift = acc = 0
        data = self.data
        while True:
            byte = data[self.pos]
            self.pos += 1
            acc |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (acc >> 1) ^ -(acc & 1)
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("length beyond the end of the file")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


@dataclass(frozen=True, slots=True)
class PlainContainer:
    """An Avro container re-encoded without compression, for a column-wise reader."""

    data: bytes  # the container, codec `null`
    schema: str  # the writer schema (header `avro.schema`)
    block_records: tuple[int, ...]  # records per block
    block_bytes: tuple[int, ...]  # uncompressed bytes per block


def plain_container(data: bytes) -> PlainContainer:
    """The container with its blocks decompressed (codecs null, deflate, zstandard); ValueError on a damaged
    container or another codec."""
    cur = _Cursor(data)
    if cur.take(4) != _MAGIC:
        raise ValueError("not an Avro container")
    meta: dict[str, bytes] = {}
    while (count := cur.long()) != 0:
        if count < 0:
            count = -count
            cur.long()
        for _ in range(count):
            key = cur.take(cur.long()).decode("utf-8")
            meta[key] = cur.take(cur.long())
    sync = cur.take(16)
    codec = meta.get("avro.codec", b"null").decode("utf-8")
    if codec not in _PLAIN_CODECS:
        raise ValueError(f"codec {codec!r} is read row-wise")
    blocks: list[bytes] = []
    counts: list[int] = []
    sizes: list[int] = []
    while cur.pos < len(data):
        n = cur.long()
        body = cur.take(cur.long())
        if n < 0 or cur.take(16) != sync:
            raise ValueError("bad block count or sync marker")
        if codec == "zstandard":
            body = _zstd_decompress(body)
        elif codec == "deflate":
            body = zlib.decompress(body, -15)
        counts.append(n)
        sizes.append(len(body))
        blocks.append(_avro_long_bytes(n) + _avro_long_bytes(len(body)) + body + sync)
    meta["avro.codec"] = b"null"
    head = [_MAGIC, _avro_long_bytes(len(meta))]
    for key, value in meta.items():
        k = key.encode("utf-8")
        head += [_avro_long_bytes(len(k)), k, _avro_long_bytes(len(value)), value]
    head += [b"\x00", sync]
    return PlainContainer(b"".join(head + blocks), meta["avro.schema"].decode("utf-8"), tuple(counts), tuple(sizes))
