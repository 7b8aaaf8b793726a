"""Changelog from compaction: compare each key's value before and after, emit +I / -U / +U / -D records.

Mirrors FullChangelogMergeFunctionWrapper (changelog-producer = full-compaction: before = the record of
the max level, at full compaction) and LookupChangelogMergeFunctionWrapper (changelog-producer = lookup:
before = the merged value of levels >= 1, for keys that had level-0 records). A key present before and
after gives -U(before) +U(after) even when equal, unless `changelog-producer.row-deduplicate` is true.
Columnar: keys are matched through dense codes of the concatenated key columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.row.row_kind import VALUE_KIND, RowKind
from table_format.row.sort import first_of_runs, sortable, stable_sort_indices


def key_codes(tables: Sequence[pa.Table], keys: Sequence[str]) -> list[np.ndarray]:
    """Dense codes of the key tuples, consistent across the tables."""
    sizes = [t.num_rows for t in tables]
    total = sum(sizes)
    if total == 0:
        return [np.empty(0, np.int64) for _ in tables]
    cols = [sortable(pa.chunked_array([c for t in tables for c in t.column(k).chunks], type=tables[0].schema.field(k).type))
            for k in keys]
    perm = stable_sort_indices(cols)
    starts = first_of_runs([c[perm] for c in cols])
    codes = np.empty(total, dtype=np.int64)
    codes[perm] = np.cumsum(starts) - 1
    out, pos = [], 0
    for n in sizes:
        out.append(codes[pos : pos + n])
        pos += n
    return out


def _rows_equal(a: pa.Table, b: pa.Table, columns: Sequence[str]) -> np.ndarray:
    """Row-wise equality of two aligned tables over `columns` (null equals null)."""
    eq = np.ones(a.num_rows, dtype=bool)
    for c in columns:
        x, y = a.column(c), b.column(c)
        if pa.types.is_nested(x.type):
            same = np.array([u == v for u, v in zip(x.to_pylist(), y.to_pylist(), strict=True)], dtype=bool)
        else:
            both_null = pc.and_(pc.is_null(x), pc.is_null(y))
            same = pc.or_(pc.fill_null(pc.equal(x, y), False), both_null).to_numpy(zero_copy_only=False)
        eq &= same
    return eq


def _with_kind(t: pa.Table, kind: RowKind) -> pa.Table:
    idx = t.schema.get_field_index(VALUE_KIND)
    return t.set_column(idx, t.schema.field(idx), pa.array(np.full(t.num_rows, int(kind), np.int8)))


def changelog_of(
    before: pa.Table,
    after: pa.Table,
    *,
    keys: Sequence[str],
    value_columns: Sequence[str],
    row_deduplicate: bool = False,
    ignore_fields: Sequence[str] = (),
) -> pa.Table:
    """Changelog records turning `before` into `after` (both: one row per key, no retractions)."""
    if before.schema != after.schema:  # e.g. merged columns lose NOT NULL: one schema for both sides
        schema = pa.schema([f.with_nullable(f.nullable or before.schema.field(f.name).nullable) for f in after.schema])
        before, after = before.select(schema.names).cast(schema), after.cast(schema)
    code_b, code_a = key_codes([before, after], keys)
    in_before = np.isin(code_a, code_b)
    in_after = np.isin(code_b, code_a)
    inserts = _with_kind(after.filter(pa.array(~in_before)), RowKind.INSERT)
    deletes = _with_kind(before.filter(pa.array(~in_after)), RowKind.DELETE)
    # updates: align before and after rows of common keys by code
    a_idx = np.flatnonzero(in_before)
    b_idx = np.flatnonzero(in_after)
    a_idx = a_idx[np.argsort(code_a[a_idx], kind="stable")]
    b_idx = b_idx[np.argsort(code_b[b_idx], kind="stable")]
    old = before.take(pa.array(b_idx))
    new = after.take(pa.array(a_idx))
    if row_deduplicate and old.num_rows:
        compared = [c for c in value_columns if c not in ignore_fields]
        changed = ~_rows_equal(old, new, compared)
        old, new = old.filter(pa.array(changed)), new.filter(pa.array(changed))
        a_idx = a_idx[changed]
    n = old.num_rows
    old = _with_kind(old, RowKind.UPDATE_BEFORE)
    new = _with_kind(new, RowKind.UPDATE_AFTER)
    # interleave -U/+U per key, then order everything by key
    pairs = pa.concat_tables([old, new]).take(pa.array(np.arange(2 * n).reshape(2, n).T.ravel()))
    out = pa.concat_tables([inserts, deletes, pairs])
    if out.num_rows:
        codes = key_codes([out], keys)[0]
        order = np.argsort(codes, kind="stable")
        out = out.take(pa.array(order))
    return out
