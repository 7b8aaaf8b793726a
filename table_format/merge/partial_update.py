"""Partial update with sequence groups: PartialUpdateMergeFunction.updateWithSequenceGroup / retractWithSequenceGroup.

The records of a run are added one by one, as in Java, but vectorized across runs (kernels.Positions):
step p applies the p-th record of every run with more than p records. Within a step the fields are visited
in table order, exactly like Java's loop over the row, so the quirks of that loop carry over (the
sequence fields of a group are all taken from the record when the first of them is visited; an older
record still feeds the group's aggregators through `aggReversed`; a retraction nulls the group's plain
columns and retracts its aggregated ones). Each column's accumulated value is a `group_field.GroupField`.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from table_format.merge.aggregate import check_retract
from table_format.merge.group_field import GroupField
from table_format.merge.kernels import MergeColumn, Pick, Segments, combined, dense_rank, lex_rank
from table_format.merge.spec import MergeSpec


def partial_update_groups(data: pa.Table, msel: np.ndarray, mseqs: np.ndarray, value_names: list[str], seg: Segments,
                          retract: np.ndarray, spec: MergeSpec,
                          where: str) -> tuple[dict[str, pa.Array | Pick], np.ndarray, np.ndarray]:
    """Merge runs of 2+ records of a partial-update table with sequence groups (input rows `msel`, merge order)."""
    if not spec.aggs:
        return _groups_without_aggregators(data, msel, mseqs, value_names, seg, retract, spec)
    names = [c for c in spec.field_names if c in value_names]
    runs = seg.runs
    fields = {c: GroupField(c, MergeColumn(combined(data.column(c)), msel), spec.aggs.get(c), runs, where) for c in names}
    active = retract if not spec.ignore_delete else np.zeros(len(retract), dtype=bool)
    # per group: its sequence fields present in the input, their ranks (nulls first) and "group is empty"
    groups: list[tuple[list[str], list[np.ndarray], np.ndarray] | None] = []
    for g in spec.groups:
        seq = [c for c in g.sequence_fields if c in fields]
        if not seq:
            groups.append(None)
            continue
        ranks = [_null_first_key(fields[c]) for c in seq]
        empty = np.logical_and.reduce([fields[c].nulls for c in seq])
        groups.append((seq, ranks, empty))
    for c, f in fields.items():  # retractions reach the aggregators of their (non-empty) sequence group only
        gi = spec.group_of.get(c)
        grp = groups[gi] if gi is not None else None
        if f.agg is not None and grp is not None and f.agg.function != "primary_key":
            check_retract(f.agg, active & ~grp[2], spec.table)
    seq_field_of = {c: i for i, g in enumerate(spec.groups) for c in g.sequence_fields}
    pos = seg.positions
    skip_retract = spec.ignore_delete
    for p in range(pos.maxlen):
        j = pos.rows(p)
        rj = retract[j]
        ins = ~rj
        ret = rj & (not skip_retract)
        updated_seq: set[str] = set()
        for c in names:
            f = fields[c]
            gi = spec.group_of.get(c)
            grp = groups[gi] if gi is not None else None
            if gi is None:  # not in a sequence group: non-null update (or its aggregator); retractions skip it
                if f.agg is not None:
                    if f.pointer:
                        f.pointer_agg(ins, j, False)
                    else:
                        f.value_step(ins, j, "agg")
                else:
                    f.set_from(ins & ~f.nulls[j], j)
                continue
            if grp is None:
                continue
            seq, ranks, empty = grp
            nonempty = ~empty[j]
            ge = _compare_ge(j, seq, ranks, fields)
            is_seq = seq_field_of.get(c) == gi
            # ---- inserts: updateWithSequenceGroup
            m_new = ins & nonempty & ge
            m_old = ins & nonempty & ~ge
            acc_before = None
            if is_seq and f.agg is not None and f.pointer:
                acc_before = f.ptr[: len(j)].copy()
            if is_seq and m_new.any():
                for s in seq:
                    fields[s].set_from(m_new, j)
            if f.agg is None:
                if not is_seq:
                    f.set_from(m_new, j)
            elif f.pointer:
                if acc_before is not None:  # the accumulator was read before the sequence fields were set
                    f.ptr[: len(j)] = np.where(m_new | m_old, acc_before, f.ptr[: len(j)])
                f.pointer_agg(m_new, j, False)
                f.pointer_agg(m_old, j, True)
            else:
                f.value_step(m_new, j, "agg")
                f.value_step(m_old, j, "rev")
            # ---- retractions: retractWithSequenceGroup
            if ret.any():
                r_new = ret & nonempty & ge
                r_old = ret & nonempty & ~ge
                if is_seq:
                    if c not in updated_seq:
                        for s in seq:
                            fields[s].set_from(r_new, j)
                        updated_seq.update(seq)
                    if f.agg is not None and f.pointer:  # an older retraction still retracts the aggregator
                        f.pointer_retract(r_old, j)
                elif f.agg is None:
                    f.set_from(r_new, np.full(len(j), -1, dtype=np.int64))
                elif f.pointer:
                    f.pointer_retract(r_new | r_old, j)
                else:
                    f.value_step(r_new | r_old, j, "retract")
    last_insert = seg.last(~retract)
    out_seq = np.where(last_insert >= 0, mseqs[np.maximum(last_insert, 0)], mseqs[seg.ends])
    # a run of retractions only: Java 0.9 emits an +I row whose key is null (a corrupt file when written); no row here
    keep = last_insert >= 0
    columns = {c: fields[c].result(pos.order) for c in names}
    return columns, out_seq, keep


_NULL_KEY = np.iinfo(np.int64).min


def _group_rank(cols: dict[str, MergeColumn], seq: list[str], nulls: list[np.ndarray],
                nonempty: np.ndarray) -> np.ndarray:
    """Per record: a number >= 0 ordering the group's sequence tuples (nulls first), -1 for an empty group."""
    if len(seq) == 1:
        key = cols[seq[0]].order_key()
        valid = key[~nulls[0]]
        if len(valid) == 0:
            return np.full(len(key), -1, dtype=np.int64)
        lo, hi = int(valid.min()), int(valid.max())
        if hi - lo < (1 << 40):  # order-preserving and small: no sort needed
            return np.where(nonempty, key - lo + 1, -1)
        rank = np.unique(np.where(nulls[0], _NULL_KEY, key), return_inverse=True)[1].reshape(-1)
    else:
        rank = lex_rank([np.where(nl, _NULL_KEY, cols[c].order_key()) for c, nl in zip(seq, nulls, strict=True)])
    return np.where(nonempty, rank.astype(np.int64), -1)


def _groups_without_aggregators(data: pa.Table, msel: np.ndarray, mseqs: np.ndarray, value_names: list[str],
                                seg: Segments, retract: np.ndarray,
                                spec: MergeSpec) -> tuple[dict[str, pa.Array | Pick], np.ndarray, np.ndarray]:
    """Sequence groups without aggregate functions, for runs of any length in one pass.

    A record updates its group when the group's sequence values are not empty and not below the row's, and
    the row's are those of the last record that updated the group; so the records that update a group are
    exactly those whose sequence tuple reaches the running maximum of the group's non-empty tuples so far
    (a segmented cumulative max). The group's columns then come from the last such record: its values for
    an insert, nulls for a retraction (its sequence fields are taken either way)."""
    ignore = spec.ignore_delete
    inserts = ~retract
    cols = {c: MergeColumn(combined(data.column(c)), msel) for c in value_names}
    picks: dict[str, pa.Array | Pick] = {}
    grouped: set[str] = set()
    for g in spec.groups:
        seq = [c for c in g.sequence_fields if c in cols]
        members = [c for c in (*g.fields, *g.sequence_fields) if c in cols and spec.group_of.get(c) is not None]
        if not seq:
            for c in members:
                if c not in seq:
                    picks[c] = Pick(np.full(seg.runs, -1, dtype=np.int64))
                    grouped.add(c)
            continue
        nulls = [cols[c].nulls for c in seq]
        nonempty = ~np.logical_and.reduce(nulls)
        if ignore:
            nonempty &= inserts
        rank = _group_rank(cols, seq, nulls, nonempty)
        span = int(rank.max(initial=0)) + 2
        if span * seg.runs >= (1 << 62):  # too wide to offset runs apart: dense ranks first
            rank = np.where(rank >= 0, np.unique(rank, return_inverse=True)[1].reshape(-1), -1)
            span = int(rank.max(initial=0)) + 2
        offset = seg.run_of * span
        running = np.maximum.accumulate(rank + offset) - offset  # runs are contiguous and offsets increase
        updates = nonempty & (rank == running)
        last = seg.last(updates)
        seq_pick = Pick(last)
        value_last = np.where((last >= 0) & inserts[np.maximum(last, 0)], last, -1)
        value_pick = Pick(value_last)
        for c in members:
            own_group = spec.groups.index(g) == spec.group_of.get(c)
            if not own_group:
                continue
            picks[c] = seq_pick if c in seq else value_pick
            grouped.add(c)
    latest = seg.last(inserts)
    for c in value_names:  # columns outside every group: the latest non-null value of the inserts
        if c not in grouped:
            picks[c] = Pick(seg.last(inserts & ~cols[c].nulls))
    out_seq = np.where(latest >= 0, mseqs[np.maximum(latest, 0)], mseqs[seg.ends])
    return picks, out_seq, latest >= 0


def _null_first_key(f: GroupField) -> np.ndarray:
    """Per merge position: an int64 ordering the column's values as Paimon compares them, nulls lowest."""
    key = f.col.order_key()
    if (key[~f.nulls] == _NULL_KEY).any():  # a value collides with the null marker: use dense ranks
        return dense_rank(f.col.array)
    return np.where(f.nulls, _NULL_KEY, key)


def _compare_ge(j: np.ndarray, seq: list[str], ranks: list[np.ndarray], fields: dict[str, GroupField]) -> np.ndarray:
    """UserDefinedSeqComparator.compare(kv, row) >= 0 over the group's sequence fields (nulls first)."""
    k = len(j)
    cmp = np.zeros(k, dtype=np.int64)
    for s, rank in zip(seq, ranks, strict=True):
        ptr = fields[s].ptr[:k]
        row_rank = np.where(ptr >= 0, rank[np.maximum(ptr, 0)], _NULL_KEY)
        kv_rank = rank[j]
        cmp = np.where(cmp != 0, cmp, (kv_rank > row_rank).astype(np.int64) - (kv_rank < row_rank))
    return cmp >= 0
