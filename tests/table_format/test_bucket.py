"""Bucket hashing against Java Paimon 0.9 (../shared/golden/bucket_assignments.jsonl) and digest Appendix B."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Context, Decimal
from typing import Any

import mmh3
import numpy as np
import pyarrow as pa
import pytest

from table_format.bucket import bucket_of, hash_bytes, hash_row, hash_rows
from table_format.row.binary_row import row_bytes_for_hash
from table_format.types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    parse_type,
)
from tests.table_format.golden import golden_value, load_jsonl, needs

ROWS = load_jsonl("bucket_assignments.jsonl")
needs_golden = needs(ROWS, "bucket_assignments.jsonl")


def _key(row: dict[str, Any]) -> tuple[list[DataType], list[Any]]:
    types = [parse_type(s) for s in row["bucket_key_types"].values()]
    return types, [golden_value(row["key"][k], t) for k, t in zip(row["bucket_key_types"], types, strict=True)]


@needs_golden
def test_golden_scalar() -> None:
    assert len(ROWS) == 1500
    for row in ROWS:
        types, values = _key(row)
        raw = row_bytes_for_hash(values, types)
        assert raw.hex() == row["python_binaryrow_hex"], row
        assert hash_row(values, types) == row["python_hash"], row
        assert abs(row["python_hash"]) % row["bucket_count"] == row["bucket"], row  # == abs(Java h % n)


def _arrow_type(t: DataType) -> pa.DataType:
    return {
        IntType: pa.int32(),
        BigIntType: pa.int64(),
        VarCharType: pa.string(),
        DateType: pa.date32(),
    }.get(type(t)) or (pa.decimal128(t.precision, t.scale) if isinstance(t, DecimalType) else pa.timestamp("ms"))


@needs_golden
def test_golden_vectorized() -> None:
    tables: dict[str, list[dict[str, Any]]] = {}
    for row in ROWS:
        tables.setdefault(row["table"], []).append(row)
    for name, rows in tables.items():
        types, _ = _key(rows[0])
        keys = [_key(r)[1] for r in rows]
        cols = [pa.array([k[i] for k in keys], _arrow_type(t)) for i, t in enumerate(types)]
        hashes = hash_rows(cols, types)
        assert hashes.dtype == np.int32
        assert hashes.tolist() == [r["python_hash"] for r in rows], name
        assert bucket_of(hashes, rows[0]["bucket_count"]).tolist() == [r["bucket"] for r in rows], name


S, INT, L = VarCharType(), IntType(), BigIntType()


@pytest.mark.parametrize(
    ("values", "types", "expected"),
    [
        ([5], [INT], 260196596),
        ([5, 6], [INT, INT], 131015827),
        ([5, 6, 7], [INT, INT, INT], 1805332940),
        (["hello"], [S], 243722546),
        (["hello-java"], [S], -201703277),
        (["hello-java", 42], [S, L], -2066620165),
        ([Decimal("12345.67")], [DecimalType(10, 2)], 754928256),
        ([Decimal("12345678901234567890123.45")], [DecimalType(25, 2)], 1388205002),
        ([dt.datetime(2026, 1, 2, 3, 4, 5, 123000)], [TimestampType(3)], -1766746798),
        ([dt.datetime(2026, 1, 2, 3, 4, 5, 123456)], [TimestampType(6)], 1245041971),
        ([bytes([0, 1, 0xFF, 0x7F])], [VarBinaryType()], 586821318),
        ([bytes(range(10))], [VarBinaryType()], 1822312655),
    ],
)
def test_appendix_b(values: list[Any], types: list[DataType], expected: int) -> None:
    assert hash_row(values, types) == expected
    cols = [pa.array([v]) for v in values]
    assert hash_rows(cols, types).tolist() == [expected]


def test_appendix_b_buckets() -> None:
    hashes = np.array([hash_row([5], [INT]), hash_row([5, 6], [INT, INT]), hash_row([5, 6, 7], [INT, INT, INT])])
    assert bucket_of(hashes, 100).tolist() == [96, 27, 40]
    assert bucket_of(np.array([hash_row(["hello"], [S])]), 4).tolist() == [2]


def test_bucket_of_uses_java_remainder() -> None:
    h = np.array([-7, 7, -8, -(2**31), 2**31 - 1, 0], dtype=np.int32)
    assert bucket_of(h, 4).tolist() == [3, 3, 0, 0, 3, 0]
    assert bucket_of(h, 3).tolist() == [1, 1, 2, 2, 1, 0]
    with pytest.raises(ValueError):
        bucket_of(h, 0)


def test_hash_bytes_matches_mmh3() -> None:
    rnd = random.Random(1)
    for _ in range(200):
        data = rnd.randbytes(8 * rnd.randint(1, 12))
        assert hash_bytes(data) == mmh3.hash(data, 42, signed=True)


# --- vectorized == scalar on random data ----------------------------------------------------------------------

N = 3000


def _strings(rnd: random.Random, n: int) -> list[str | None]:
    alphabet = "abcxyz-ÄéΩ日本"
    return [
        None
        if rnd.random() < 0.1
        else "".join(rnd.choice(alphabet) for _ in range(rnd.choice([0, 1, 3, 7, 8, 9, 15, 16, 17, 40])))
        for _ in range(n)
    ]


def _random_column(t: DataType, rnd: random.Random, n: int) -> tuple[list[Any], pa.Array]:
    def maybe(gen: Any) -> list[Any]:
        return [None if rnd.random() < 0.1 else gen() for _ in range(n)]

    if isinstance(t, BooleanType):
        v = maybe(lambda: rnd.random() < 0.5)
        return v, pa.array(v, pa.bool_())
    if isinstance(t, TinyIntType):
        v = maybe(lambda: rnd.randint(-128, 127))
        return v, pa.array(v, pa.int8())
    if isinstance(t, SmallIntType):
        v = maybe(lambda: rnd.randint(-(2**15), 2**15 - 1))
        return v, pa.array(v, pa.int16())
    if isinstance(t, IntType):
        v = maybe(lambda: rnd.randint(-(2**31), 2**31 - 1))
        return v, pa.array(v, pa.int32())
    if isinstance(t, BigIntType):
        v = maybe(lambda: rnd.randint(-(2**63), 2**63 - 1))
        return v, pa.chunked_array([pa.array(v[: n // 3], pa.int64()), pa.array(v[n // 3 :], pa.int64())])
    if isinstance(t, FloatType):
        v = maybe(lambda: float(np.float32(rnd.uniform(-1e6, 1e6))))
        return v, pa.array(v, pa.float32())
    if isinstance(t, DoubleType):
        v = maybe(lambda: rnd.uniform(-1e300, 1e300))
        return v, pa.array(v, pa.float64())
    if isinstance(t, DateType):
        v = maybe(lambda: dt.date(1970, 1, 1) + dt.timedelta(days=rnd.randint(-700000, 2900000)))
        return v, pa.array(v, pa.date32())
    if isinstance(t, TimeType):
        v = maybe(
            lambda: dt.time(rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59), rnd.randint(0, 999) * 1000)
        )
        return v, pa.array(v, pa.time32("ms"))
    if isinstance(t, DecimalType):
        bound = 10**t.precision - 1
        v = maybe(lambda: Decimal(rnd.randint(-bound, bound)).scaleb(-t.scale, context=_CTX))
        return v, pa.array(v, pa.decimal128(t.precision, t.scale))
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        unit = 10 ** max(0, 6 - t.precision)
        tz = dt.timezone.utc if isinstance(t, LocalZonedTimestampType) else None
        v = maybe(
            lambda: (
                dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rnd.randint(-2 * 10**16, 2 * 10**17) // unit * unit)
            ).replace(tzinfo=tz)
        )
        arrow_unit = "ms" if t.precision <= 3 else "us"
        return v, pa.array(v, pa.timestamp(arrow_unit, tz="UTC" if tz else None))
    if isinstance(t, (VarCharType, CharType)):
        v = _strings(rnd, n)
        return v, pa.array(v, pa.large_string() if isinstance(t, CharType) else pa.string())
    if isinstance(t, (VarBinaryType, BinaryType)):
        v = [None if s is None else s.encode() for s in _strings(rnd, n)]
        return v, pa.array(v, pa.binary())
    raise AssertionError(t)


_CTX = Context(prec=100)

KEY_TYPES: list[DataType] = [
    BooleanType(),
    TinyIntType(),
    SmallIntType(),
    IntType(),
    BigIntType(),
    FloatType(),
    DoubleType(),
    DateType(),
    TimeType(),
    DecimalType(10, 2),
    DecimalType(18, 0),
    DecimalType(19, 4),
    DecimalType(38, 10),
    VarCharType(),
    CharType(10),
    VarBinaryType(),
    BinaryType(10),
    TimestampType(0),
    TimestampType(3),
    TimestampType(6),
    LocalZonedTimestampType(3),
    LocalZonedTimestampType(6),
]


@pytest.mark.parametrize("t", KEY_TYPES, ids=str)
def test_vectorized_equals_scalar_single_column(t: DataType) -> None:
    rnd = random.Random(str(t))
    values, col = _random_column(t, rnd, N)
    got = hash_rows([col], [t])
    assert got.tolist() == [hash_row([v], [t]) for v in values]


@pytest.mark.parametrize("seed", range(6))
def test_vectorized_equals_scalar_multi_column(seed: int) -> None:
    rnd = random.Random(seed)
    types = [rnd.choice(KEY_TYPES) for _ in range(rnd.randint(2, 6))]
    if seed == 0:
        types = [VarCharType(), DecimalType(30, 3), VarCharType(), TimestampType(6), VarBinaryType()]
    cols = [_random_column(t, rnd, N) for t in types]
    got = hash_rows([c for _, c in cols], types)
    expected = [hash_row([vals[i] for vals, _ in cols], types) for i in range(N)]
    assert got.tolist() == expected


def test_many_columns_use_a_wider_header() -> None:
    types: list[DataType] = [IntType()] * 60 + [VarCharType()]
    rnd = random.Random(9)
    cols = [_random_column(t, rnd, 200) for t in types]
    got = hash_rows([c for _, c in cols], types)
    assert got.tolist() == [hash_row([vals[i] for vals, _ in cols], types) for i in range(200)]


def test_arrow_representations_agree() -> None:
    words = ["", "a", "abcdefg", "abcdefgh", "x" * 33, None, "ünï©ødé", "hello-java"] * 10
    expected = [hash_row([w], [S]) for w in words]
    base = pa.array(words, pa.string())
    variants = [
        base,
        pa.array(words, pa.large_string()),
        pa.array(words, pa.string_view()),
        base.dictionary_encode(),
        pa.chunked_array([base.slice(0, 13), base.slice(13, 40), base.slice(53)]),
    ]
    for v in variants:
        assert hash_rows([v], [S]).tolist() == expected, v.type
    sliced = base.slice(5, 30)
    assert hash_rows([sliced], [S]).tolist() == expected[5:35]
    assert hash_rows([pa.array(words, pa.binary())], [VarBinaryType()]).tolist() == [
        hash_row([None if w is None else w.encode()], [VarBinaryType()]) for w in words
    ]
    fixed = [b"abcd", None, b"\x00\x01\x02\x03"]
    assert hash_rows([pa.array(fixed, pa.binary(4))], [BinaryType(4)]).tolist() == [
        hash_row([v], [BinaryType(4)]) for v in fixed
    ]


def test_timestamp_units_are_converted_by_paimon_precision() -> None:
    ts = [dt.datetime(2024, 5, 14, 1, 2, 3, 456789), None, dt.datetime(1969, 12, 31, 23, 59, 59, 999999)]
    for p in (0, 3, 6, 9):
        t = TimestampType(p)
        expected = [hash_row([v], [t]) for v in ts]
        for unit in ("us", "ns"):
            assert hash_rows([pa.array(ts, pa.timestamp(unit))], [t]).tolist() == expected, (p, unit)
    ms = [dt.datetime(2024, 5, 14, 1, 2, 3, 456000), None]
    for unit in ("s", "ms"):
        col = pa.array(ms, pa.timestamp("ms")).cast(pa.timestamp(unit), safe=False)
        vals = [v if unit == "ms" or v is None else v.replace(microsecond=0) for v in ms]
        assert hash_rows([col], [TimestampType(6)]).tolist() == [hash_row([v], [TimestampType(6)]) for v in vals]
    aware = [dt.datetime(2024, 5, 14, 1, 2, 3, 456000, tzinfo=dt.timezone.utc)]
    t_ltz = LocalZonedTimestampType(3)
    col = pa.array(aware, pa.timestamp("ms", tz="Asia/Tokyo"))
    assert hash_rows([col], [t_ltz]).tolist() == [hash_row(aware, [t_ltz])]


def test_decimal_rescaled_to_paimon_scale() -> None:
    t = DecimalType(12, 3)
    col = pa.array([Decimal("1.5"), Decimal("-2.25"), None], pa.decimal128(5, 2))
    assert hash_rows([col], [t]).tolist() == [hash_row([v], [t]) for v in (Decimal("1.5"), Decimal("-2.25"), None)]


def test_empty_input() -> None:
    assert hash_rows([pa.array([], pa.int32())], [INT]).tolist() == []


def test_length_mismatch() -> None:
    with pytest.raises(ValueError):
        hash_rows([pa.array([1]), pa.array([1, 2])], [INT, INT])
    with pytest.raises(ValueError):
        hash_rows([pa.array([1])], [INT, INT])


def test_date_and_time_arrow_variants() -> None:
    days = [dt.date(2024, 5, 14), None, dt.date(1969, 12, 31), dt.date(1, 1, 1)]
    expected = [hash_row([v], [DateType()]) for v in days]
    assert hash_rows([pa.array(days, pa.date32())], [DateType()]).tolist() == expected
    assert hash_rows([pa.array(days, pa.date64())], [DateType()]).tolist() == expected
    times = [dt.time(1, 2, 3, 456000), None, dt.time(23, 59, 59, 999000)]
    expected = [hash_row([v], [TimeType()]) for v in times]
    for arrow_type in (pa.time32("ms"), pa.time64("us"), pa.time64("ns")):
        assert hash_rows([pa.array(times, arrow_type)], [TimeType()]).tolist() == expected, arrow_type
