"""BinaryRow encode/decode against Java Paimon 0.9 bytes (../shared/golden/binary_rows.jsonl) and digest 5.x."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from decimal import Context, Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_format.errors import CorruptMetadataError
from table_format.partition_path import partition_value_string
from table_format.row.binary_row import (
    EMPTY_ROW,
    decode_row,
    encode_row,
    row_bytes_for_hash,
    row_decoder,
    strip_arity,
)
from table_format.row.sort import stable_sort_indices
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
from tests.table_format.golden import load_jsonl, needs


def _entries() -> list[dict[str, Any]]:
    lines = load_jsonl("binary_rows.jsonl")
    schemas: dict[str, dict[str, Any]] = {}
    entries = []
    for d in lines:
        if "schema" in d:
            schemas.setdefault(d["table"], d["schema"])
        if "_PARTITION" in d:
            entries.append(d)
    for d in entries:
        d["schema"] = schemas[d["table"]]
    return entries


ENTRIES = _entries()
needs_golden = needs(ENTRIES, "binary_rows.jsonl")


def _types(schema: dict[str, Any]) -> tuple[list[DataType], list[DataType], list[DataType], list[str]]:
    by_name = {f["name"]: parse_type(f["type"]) for f in schema["fields"]}
    part = [by_name[k] for k in schema["partition_keys"]]
    key = [by_name[k] for k in schema["primary_keys"] if k not in schema["partition_keys"]]
    return part, key, list(by_name.values()), list(by_name)


def _row_cases() -> list[Any]:
    cases = []
    for n, d in enumerate(ENTRIES):
        part, key, value, _ = _types(d["schema"])
        tag = f"{d['table']}#{n}"
        cases += [
            pytest.param(d["_PARTITION"], part, False, id=f"{tag}-partition"),
            pytest.param(d["_MIN_KEY"], key, False, id=f"{tag}-min_key"),
            pytest.param(d["_MAX_KEY"], key, False, id=f"{tag}-max_key"),
            pytest.param(d["_KEY_STATS"]["_MIN_VALUES"], key, True, id=f"{tag}-key_min"),
            pytest.param(d["_KEY_STATS"]["_MAX_VALUES"], key, True, id=f"{tag}-key_max"),
            pytest.param(d["_VALUE_STATS"]["_MIN_VALUES"], value, True, id=f"{tag}-value_min"),
            pytest.param(d["_VALUE_STATS"]["_MAX_VALUES"], value, True, id=f"{tag}-value_max"),
        ]
    return cases


@needs_golden
@pytest.mark.parametrize(("hex_row", "types", "stats"), _row_cases())
def test_golden_row_decodes_and_reencodes_identically(hex_row: str, types: list[DataType], stats: bool) -> None:
    raw = bytes.fromhex(hex_row)
    values = decode_row(raw, types)
    assert encode_row(values, types, stats=stats) == raw


def _java_row_string(values: tuple[Any, ...], types: list[DataType]) -> list[str]:
    return ["null" if v is None else str(partition_value_string(v, t)) for v, t in zip(values, types, strict=True)]


def _java_map(text: str) -> dict[str, str]:
    return dict(item.split("=", 1) for item in re.split(r", (?=\w+=)", text.strip("{}")))


@needs_golden
@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{d['table']}#{i}" for i, d in enumerate(ENTRIES)])
def test_golden_values_match_java_files_table(entry: dict[str, Any]) -> None:
    """Decoded values rendered with Java toString rules equal Java's `files` system table."""
    part, key, value, names = _types(entry["schema"])
    java = entry["java_files_table_row"]
    assert (
        "[" + ", ".join(_java_row_string(decode_row(bytes.fromhex(entry["_PARTITION"]), part), part)) + "]"
        == (java["partition"])
    )
    if key:
        got = decode_row(bytes.fromhex(entry["_MIN_KEY"]), key)
        assert "[" + ", ".join(_java_row_string(got, key)) + "]" == java["min_key"]
    for side in ("min", "max"):
        got = decode_row(bytes.fromhex(entry["_VALUE_STATS"][f"_{side.upper()}_VALUES"]), value)
        assert dict(zip(names, _java_row_string(got, value), strict=True)) == _java_map(java[f"{side}_value_stats"])


@needs_golden
def test_stats_rows_reserve_nothing_for_null_non_compact_fields() -> None:
    """Java's stats rows (bucket 1 of br_pk_bucket2_ts6) give null TIMESTAMP(6)/DECIMAL(38,10) no var bytes."""
    entry = next(d for d in ENTRIES if d["table"] == "br_pk_bucket2_ts6" and d["_VALUE_STATS"]["_NULL_COUNTS"][1])
    _, _, value, _ = _types(entry["schema"])
    raw = bytes.fromhex(entry["_VALUE_STATS"]["_MIN_VALUES"])
    assert decode_row(raw, value) == (3, None, None, None)
    assert len(raw) == 4 + 8 + 4 * 8
    assert encode_row((3, None, None, None), value, stats=True) == raw
    # the key-row writer (BinaryRowWriter via codegen) reserves 8 + 16 bytes instead, with offsets in the slots
    reserved = encode_row((3, None, None, None), value)
    assert len(reserved) == len(raw) + 24
    assert decode_row(reserved, value) == (3, None, None, None)


# --- digest section 5.2 / 5.5 / Appendix B byte vectors ------------------------------------------------------


def test_empty_row() -> None:
    assert bytes(12) == EMPTY_ROW
    assert encode_row([], []) == EMPTY_ROW
    assert decode_row(EMPTY_ROW, []) == ()


def test_inline_string() -> None:
    assert row_bytes_for_hash(["hello"], [VarCharType()]).hex() == "00" * 8 + "68656c6c6f000085"


def test_var_string() -> None:
    assert row_bytes_for_hash(["hello-java"], [VarCharType()]).hex() == (
        "00" * 8 + "0a00000010000000" + "68656c6c6f2d6a617661000000000000"
    )


def test_compact_decimal_slot() -> None:
    raw = row_bytes_for_hash([Decimal("12345.67")], [DecimalType(10, 2)])
    assert raw[8:].hex() == "87d6120000000000"


def test_non_compact_timestamp() -> None:
    ts = dt.datetime(2026, 1, 2, 3, 4, 5, 123456)
    raw = row_bytes_for_hash([ts], [TimestampType(6)])
    assert raw[8:16].hex() == "40f5060010000000"
    assert raw[16:].hex() == "038da97c9b010000"
    assert decode_row(encode_row([ts], [TimestampType(6)]), [TimestampType(6)]) == (ts,)


def test_partition_example_of_section_5_5() -> None:
    assert encode_row(["20240514"], [VarCharType()]).hex() == (
        "00000001" + "0000000000000000" + "0800000010000000" + "3230323430353134"
    )


def test_non_compact_decimal_bytes() -> None:
    t = DecimalType(25, 2)
    raw = row_bytes_for_hash([Decimal("-1.00")], [t])  # unscaled -100 -> one byte 0x9c
    assert raw[8:16] == (16 << 32 | 1).to_bytes(8, "little")
    assert raw[16:] == b"\x9c" + bytes(15)
    assert decode_row(encode_row([Decimal("-1")], [t]), [t]) == (Decimal("-1.00"),)


def test_null_non_compact_reserves_space_in_key_rows() -> None:
    types = [DecimalType(20, 4), TimestampType(9), IntType()]
    raw = row_bytes_for_hash([None, None, 1], types)
    assert raw[:8] == bytes([0, 0b11, 0, 0, 0, 0, 0, 0])
    assert raw[8:16] == (32 << 32).to_bytes(8, "little")
    assert raw[16:24] == (48 << 32).to_bytes(8, "little")
    assert len(raw) == 32 + 16 + 8


def test_header_grows_past_56_fields() -> None:
    types: list[DataType] = [IntType()] * 57
    values: list[Any] = list(range(56)) + [None]
    raw = encode_row(values, types)
    assert len(raw) == 4 + 16 + 57 * 8
    assert raw[4 + 8] == 1  # null bit 64 (field 56) -> byte 8 of the header
    assert decode_row(raw, types) == tuple(values)


def test_tinyint_smallint_write_only_their_bytes() -> None:
    raw = row_bytes_for_hash([-1, -32768], [TinyIntType(), SmallIntType()])
    assert raw[8:].hex() == "ff00000000000000" + "0080000000000000"


def test_local_zoned_timestamp_naive_is_utc() -> None:
    t = LocalZonedTimestampType(3)
    naive = dt.datetime(2024, 1, 1, 12, 0)
    aware = dt.datetime(2024, 1, 1, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert encode_row([naive], [t]) == encode_row([aware], [t])
    assert decode_row(encode_row([naive], [t]), [t]) == (naive.replace(tzinfo=dt.timezone.utc),)


def test_timestamp_truncated_to_precision() -> None:
    ts = dt.datetime(2024, 1, 1, 0, 0, 0, 123456)
    assert decode_row(encode_row([ts], [TimestampType(3)]), [TimestampType(3)]) == (ts.replace(microsecond=123000),)
    assert decode_row(encode_row([ts], [TimestampType(4)]), [TimestampType(4)]) == (ts.replace(microsecond=123400),)


# --- tolerance and corruption ----------------------------------------------------------------------------------


def test_short_row_pads_missing_trailing_fields_with_none() -> None:
    raw = encode_row([1, "a"], [IntType(), VarCharType()])
    assert decode_row(raw, [IntType(), VarCharType(), BigIntType(), DecimalType(30, 2)]) == (1, "a", None, None)


def test_extra_fields_are_ignored() -> None:
    raw = encode_row([1, "a"], [IntType(), VarCharType()])
    assert decode_row(raw, [IntType()]) == (1,)


@pytest.mark.parametrize(
    ("raw", "types"),
    [
        (b"", [IntType()]),
        (b"\x00\x00\x01", [IntType()]),
        (b"\xff\xff\xff\xff" + bytes(8), [IntType()]),
        (bytes.fromhex("00000002") + bytes(16), [IntType(), IntType()]),  # fixed part cut short
        (bytes.fromhex("00000001") + bytes(8) + (64 << 32 | 10).to_bytes(8, "little"), [VarCharType()]),
        (bytes.fromhex("00000001") + bytes(8) + (16 << 32 | 8).to_bytes(8, "little") + b"\xff" * 8, [VarCharType()]),
        (bytes.fromhex("00000001") + bytes(8) + (16 << 32 | 5).to_bytes(8, "little"), [TimestampType(6)]),
        (bytes.fromhex("00000001") + bytes(8) + (0xFFFFFFFF).to_bytes(8, "little"), [TimestampType(9)]),
        (bytes.fromhex("00000001") + bytes(8) + (2**31 - 1).to_bytes(8, "little"), [DateType()]),
        (bytes.fromhex("00000001") + bytes(8) + (2**31 - 1).to_bytes(8, "little"), [TimeType()]),
        (bytes.fromhex("00000001") + bytes(8) + (2**62).to_bytes(8, "little"), [TimestampType(3)]),
        (bytes.fromhex("00000001") + bytes(8) + (16 << 32).to_bytes(8, "little") + bytes(16), [DecimalType(30, 2)]),
    ],
)
def test_garbage_raises_corrupt_metadata(raw: bytes, types: list[DataType]) -> None:
    with pytest.raises(CorruptMetadataError):
        decode_row(raw, types)


ALL_TYPES: list[DataType] = [
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
    DecimalType(38, 6),
    VarCharType(),
    CharType(3),
    VarBinaryType(),
    BinaryType(4),
    TimestampType(3),
    TimestampType(6),
    TimestampType(9),
    LocalZonedTimestampType(3),
    LocalZonedTimestampType(6),
]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80), st.lists(st.sampled_from(ALL_TYPES), max_size=6))
def test_random_bytes_never_raise_anything_but_corrupt_metadata(raw: bytes, types: list[DataType]) -> None:
    with contextlib.suppress(CorruptMetadataError):
        decode_row(raw, types)


def test_strip_arity() -> None:
    raw = encode_row([7], [IntType()])
    assert strip_arity(raw) == row_bytes_for_hash([7], [IntType()])
    with pytest.raises(CorruptMetadataError):
        strip_arity(b"\x00")


# --- hypothesis round trip ---------------------------------------------------------------------------------------

_TS = st.datetimes(min_value=dt.datetime(1, 1, 1, 0, 0, 1), max_value=dt.datetime(9999, 12, 31))


def _decimal(p: int, s: int) -> st.SearchStrategy[Decimal]:
    bound = 10**p - 1
    return st.integers(-bound, bound).map(lambda u: Decimal(u).scaleb(-s, context=Context(prec=100)))


def _typed_value(t: DataType) -> st.SearchStrategy[Any]:
    if isinstance(t, BooleanType):
        return st.booleans()
    if isinstance(t, TinyIntType):
        return st.integers(-(2**7), 2**7 - 1)
    if isinstance(t, SmallIntType):
        return st.integers(-(2**15), 2**15 - 1)
    if isinstance(t, IntType):
        return st.integers(-(2**31), 2**31 - 1)
    if isinstance(t, BigIntType):
        return st.integers(-(2**63), 2**63 - 1)
    if isinstance(t, FloatType):
        return st.floats(width=32, allow_nan=False)
    if isinstance(t, DoubleType):
        return st.floats(allow_nan=False)
    if isinstance(t, DateType):
        return st.dates()
    if isinstance(t, TimeType):
        return st.times().map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000))
    if isinstance(t, DecimalType):
        return _decimal(t.precision, t.scale)
    if isinstance(t, (VarCharType, CharType)):
        return st.text(max_size=20)
    if isinstance(t, (VarBinaryType, BinaryType)):
        return st.binary(max_size=20)
    if isinstance(t, TimestampType):
        unit = 10 ** max(0, 6 - t.precision)
        return _TS.map(lambda v: v.replace(microsecond=v.microsecond // unit * unit))
    if isinstance(t, LocalZonedTimestampType):
        unit = 10 ** max(0, 6 - t.precision)
        return _TS.map(lambda v: v.replace(microsecond=v.microsecond // unit * unit, tzinfo=dt.timezone.utc))
    raise AssertionError(t)


@st.composite
def _rows(draw: st.DrawFn) -> tuple[list[DataType], list[Any]]:
    types = draw(st.lists(st.sampled_from(ALL_TYPES), max_size=12))
    values = [draw(st.one_of(st.none(), _typed_value(t))) for t in types]
    return types, values


@settings(max_examples=400, deadline=None)
@given(_rows(), st.booleans())
def test_round_trip(row: tuple[list[DataType], list[Any]], stats: bool) -> None:
    types, values = row
    raw = encode_row(values, types, stats=stats)
    assert len(raw) % 8 == 4
    decoded = decode_row(raw, types)
    assert decoded == tuple(values)
    assert encode_row(decoded, types, stats=stats) == raw


def test_row_decoder_equals_decode_row() -> None:
    numeric = [IntType(), BigIntType(), TinyIntType(), SmallIntType(), DoubleType()]
    decode = row_decoder(numeric)
    for values in ([1, -2, 3, -4, 0.5], [None, 5, None, 7, None], [2**31 - 1, -(2**63), -128, 32767, -0.0]):
        row = encode_row(values, numeric)
        assert decode(row) == decode_row(row, numeric) == tuple(values)
    assert decode(encode_row([1, 2], numeric[:2])) == decode_row(encode_row([1, 2], numeric[:2]), numeric)
    mixed = [IntType(), VarCharType(10)]
    assert row_decoder(mixed)(encode_row([3, "x"], mixed)) == (3, "x")


def test_stable_sort_indices_equals_lexsort() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 300))
        keys = [rng.integers(0, 4, n).astype(np.int64), rng.integers(-50, 50, n).astype(np.int32),
                rng.integers(0, 3, n).astype(np.uint8), rng.random(n)][: int(rng.integers(1, 5))]
        assert (stable_sort_indices(keys) == np.lexsort(keys[::-1])).all()
        initial = rng.permutation(n)
        expected = initial[np.lexsort([k[initial] for k in keys[::-1]])]
        assert (stable_sort_indices(keys, initial=initial) == expected).all()
    wide = [np.array([0, 2**62, 5], dtype=np.int64), np.array([1, 2, 3])]  # too wide for one composite key
    assert (stable_sort_indices(wide) == np.lexsort(wide[::-1])).all()
    ties = [np.array([0, 2**60, 5, 5, 7, 0, 1, 2], dtype=np.int64)]  # one key, too wide to append positions
    assert (stable_sort_indices(ties) == np.argsort(ties[0], kind="stable")).all()
