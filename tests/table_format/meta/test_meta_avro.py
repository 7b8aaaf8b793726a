"""table_format.meta.avro: codec mapping, container round trips, and corrupt input -> CorruptMetadataError."""

from __future__ import annotations

import io
import random
from pathlib import Path

import fastavro
import pytest
import zstandard

from table_format.errors import CorruptMetadataError, OptionError, UnsupportedFeatureError
from table_format.meta.avro import avro_codec, read_avro, write_avro, writer_schema_json

GOLDEN = Path(__file__).resolve().parents[3].parent / "shared" / "golden"

SCHEMA = {
    "type": "record",
    "name": "org.apache.paimon.avro.generated.record",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "s", "type": "string"},
        {"default": None, "name": "b", "type": ["null", "bytes"]},
    ],
}
RECORDS = [{"a": i, "s": f"row-{i}" * 3, "b": None if i % 3 else bytes([i % 256]) * 9} for i in range(200)]


@pytest.mark.parametrize(
    ("value", "codec"),
    [
        ("zstd", "zstandard"),
        ("ZSTD", "zstandard"),
        ("zstandard", "zstandard"),
        ("none", "null"),
        ("null", "null"),
        ("snappy", "snappy"),
        ("deflate", "deflate"),
        ("bzip2", "bzip2"),
        ("xz", "xz"),
    ],
)
def test_avro_codec_mapping(value: str, codec: str) -> None:
    assert avro_codec(value) == codec


def test_avro_codec_rejects_unknown() -> None:
    with pytest.raises(OptionError, match="lz4"):
        avro_codec("lz4")


@pytest.mark.parametrize("codec", ["zstandard", "zstd", "null", "none", "deflate", "bzip2", "xz"])
def test_round_trip_every_codec(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS, codec=codec)
    assert data[:4] == b"Obj\x01"
    assert read_avro(data, source="t") == RECORDS
    expected = avro_codec(codec)
    assert fastavro.reader(io.BytesIO(data)).metadata["avro.codec"] == expected


def test_zstandard_output_is_readable_by_plain_zstd_frames() -> None:
    data = write_avro(SCHEMA, RECORDS, codec="zstandard", level=1)
    # an independent reader of the block: parse the container by hand through fastavro's block iterator
    blocks = list(fastavro.block_reader(io.BytesIO(data)))
    assert sum(b.num_records for b in blocks) == len(RECORDS)


def test_reads_zstd_frames_without_content_size() -> None:
    """Java's zstd-jni stream frames carry no content size; they must still decode."""
    data = write_avro(SCHEMA, RECORDS, codec="null")
    # re-compress every block as a streaming frame (no content size), like ZstdOutputStream does
    reader = fastavro.reader(io.BytesIO(data))
    sync = reader._header["sync"]
    header_end = data.index(sync) + len(sync)
    body = data[header_end:]
    from table_format.meta.avro import _avro_long_bytes, _read_avro_long

    fo = io.BytesIO(body)
    out = bytearray(data[:header_end].replace(b"\x08null", b"\x12zstandard"))
    while fo.tell() < len(body):
        count = _read_avro_long(fo)
        size = _read_avro_long(fo)
        raw = fo.read(size)
        assert fo.read(16) == sync
        cobj = zstandard.ZstdCompressor(level=1, write_content_size=False).compressobj()
        frame = cobj.compress(raw) + cobj.flush()
        assert zstandard.frame_content_size(frame) == -1
        out += _avro_long_bytes(count) + _avro_long_bytes(len(frame)) + frame + sync
    assert read_avro(bytes(out), source="t") == RECORDS


def test_unavailable_codec_on_write() -> None:
    try:
        import cramjam  # noqa: F401
    except ImportError:
        with pytest.raises(UnsupportedFeatureError, match="snappy"):
            write_avro(SCHEMA, RECORDS, codec="snappy")
    else:  # pragma: no cover - depends on the machine
        assert read_avro(write_avro(SCHEMA, RECORDS, codec="snappy"), source="t") == RECORDS


@pytest.mark.parametrize(
    "data",
    [b"", b"Obj", b"Obj\x02" + b"\x00" * 40, b"PAR1 not avro at all", b"\x00" * 100],
    ids=["empty", "short-magic", "bad-magic", "parquet", "zeros"],
)
def test_garbage_is_corrupt(data: bytes) -> None:
    with pytest.raises(CorruptMetadataError, match="manifest-x"):
        read_avro(data, source="manifest-x")


def test_unknown_codec_in_header_is_corrupt() -> None:
    data = write_avro(SCHEMA, RECORDS, codec="null")
    bad = data.replace(b"\x08null", b"\x08nulx", 1)
    with pytest.raises(CorruptMetadataError, match="manifest-y"):
        read_avro(bad, source="manifest-y")


@pytest.mark.parametrize("codec", ["zstandard", "null", "deflate"])
def test_every_truncation_is_corrupt_or_a_prefix(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS[:20], codec=codec)
    for n in range(len(data)):
        try:
            got = read_avro(data[:n], source="m")
        except CorruptMetadataError as e:
            assert "m:" in str(e)
        else:  # an Avro container cut exactly after a block is indistinguishable from a shorter file
            assert got == RECORDS[: len(got)]


@pytest.mark.parametrize("codec", ["zstandard", "null"])
def test_random_byte_flips_never_escape(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS[:30], codec=codec)
    rnd = random.Random(1234)
    for _ in range(600):
        buf = bytearray(data)
        for _ in range(rnd.randint(1, 4)):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
        try:
            got = read_avro(bytes(buf), source="m")
        except CorruptMetadataError:
            continue
        assert isinstance(got, list)


def test_writer_schema_json_of_java_file() -> None:
    files = sorted((GOLDEN / "tables").glob("*/manifest/manifest-list-*")) if GOLDEN.is_dir() else []
    if not files:
        pytest.skip(f"Java golden tables not found under {GOLDEN}")
    raw = writer_schema_json(files[0].read_bytes(), source=str(files[0]))
    assert raw.startswith('{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated"')
    with pytest.raises(CorruptMetadataError):
        writer_schema_json(b"nope", source="x")
