"""Strict input conversion: which Arrow input types may be stored as a table column's Arrow type.

A conversion is accepted only when no value can change its meaning, decided from the two types alone (one
check per column, never per row): integer and float widening that is exact, decimal widening, finer-or-equal
time units, string/binary encodings, dictionary-encoded input, nested types whose parts follow the same rules
and the null type. Refused: parsing strings, float -> integer, any narrowing, decimal or integer -> float where
a value could be rounded, time zone changes and time unit coarsening. docs/strict-writes.md has the table.
"""

from __future__ import annotations

import pyarrow as pa

# signed bits an integer type needs (an unsigned n-bit value needs n + 1 signed bits)
_INT_BITS = {
    pa.int8(): 8, pa.uint8(): 9, pa.int16(): 16, pa.uint16(): 17,
    pa.int32(): 32, pa.uint32(): 33, pa.int64(): 64, pa.uint64(): 65,
}
# decimal digits of the largest value of an integer type with that many signed bits
_INT_DIGITS = {8: 3, 9: 3, 16: 5, 17: 5, 32: 10, 33: 10, 64: 19, 65: 20}
# significand bits of the float types: integers up to 2**bits are exact
_FLOAT_BITS = {pa.float16(): 11, pa.float32(): 24, pa.float64(): 53}
# the largest decimal precision (scale 0) a float type holds exactly: 10**p - 1 < 2**bits
_FLOAT_DIGITS = {pa.float16(): 3, pa.float32(): 7, pa.float64(): 15}
_UNIT_RANK = {"s": 0, "ms": 1, "us": 2, "ns": 3}
_STRINGS = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
_BINARIES = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view, pa.types.is_fixed_size_binary)
_LISTS = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)


def _is(t: pa.DataType, preds: tuple) -> bool:
    return any(p(t) for p in preds)


def conversion_refusal(src: pa.DataType, dst: pa.DataType) -> str | None:
    """Why input of Arrow type `src` cannot be stored as `dst` without risk to a value; None when it can.

    Nested types answer for their parts, naming the part ("field 'x': ...", "list element: ...")."""
    if src == dst or pa.types.is_null(src):
        return None
    if pa.types.is_dictionary(src):
        return conversion_refusal(src.value_type, dst)
    if _is(src, _STRINGS) and not _is(dst, _STRINGS):
        return f"strings are never parsed into {dst} values"
    if pa.types.is_struct(dst):
        return _struct_refusal(src, dst)
    if pa.types.is_map(dst):
        if not pa.types.is_map(src):
            return _mismatch(src, dst)
        return _part("map key", src.key_type, dst.key_type) or _part("map value", src.item_type, dst.item_type)
    if _is(dst, _LISTS):
        if not _is(src, _LISTS):
            return _mismatch(src, dst)
        return _part("list element", src.value_type, dst.value_type)
    return _leaf_refusal(src, dst)


def _part(label: str, src: pa.DataType, dst: pa.DataType) -> str | None:
    reason = conversion_refusal(src, dst)
    return f"{label}: {reason}" if reason else None


def _struct_refusal(src: pa.DataType, dst: pa.DataType) -> str | None:
    if not pa.types.is_struct(src):
        return _mismatch(src, dst)
    src_names = [src.field(i).name for i in range(src.num_fields)]
    dst_names = [dst.field(i).name for i in range(dst.num_fields)]
    if src_names != dst_names:
        return f"struct fields {src_names} are not the table's {dst_names} (same names, same order)"
    for i, name in enumerate(dst_names):
        reason = _part(f"field {name!r}", src.field(i).type, dst.field(i).type)
        if reason:
            return reason
    return None


def _leaf_refusal(src: pa.DataType, dst: pa.DataType) -> str | None:
    if _is(src, _STRINGS):
        return None  # into a string type (other targets were refused above)
    if _is(dst, _STRINGS):
        return f"{src} values are not turned into strings"
    if _is(dst, _BINARIES):
        return None if _is(src, _BINARIES) else _mismatch(src, dst)
    if pa.types.is_integer(dst):
        return _to_integer(src, dst)
    if pa.types.is_floating(dst):
        return _to_float(src, dst)
    if pa.types.is_decimal(dst):
        return _to_decimal(src, dst)
    if pa.types.is_date32(dst):
        return None if pa.types.is_date(src) else _mismatch(src, dst)
    if pa.types.is_time(dst):
        return _coarser_unit(src, dst) if pa.types.is_time(src) else _mismatch(src, dst)
    if pa.types.is_timestamp(dst):
        return _to_timestamp(src, dst)
    return _mismatch(src, dst)


def _mismatch(src: pa.DataType, dst: pa.DataType) -> str:
    return f"{src} is not a kind of {dst}"


def _to_integer(src: pa.DataType, dst: pa.DataType) -> str | None:
    if pa.types.is_floating(src) or pa.types.is_decimal(src):
        return f"{src} values are never converted to integers (a fraction would be lost)"
    if not pa.types.is_integer(src):
        return _mismatch(src, dst)
    if _INT_BITS[src] > _INT_BITS[dst] or (pa.types.is_unsigned_integer(dst) and pa.types.is_signed_integer(src)):
        return f"the table's {dst} is narrower than {src}: some values would not fit"
    return None


def _to_float(src: pa.DataType, dst: pa.DataType) -> str | None:
    if pa.types.is_floating(src):
        if _FLOAT_BITS[src] > _FLOAT_BITS[dst]:
            return f"the table's {dst} is narrower than {src}: values would be rounded"
        return None
    if pa.types.is_integer(src):
        if _INT_BITS[src] - 1 > _FLOAT_BITS[dst]:
            return f"{src} values beyond 2**{_FLOAT_BITS[dst]} would be rounded in {dst}"
        return None
    if pa.types.is_decimal(src):
        if src.scale > 0 or src.precision > _FLOAT_DIGITS[dst]:
            return f"{src} values would be rounded in {dst} (binary floats hold few decimals exactly)"
        return None
    return _mismatch(src, dst)


def _to_decimal(src: pa.DataType, dst: pa.DataType) -> str | None:
    if pa.types.is_decimal(src):
        if src.scale > dst.scale:
            return f"{src} has more fraction digits than the table's {dst}: values would be rounded"
        if src.precision - src.scale > dst.precision - dst.scale:
            return f"{src} has more integer digits than the table's {dst}: values would not fit"
        return None
    if pa.types.is_integer(src):
        digits = _INT_DIGITS[_INT_BITS[src]]
        if digits > dst.precision - dst.scale:
            return f"{src} values need {digits} integer digits; the table's {dst} has {dst.precision - dst.scale}"
        return None
    if pa.types.is_floating(src):
        return f"{src} values are not exact decimals"
    return _mismatch(src, dst)


def _coarser_unit(src: pa.DataType, dst: pa.DataType) -> str | None:
    if _UNIT_RANK[src.unit] > _UNIT_RANK[dst.unit]:
        return f"{src} would be truncated to the table's unit {dst.unit!r}"
    return None


def _to_timestamp(src: pa.DataType, dst: pa.DataType) -> str | None:
    if not pa.types.is_timestamp(src):
        return _mismatch(src, dst)
    if dst.tz is None and src.tz is not None:
        return (f"{src} has a time zone but the column is a TIMESTAMP without one; drop the zone yourself "
                "(e.g. convert to local wall-clock time) or store it in a TIMESTAMP WITH LOCAL TIME ZONE column")
    if dst.tz is not None and src.tz is None:
        return (f"{src} has no time zone but the column is a TIMESTAMP WITH LOCAL TIME ZONE (an instant); attach "
                "the zone the values are in first (pyarrow.compute.assume_timezone, polars dt.replace_time_zone)")
    return _coarser_unit(src, dst)  # any zone into LTZ: the same instants, only the display zone differs
