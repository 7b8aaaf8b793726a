"""merge_kv: merge the records of equal keys with the table's merge engine, columnar and vectorized.

Mirrors Paimon 0.9's merge of a key's records in sequence order (SortMergeReader / the write buffer's
MergeIterator) through ReducerMergeFunctionWrapper and the engine's MergeFunction:

* a key with a single record is passed through untouched (its row kind too);
* deduplicate (DeduplicateMergeFunction): the latest record, with its kind; `ignore-delete` skips -U/-D;
* first-row (FirstRowMergeFunction): the first record; -U/-D fail unless `ignore-delete`;
* partial-update (PartialUpdateMergeFunction): per column the latest non-null value, or per sequence group
  (partial_update.py); result kind +I;
* aggregation (AggregateMergeFunction): one FieldAggregator per column (aggregate.py); result kind +I.

Sequence order is (sequence.field values, nulls first; then _SEQUENCE_NUMBER).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.merge.aggregate import aggregate
from table_format.merge.kernels import (
    MergeColumn,
    Pick,
    Segments,
    combined,
    is_null,
    primitive_values,
    sequence_rank,
)
from table_format.merge.partial_update import partial_update_groups
from table_format.merge.spec import MergeSpec, merge_spec
from table_format.options import CoreOptions, MergeEngine
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND, RowKind
from table_format.row.sort import first_of_runs, last_of_runs, sortable, stable_sort_indices
from table_format.schema import TableSchema

_RETRACT = (int(RowKind.UPDATE_BEFORE), int(RowKind.DELETE))


def merge_kv(data: pa.Table, *, schema: TableSchema, options: CoreOptions, drop_retractions: bool,
             seq_ordered: bool = False, table: str = "", spec: MergeSpec | None = None,
             columns: Sequence[str] | None = None) -> pa.Table:
    """One row per key, in key order, merged with the table's merge engine (see the module doc).

    `data` holds the trimmed primary-key columns, any value columns (at least those the engine needs, see
    MergeSpec.required_columns), `_SEQUENCE_NUMBER` (int64) and `_VALUE_KIND` (int8). With
    `drop_retractions` keys whose merged record is -U/-D are removed (reads, full compactions); without, the
    result keeps what later merges need, as Java's write buffer and non-final compactions do.
    `seq_ordered` promises the rows are already in sequence order, so only a stable sort by key is needed (and
    `_SEQUENCE_NUMBER` may then be absent when the engine is deduplicate: the input order is the sequence order).
    `columns` asks for those columns only (at least; a read's projection): fewer columns to gather.
    """
    if spec is None:
        spec = merge_spec(schema, options.raw, table=table)
    where = f"table {table or spec.table!r}: " if (table or spec.table) else ""
    latest_wins = seq_ordered and spec.latest_wins
    required = (*spec.key_names, *spec.sequence_fields, *(() if latest_wins else (SEQUENCE_NUMBER,)), VALUE_KIND)
    missing = [c for c in required if c not in data.column_names]
    if missing:
        raise SchemaError(f"{where}merge input lacks the columns {missing}")
    n = data.num_rows
    if n == 0:
        return data if columns is None else data.select(list(columns))
    if latest_wins:
        return _latest_wins(data, spec, drop_retractions, columns)
    if any(col.num_chunks > 1 for col in data.columns):
        data = data.combine_chunks()  # once, rather than per use of a column
    # ---- merge order: a permutation of the input rows (the input itself is never reordered) ------------------
    keys = [sortable(data.column(k)) for k in spec.key_names]
    perm = stable_sort_indices(keys)  # by key; runs of sorted files make this cheap
    identity = bool(np.array_equal(perm, np.arange(n)))
    first = first_of_runs(keys if identity else [k[perm] for k in keys])
    starts = np.flatnonzero(first).astype(np.int64)
    lens = np.diff(np.append(starts, n)).astype(np.int64)
    if not seq_ordered and len(starts) < n:
        # sequence order inside the runs of 2+ records only: (sequence.field nulls first, _SEQUENCE_NUMBER)
        perm = _order_runs(data, perm, starts, lens, spec)
        identity = identity and bool(np.array_equal(perm, np.arange(n)))
    kinds = combined(data.column(VALUE_KIND)).to_numpy(zero_copy_only=False).astype(np.int8)
    if not identity:
        kinds = kinds[perm]
    retract = (kinds == _RETRACT[0]) | (kinds == _RETRACT[1])
    if len(starts) == n:  # no key repeats: nothing to merge
        rows = perm if not drop_retractions else perm[~retract]
        return data if len(rows) == n and identity else data.take(pa.array(rows))
    seg = Segments(starts, lens)
    engine = spec.engine
    if engine == MergeEngine.DEDUPLICATE:
        if spec.ignore_delete:
            pick = np.where(lens == 1, starts, seg.last(~retract))  # a lone record passes through
        else:
            pick = seg.ends
        return _pick(data, perm, pick, retract, drop_retractions)
    if engine == MergeEngine.FIRST_ROW:
        multi = np.repeat(lens > 1, lens)
        if not spec.ignore_delete and (retract & multi).any():
            raise UnsupportedFeatureError(
                f"{where}merge-engine 'first-row' cannot accept -U/-D records of a key it already holds; set "
                "'first-row.ignore-delete' (or 'ignore-delete') = 'true' to ignore them"
            )
        pick = np.where(lens == 1, starts, seg.first(~retract))
        return _pick(data, perm, pick, retract, drop_retractions)
    return _merge_columns(data, perm, seg, kinds, retract, spec, drop_retractions, where)


def _latest_wins(data: pa.Table, spec: MergeSpec, drop_retractions: bool, columns: Sequence[str] | None) -> pa.Table:
    """deduplicate over rows already in sequence order: the last record of each key, one gather of the output
    columns (no whole-table copy, no run lengths)."""
    keys = [sortable(data.column(k)) for k in spec.key_names]
    perm = stable_sort_indices(keys)
    rows = perm[last_of_runs([k[perm] for k in keys])]
    if drop_retractions:
        kinds = combined(data.column(VALUE_KIND)).to_numpy(zero_copy_only=False)[rows]
        retract = (kinds == _RETRACT[0]) | (kinds == _RETRACT[1])
        if retract.any():
            rows = rows[~retract]
    out = data if columns is None else data.select(list(columns))
    if len(rows) == data.num_rows and np.array_equal(rows, np.arange(len(rows))):
        return out
    return _gather(out, rows)


def _order_runs(data: pa.Table, perm: np.ndarray, starts: np.ndarray, lens: np.ndarray,
                spec: MergeSpec) -> np.ndarray:
    """Put the records inside each run of 2+ records in sequence order: (sequence.field, nulls first), then
    _SEQUENCE_NUMBER. Runs already in order stay; two-record runs swap; longer runs are sorted."""
    multi = np.repeat(lens > 1, lens)
    pos = np.flatnonzero(multi)
    rows = perm[pos]
    sort_keys = [sequence_rank(combined(data.column(c)).take(pa.array(rows))) for c in spec.sequence_fields]
    sort_keys.append(combined(data.column(SEQUENCE_NUMBER)).to_numpy(zero_copy_only=False)[rows])
    mlens = lens[lens > 1]
    mstarts = np.concatenate([[0], np.cumsum(mlens)[:-1]]).astype(np.int64)
    # row i > row i+1 inside a run?
    greater = np.zeros(len(rows) - 1, dtype=bool)
    decided = np.zeros(len(rows) - 1, dtype=bool)
    for k in sort_keys:
        gt = k[:-1] > k[1:]
        lt = k[:-1] < k[1:]
        greater |= gt & ~decided
        decided |= gt | lt
    same_run = np.ones(len(rows) - 1, dtype=bool)
    same_run[mstarts[1:] - 1] = False
    inverted = greater & same_run
    if not inverted.any():
        return perm
    run_of = np.repeat(np.arange(len(mlens), dtype=np.int64), mlens)
    bad = np.zeros(len(mlens), dtype=bool)
    bad[run_of[:-1][inverted]] = True
    out = rows.copy()
    two = bad & (mlens == 2)  # the common case of an upsert: swap the pair
    first = mstarts[two]
    out[first], out[first + 1] = rows[first + 1], rows[first]
    long_runs = bad & (mlens > 2)
    if long_runs.any():
        sel = np.flatnonzero(long_runs[run_of])
        order = np.lexsort([k[sel] for k in reversed(sort_keys)] + [run_of[sel]])  # last key first
        out[sel] = rows[sel][order]
    perm = perm.copy()
    perm[pos] = out
    return perm


def _pick(data: pa.Table, perm: np.ndarray, pick: np.ndarray, retract: np.ndarray, drop_retractions: bool) -> pa.Table:
    """One whole input row per run (merge position `pick`, -1 for none)."""
    pick = pick[pick >= 0]
    if drop_retractions:
        pick = pick[~retract[pick]]
    return _gather(data, perm[pick])


def _gather(data: pa.Table, rows: np.ndarray) -> pa.Table:
    """The rows at `rows` (positions of `data`, valid by construction: Arrow's bounds check skipped)."""
    return pc.take(data, pa.array(rows), boundscheck=False)


def _merge_columns(data: pa.Table, perm: np.ndarray, seg: Segments, kinds: np.ndarray, retract: np.ndarray,
                   spec: MergeSpec, drop_retractions: bool, where: str) -> pa.Table:
    """partial-update and aggregation: lone records pass through, runs of 2+ records merge column by column.

    Every output column is one `take` of the input column (plus the computed values of merged runs)."""
    single = seg.lens == 1
    multi_pos = np.flatnonzero(np.repeat(~single, seg.lens))  # merge positions of the runs of 2+ records
    msel = perm[multi_pos]  # input row of each merge position of the merged runs
    mseg = Segments(*_compact(seg.lens[~single]))
    mretract = retract[multi_pos]
    mkinds = kinds[multi_pos]
    value_names = [c for c in data.column_names if c not in (SEQUENCE_NUMBER, VALUE_KIND)]
    seqs_in = combined(data.column(SEQUENCE_NUMBER)).to_numpy(zero_copy_only=False)
    mseqs = seqs_in[msel]
    results: dict[str, pa.Array | Pick] = {}
    keep = np.ones(mseg.runs, dtype=bool)
    if spec.engine == MergeEngine.AGGREGATION:
        for c in value_names:
            agg = spec.aggs.get(c)
            if agg is None:
                raise SchemaError(f"{where}column {c!r} is not a column of the table")
            results[c] = aggregate(agg, MergeColumn(combined(data.column(c)), msel), mseg, mretract, table=spec.table)
        out_seq = mseqs[mseg.ends]  # AggregateMergeFunction: the latest record's sequence number
    elif spec.groups:
        grouped, out_seq, keep = partial_update_groups(data, msel, mseqs, value_names, mseg, mretract, spec, where)
        results.update(grouped)
    else:
        picks, out_seq, keep = _partial_update(data, msel, mseqs, value_names, mseg, mkinds, mretract, spec, where)
        results.update(picks)
    if spec.engine == MergeEngine.PARTIAL_UPDATE:
        # the key of a run is its key even when only retractions were merged (Java 0.9 leaves it null in the value
        # row then, and writes a corrupt file)
        key_pick = Pick(mseg.ends)
        for c in spec.primary_keys:
            if c in results:
                results[c] = key_pick
    # ---- which runs come out, and from where ----------------------------------------------------------------
    merged_kept = keep  # merged runs that come out, in merged-run order
    if keep.all() and not (drop_retractions and retract.any()):
        out_starts = seg.starts
        out_single = single  # per output row: a lone record (else a merged run)
    else:
        run_keep = np.ones(seg.runs, dtype=bool)
        run_keep[~single] = keep
        if drop_retractions:  # merged runs are +I; lone records keep their kind
            run_keep[single] &= ~retract[seg.starts[single]]
        out_starts = seg.starts[run_keep]
        out_single = single[run_keep]
    base = perm[out_starts]  # input row of each lone record (ignored for merged runs)
    merged_pos = np.flatnonzero(~out_single)
    # one index buffer: `base` at the lone records; each distinct Pick writes its merged positions, then takes
    idx = base.copy()
    mask = np.zeros(len(idx), dtype=bool)
    final: dict[str, pa.Array] = {}
    by_pick: dict[int, list[str]] = {}
    for c in value_names:
        res = results[c]
        if isinstance(res, Pick):
            by_pick.setdefault(id(res.idx), []).append(c)
    for names in by_pick.values():
        pick = results[names[0]]
        assert isinstance(pick, Pick)
        take_idx = _take_indices(pick.idx, merged_kept, idx, mask, merged_pos, msel)
        for c in names:
            final[c] = combined(data.column(c)).take(take_idx)
    for c in value_names:
        res = results[c]
        if not isinstance(res, Pick):
            col = combined(data.column(c))
            values = res.filter(pa.array(merged_kept)) if not merged_kept.all() else res
            final[c] = _interleave(col, base, out_single, merged_pos, values.cast(col.type))
    columns = [final[c] for c in value_names]
    seq_out = seqs_in[base]
    seq_out[merged_pos] = out_seq[merged_kept]
    kind_out = kinds[out_starts]
    kind_out[merged_pos] = int(RowKind.INSERT)
    arrays = [*columns, pa.array(seq_out, pa.int64()), pa.array(kind_out, pa.int8())]
    return pa.Table.from_arrays(arrays, names=[*value_names, SEQUENCE_NUMBER, VALUE_KIND]).select(data.column_names)


def _take_indices(pick: np.ndarray, merged_kept: np.ndarray, idx: np.ndarray, mask: np.ndarray,
                  merged_pos: np.ndarray, msel: np.ndarray) -> pa.Array:
    """Input rows of one output column: lone records keep `idx` (the buffer, reused), merged runs get the picked
    row, or null."""
    sel = pick if merged_kept.all() else pick[merged_kept]
    neg = sel < 0
    if not neg.any():
        idx[merged_pos] = msel[sel]
        return pa.array(idx)
    idx[merged_pos] = np.where(neg, 0, msel[np.maximum(sel, 0)])
    mask[merged_pos] = neg
    out = pa.array(idx, mask=mask)
    mask[merged_pos] = False
    return out


def _interleave(col: pa.Array, base: np.ndarray, out_single: np.ndarray, merged_pos: np.ndarray,
                values: pa.Array) -> pa.Array:
    """Output column: input rows `base` where `out_single`, else the merged `values` (at `merged_pos`) in order."""
    if not len(merged_pos):
        return col.take(pa.array(base))
    if len(merged_pos) == len(base):
        return values
    t = col.type
    raw = primitive_values(col)
    merged = primitive_values(values)
    boolean = pa.types.is_boolean(t) and pa.types.is_boolean(values.type)
    if boolean:  # bit-packed: through numpy bools
        raw = col.fill_null(False).to_numpy(zero_copy_only=False)
        merged = values.fill_null(False).to_numpy(zero_copy_only=False)
    if raw is not None and merged is not None and raw.dtype == merged.dtype:  # numpy, no Arrow kernels
        out = raw[base]
        out[merged_pos] = merged
        validity = None
        if col.null_count or values.null_count:
            nulls = is_null(col)[base] if col.null_count else np.zeros(len(base), dtype=bool)
            nulls[merged_pos] = is_null(values)
            validity = pa.array(~nulls).buffers()[1]
        data = pa.array(out).buffers()[1] if boolean else pa.py_buffer(out)
        return pa.Array.from_buffers(t, len(out), [validity, data])
    try:
        return pc.replace_with_mask(col.take(pa.array(base)), pa.array(~out_single), values)
    except pa.ArrowNotImplementedError:  # nested types
        singles = base[out_single]
        pos = np.empty(len(base), dtype=np.int64)
        pos[out_single] = np.arange(len(singles))
        pos[merged_pos] = len(singles) + np.arange(len(values))
        return pa.concat_arrays([col.take(pa.array(singles)), values]).take(pa.array(pos))


def _compact(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64) if len(lens) else np.zeros(0, np.int64)
    return starts, lens.astype(np.int64)


def _partial_update(data: pa.Table, msel: np.ndarray, mseqs: np.ndarray, value_names: list[str], seg: Segments,
                    kinds: np.ndarray, retract: np.ndarray, spec: MergeSpec,
                    where: str) -> tuple[dict[str, Pick], np.ndarray, np.ndarray]:
    """PartialUpdateMergeFunction without sequence groups: the latest non-null value of every column."""
    part = ~retract
    keep = np.ones(seg.runs, dtype=bool)
    if retract.any() and not spec.ignore_delete:
        if not spec.remove_record_on_delete:
            raise UnsupportedFeatureError(
                f"{where}merge-engine 'partial-update' cannot accept -U/-D records by default; set "
                "'partial-update.ignore-delete' (or 'ignore-delete') = 'true' to ignore them, "
                "'partial-update.remove-record-on-delete' = 'true' to remove the row on -D, or sequence groups "
                "('fields.<seq>.sequence-group') to retract columns"
            )
        # remove-record-on-delete: -D drops what came before it (a later record starts a new row); -U is ignored
        last_delete = seg.last(kinds == int(RowKind.DELETE))
        after = np.arange(len(kinds)) > last_delete[seg.run_of]
        part = part & after
        keep = (last_delete < 0) | seg.any(part)
    last_insert = seg.last(~retract)
    # latestSequenceNumber: the last non-retract record (Java keeps a stale value when there is none)
    out_seq = np.where(last_insert >= 0, mseqs[np.maximum(last_insert, 0)], mseqs[seg.ends])
    keep &= last_insert >= 0  # only retractions (all ignored): nothing to emit
    picks = {}
    latest = Pick(seg.ends) if not retract.any() else None  # shared by every column without nulls
    for c in value_names:
        mc = MergeColumn(combined(data.column(c)), msel)
        if latest is not None and not mc.nulls.any():
            picks[c] = latest
        else:
            picks[c] = Pick(seg.last(part & ~mc.nulls))
    return picks, out_seq, keep
