"""Field aggregators of the aggregation merge engine, vectorized over key runs.

Each function reproduces the sequence of `agg` / `retract` calls of its Paimon 0.9 FieldAggregator
(FieldSumAgg, FieldMaxAgg, ...) over the records of a run in merge order: value-picking functions
(last/first values, max, min) become one index per run, `sum` of integers a `reduceat`, and functions
whose result depends on the order of floating-point or decimal steps run as a position-major loop
(kernels.Positions) so that every intermediate result is rounded exactly as Java rounds it.
The nested functions (collect, merge_map, nested_update) work on Python values per run (nested.py).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.merge.kernels import MergeColumn, Pick, Segments, is_null
from table_format.merge.nested import nested_aggregate
from table_format.merge.spec import FieldAgg

_INT_TYPES = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64}


def check_retract(agg: FieldAgg, retract: np.ndarray, table: str) -> None:
    if not agg.supports_retract and not agg.ignore_retract and retract.any():
        where = f"table {table!r}: " if table else ""
        raise UnsupportedFeatureError(
            f"{where}column {agg.column!r}: aggregate function {agg.function!r} does not support retraction "
            f"(-U/-D records); set 'fields.{agg.column}.ignore-retract' = 'true' to ignore them"
        )


def aggregate(agg: FieldAgg, col: MergeColumn, seg: Segments, retract: np.ndarray, *,
              table: str = "") -> pa.Array | Pick:
    """One value per run: `agg` over the rows of each run (merge order); `retract` marks -U/-D rows.

    Value-picking functions return a Pick (the merge position of each run's value), the others the values.
    """
    if agg.error is not None:
        raise SchemaError(agg.error)
    check_retract(agg, retract, table)
    part = ~retract if agg.ignore_retract else np.ones(len(col), dtype=bool)
    r = retract & part
    fn = agg.function
    nulls = col.nulls
    if fn == "primary_key" or (fn in ("last_value", "last_non_null_value") and not retract.any()
                               and not nulls.any()):
        return Pick(seg.ends)  # FieldPrimaryKeyAgg (the key of the latest record); or simply the latest value
    if fn == "last_value":  # agg -> input, retract -> null
        idx = seg.last(part)
        return Pick(np.where((idx >= 0) & ~r[np.maximum(idx, 0)], idx, -1))
    if fn == "last_non_null_value":  # agg -> input if not null; retract of a non-null value -> null
        idx = seg.last(part & ~nulls)
        return Pick(np.where((idx >= 0) & ~r[np.maximum(idx, 0)], idx, -1))
    if fn == "first_value":  # the first record's value, even null
        return Pick(seg.first(part))
    if fn == "first_non_null_value":
        return Pick(seg.first(part & ~nulls))
    if fn in ("max", "min"):
        return _extreme(col, seg, part & ~nulls, largest=fn == "max")
    if fn == "sum":
        return _sum(col, seg, part & ~nulls, r, table=table, column=agg.column)
    if fn == "product":
        return _product(col, seg, part & ~nulls, r, table=table, column=agg.column)
    if fn == "listagg":
        return _listagg(col, seg, part & ~nulls, agg.delimiter)
    if fn in ("bool_and", "bool_or"):
        valid = part & ~nulls
        x = np.where(valid, col.numpy(fn == "bool_and"), fn == "bool_and")
        red = (np.logical_and if fn == "bool_and" else np.logical_or).reduceat(x, seg.starts)
        return pa.array(red, mask=~seg.any(valid), type=col.type)
    return nested_aggregate(agg, col.array, seg, part, r, table=table)


# ---- max / min -------------------------------------------------------------------------------------
def _extreme(col: MergeColumn, seg: Segments, valid: np.ndarray, *, largest: bool) -> Pick:
    key = col.order_key()
    if seg.pairs:  # compare the two records of every run
        a, b = seg.starts, seg.ends
        va, vb = valid[a], valid[b]
        later_wins = key[b] > key[a] if largest else key[b] <= key[a]  # ties: max keeps the first, min the last
        return Pick(np.where(vb & (~va | later_wins), b, np.where(va, a, -1)))
    if largest:  # FieldMaxAgg keeps the accumulator on ties: the first maximum wins
        k = np.where(valid, key, np.iinfo(np.int64).min)
        best = np.maximum.reduceat(k, seg.starts)
        hit = valid & (key == best[seg.run_of])
        return Pick(seg.first(hit))
    # FieldMinAgg takes the input on ties: the last minimum wins
    k = np.where(valid, key, np.iinfo(np.int64).max)
    best = np.minimum.reduceat(k, seg.starts)
    hit = valid & (key == best[seg.run_of])
    return Pick(seg.last(hit))


# ---- sequential loops ------------------------------------------------------------------------------
Step = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def sequential(seg: Segments, x: np.ndarray, ops: np.ndarray, step: Callable[..., tuple[np.ndarray, np.ndarray]],
               *, init: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Fold each run left to right: (acc, has) = step(acc, has, x_p, op_p) for the rows with op_p != 0.

    `x` and `ops` are per row (merge order); the result is (values, has_value) per run, in run order.
    """
    pos = seg.positions
    k0 = seg.runs
    acc = (x[seg.starts] if init is None else init)[pos.order].copy()
    has = np.zeros(k0, dtype=bool)
    for p in range(pos.maxlen):
        rows = pos.rows(p)
        k = len(rows)
        op = ops[rows]
        live = op != 0
        if not live.any():
            continue
        new_acc, new_has = step(acc[:k], has[:k], x[rows], op)
        acc[:k] = np.where(live, new_acc, acc[:k])
        has[:k] = np.where(live, new_has, has[:k])
    return pos.unpermute(acc), pos.unpermute(has)


LONG_RUN = 64


def fold(seg: Segments, v: np.ndarray, op: np.ufunc) -> np.ndarray:
    """Per run, ((v0 op v1) op v2) op ... strictly left to right (floating point: every step rounded as Java
    rounds it). Short runs fold position by position across all runs at once; long runs (a hot key) with
    `op.accumulate`, which is sequential."""
    out = np.empty(seg.runs, dtype=v.dtype)
    long_runs = seg.lens > LONG_RUN
    for r in np.flatnonzero(long_runs).tolist():
        start = int(seg.starts[r])
        out[r] = op.accumulate(v[start: start + int(seg.lens[r])])[-1]
    short = ~long_runs
    if short.any():
        starts = seg.starts[short]
        lens = seg.lens[short]
        acc = v[starts].copy()
        for p in range(1, int(lens.max())):
            active = np.flatnonzero(lens > p)
            acc[active] = op(acc[active], v[starts[active] + p])
        out[short] = acc
    return out


def _numeric(col: MergeColumn) -> tuple[np.ndarray, str]:
    t = col.type
    if pa.types.is_decimal(t):
        return np.asarray(col.array.to_pylist(), dtype=object), "decimal"
    return col.numpy(0), "float" if pa.types.is_floating(t) else "int"


def _from_numeric(values: np.ndarray, has: np.ndarray, t: pa.DataType) -> pa.Array:
    if pa.types.is_decimal(t):
        return _decimal_array(values, has, t)
    return pa.array(values, mask=~has, type=t)


def _decimal_array(values: np.ndarray, has: np.ndarray, t: pa.DataType) -> pa.Array:
    """Decimals from Python Decimal / int-unscaled objects, as Java keeps them (compact ones unchecked)."""
    out = []
    for v, h in zip(values.tolist(), has.tolist(), strict=True):
        out.append(v if h else None)
    try:
        return pa.array(out, type=t)
    except (pa.ArrowInvalid, InvalidOperation):
        # a compact decimal (precision <= 18) may exceed its precision in Java (Decimal.fromUnscaledLong does
        # not check); keep the unscaled long as Java does
        scale = t.scale
        unscaled = np.array([int(v.scaleb(scale)) if v is not None else 0 for v in out], dtype=np.int64)
        words = np.stack([unscaled, unscaled >> 63], axis=1).astype(np.int64)
        validity = pa.array([v is not None for v in out]).buffers()[1]
        return pa.Array.from_buffers(t, len(out), [validity, pa.py_buffer(words.tobytes())])


def _java_decimal(value: Decimal, t: pa.DataType) -> Decimal | None:
    """Decimal.fromBigDecimal: round HALF_UP to the scale, null when the precision overflows."""
    with localcontext() as ctx:
        ctx.prec = 200
        q = value.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
        unscaled = abs(int(q.scaleb(t.scale)))  # BigDecimal.precision(): digits of the unscaled value
        digits = len(str(unscaled)) if unscaled else 1
        return q if digits <= t.precision else None


def _sum(col: MergeColumn, seg: Segments, valid: np.ndarray, r: np.ndarray, *, table: str,
         column: str) -> pa.Array:
    t = col.type
    if pa.types.is_integer(t):
        x = col.numpy(0).astype(np.int64)
        if r.any():
            x = np.where(r, -x, x)
        if not valid.all():
            x = np.where(valid, x, 0)
            s = np.add.reduceat(x, seg.starts).astype(_INT_TYPES[t])  # wraps like Java's int arithmetic
            return pa.array(s, mask=~seg.any(valid), type=t)
        return pa.array(np.add.reduceat(x, seg.starts).astype(_INT_TYPES[t]), type=t)
    if pa.types.is_decimal(t) and t.precision <= 18:
        unscaled = _decimal_unscaled(col.orig)[col.sel]
        x = np.where(valid, np.where(r, -unscaled, unscaled), 0)
        s = np.add.reduceat(x, seg.starts)
        return _decimal_from_unscaled(s, seg.any(valid), t)
    if pa.types.is_decimal(t):
        return _sum_wide_decimal(col, seg, valid, r)
    x = col.numpy(0)  # floating point: acc + x (or acc - x) in order; -0.0 is the exact identity of IEEE addition
    signed = np.where(r, -x, x)
    return pa.array(fold(seg, np.where(valid, signed, x.dtype.type(-0.0)), np.add), mask=~seg.any(valid), type=t)


def _sum_wide_decimal(col: MergeColumn, seg: Segments, valid: np.ndarray, r: np.ndarray) -> pa.Array:
    """DECIMAL(p > 18) sums on unscaled Python ints (object arrays, C loops): values of one scale add exactly, and
    a step whose result needs more than p digits gives null, after which the next value starts over
    (DecimalUtils.add + Decimal.fromBigDecimal in FieldSumAgg)."""
    t = col.type
    x = _decimal128_unscaled(col.orig)[col.sel]
    signed = np.where(r, -x, x)
    limit = 10**t.precision
    zero = np.zeros(len(x), dtype=object)
    abs_total = np.add.reduceat(np.where(valid, np.abs(x), zero), seg.starts)
    if (abs_total < limit).all():  # no step can overflow: the order of the additions does not matter
        return _decimal_from_ints(np.add.reduceat(np.where(valid, signed, zero), seg.starts), seg.any(valid), t)
    ops = valid.astype(np.int8)

    def step(acc: np.ndarray, has: np.ndarray, v: np.ndarray, op: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        res = np.where(has, acc + v, v)
        ok = ~has | (np.abs(res) < limit)
        return np.where(ok, res, 0), ok
    values, has = sequential(seg, np.where(valid, signed, zero), ops, step)
    return _decimal_from_ints(values, has, t)


def _decimal128_unscaled(col: pa.Array) -> np.ndarray:
    """Unscaled values of a decimal128 array as Python ints (object array; nulls give 0)."""
    words = np.frombuffer(col.buffers()[1], dtype=np.uint64)[2 * col.offset: 2 * (col.offset + len(col))]
    low = words[0::2].astype(object)
    high = words[1::2].view(np.int64).astype(object)
    out = high * (1 << 64) + low
    if col.null_count:
        out[is_null(col)] = 0
    return out


def _decimal_from_ints(unscaled: np.ndarray, has: np.ndarray, t: pa.DataType) -> pa.Array:
    """A decimal128 array from unscaled Python ints (null where not `has`)."""
    unscaled = np.where(has, unscaled, 0)
    low = (unscaled & ((1 << 64) - 1)).astype(np.uint64)
    high = (unscaled >> 64).astype(np.int64)
    words = np.stack([low, high.view(np.uint64)], axis=1)
    validity = pa.array(has).buffers()[1] if not has.all() else None
    return pa.Array.from_buffers(t, len(unscaled), [validity, pa.py_buffer(words.tobytes())])


def _decimal_unscaled(col: pa.Array) -> np.ndarray:
    """Unscaled int64 values of a decimal128 array whose precision is at most 18 (nulls give 0)."""
    buf = col.buffers()[1]
    words = np.frombuffer(buf, dtype=np.int64)[2 * col.offset: 2 * (col.offset + len(col))]
    low = words[0::2].copy()
    if col.null_count:
        low[is_null(col)] = 0
    return low


def _decimal_from_unscaled(unscaled: np.ndarray, has: np.ndarray, t: pa.DataType) -> pa.Array:
    unscaled = np.where(has, unscaled, 0).astype(np.int64)
    words = np.stack([unscaled, unscaled >> 63], axis=1)
    validity = pa.array(has).buffers()[1] if not has.all() else None
    return pa.Array.from_buffers(t, len(unscaled), [validity, pa.py_buffer(words.tobytes())])


def _product(col: MergeColumn, seg: Segments, valid: np.ndarray, r: np.ndarray, *, table: str,
             column: str) -> pa.Array:
    t = col.type
    if pa.types.is_integer(t) and not r.any():
        x = col.numpy(1).astype(np.int64)
        x = np.where(valid, x, 1)
        s = np.multiply.reduceat(x, seg.starts).astype(_INT_TYPES[t])
        return pa.array(s, mask=~seg.any(valid), type=t)
    where = f"table {table!r}: " if table else ""
    x, kind = _numeric(col)
    if kind == "float" and not r.any():  # acc * x in order; 1.0 is the exact identity
        return pa.array(fold(seg, np.where(valid, x, x.dtype.type(1.0)), np.multiply), mask=~seg.any(valid), type=t)
    ops = np.where(valid, np.where(r, 2, 1), 0).astype(np.int8)
    if kind in ("int", "float"):
        def step(acc: np.ndarray, has: np.ndarray, v: np.ndarray, op: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            mul = acc * v
            div_mask = has & (op == 2)
            if kind == "int":
                if (div_mask & (v == 0)).any():
                    raise UnsupportedFeatureError(
                        f"{where}column {column!r}: product retracts a 0 (division by zero, as Java fails)"
                    )
                safe = np.where(div_mask, v, 1)
                q = np.abs(acc) // np.abs(safe)  # Java integer division truncates toward zero
                div = np.where((acc < 0) ^ (safe < 0), -q, q).astype(acc.dtype)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    div = acc / np.where(div_mask, v, 1)
            res = np.where(op == 2, div, mul)
            # retract with a null accumulator takes the input (FieldProductAgg.retract)
            return np.where(has, res, v), np.ones(len(acc), dtype=bool)
        values, has = sequential(seg, x, ops, step)
        return pa.array(values.astype(x.dtype), mask=~has, type=t)

    def dstep(acc: np.ndarray, has: np.ndarray, v: np.ndarray, op: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = np.empty(len(acc), dtype=object)
        ok = np.zeros(len(acc), dtype=bool)
        for i in range(len(acc)):
            if op[i] == 0:
                out[i], ok[i] = acc[i], has[i]
                continue
            if not has[i]:
                out[i], ok[i] = v[i], True
                continue
            with localcontext() as ctx:
                ctx.prec = 200
                if op[i] == 2:
                    if v[i] == 0:
                        raise UnsupportedFeatureError(f"{where}column {column!r}: product retracts a 0")
                    raw = acc[i] / v[i]
                else:
                    raw = acc[i] * v[i]
            res = _java_decimal(raw, t)
            out[i], ok[i] = res, res is not None
        return out, ok
    values, has = sequential(seg, x, ops, dstep)
    return _from_numeric(values, has, t)


def _listagg(col: MergeColumn, seg: Segments, valid: np.ndarray, delimiter: str) -> pa.Array:
    counts = seg.count(valid)
    values = col.orig.take(pa.array(col.sel[valid]))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    lists = pa.ListArray.from_arrays(pa.array(offsets), values)
    joined = pc.binary_join(lists, delimiter)
    if (counts == 0).any():
        joined = pc.if_else(pa.array(counts > 0), joined, pa.nulls(len(counts), joined.type))
    return joined.cast(col.type)
