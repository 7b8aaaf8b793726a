"""A plain Python model of Paimon 0.9's merge engines, record by record, for property tests.

Written straight from the Java merge functions (ReducerMergeFunctionWrapper around Deduplicate-, FirstRow-,
PartialUpdate- and AggregateMergeFunction with their FieldAggregators), one Python object at a time, so
that the vectorized implementation in table_format.merge can be checked against it. Supports the scalar
types the property tests generate (integers, strings, booleans; maps as lists of pairs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

RETRACT = ("-U", "-D")


class ModelError(Exception):
    """The Java merge function would throw."""


@dataclass
class Rec:
    kind: str
    row: dict[str, Any]
    seq: int


@dataclass
class Config:
    engine: str
    columns: list[str]
    key: list[str]
    sequence_fields: list[str] = field(default_factory=list)
    ignore_delete: bool = False
    remove_record_on_delete: bool = False
    aggs: dict[str, str] = field(default_factory=dict)  # column -> function (aggregation / partial-update)
    ignore_retract: set[str] = field(default_factory=set)
    groups: list[tuple[list[str], list[str]]] = field(default_factory=list)  # (sequence fields, columns)
    int_bits: dict[str, int] = field(default_factory=dict)  # integer columns and their width
    delimiter: str = ","

    def sort_key(self, r: Rec) -> tuple[Any, ...]:
        seq = tuple((0, 0) if r.row.get(c) is None else (1, r.row[c]) for c in self.sequence_fields)
        return (*seq, r.seq)


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class Agg:
    """One FieldAggregator (scalar, stateful for first_*)."""

    def __init__(self, fn: str, column: str, cfg: Config) -> None:
        self.fn = fn
        self.column = column
        self.cfg = cfg
        self.initialized = False
        self.ignore_retract = column in cfg.ignore_retract

    def agg(self, acc: Any, x: Any) -> Any:
        fn = self.fn
        if fn in ("primary_key", "last_value"):
            return x
        if fn == "last_non_null_value":
            return acc if x is None else x
        if fn == "first_value":
            if not self.initialized:
                self.initialized = True
                return x
            return acc
        if fn == "first_non_null_value":
            if not self.initialized and x is not None:
                self.initialized = True
                return x
            return acc
        if fn == "collect":
            if acc is None and x is None:
                return None
            if acc is None or x is None:
                return acc if x is None else x
            return list(acc) + list(x)
        if acc is None or x is None:
            return x if acc is None else acc
        if fn == "sum":
            return _wrap(acc + x, self.cfg.int_bits[self.column])
        if fn == "product":
            return _wrap(acc * x, self.cfg.int_bits[self.column])
        if fn == "max":
            return x if acc < x else acc
        if fn == "min":
            return acc if acc < x else x
        if fn == "listagg":
            return f"{acc}{self.cfg.delimiter}{x}"
        if fn == "bool_and":
            return acc and x
        if fn == "bool_or":
            return acc or x
        if fn == "merge_map":
            out = dict(acc)
            out.update(dict(x))
            return sorted(out.items())
        raise AssertionError(fn)

    def agg_reversed(self, acc: Any, x: Any) -> Any:
        if self.fn == "collect":
            return self.agg(acc, x)
        return self.agg(x, acc)

    def retract(self, acc: Any, x: Any) -> Any:
        if self.ignore_retract:
            return acc
        fn = self.fn
        if fn == "primary_key":
            return x
        if fn == "last_value":
            return None
        if fn == "last_non_null_value":
            return None if x is not None else acc
        if fn == "sum":
            if acc is None or x is None:
                return (None if x is None else _wrap(-x, self.cfg.int_bits[self.column])) if acc is None else acc
            return _wrap(acc - x, self.cfg.int_bits[self.column])
        if fn == "collect":
            if acc is None:
                return None
            pending = list(x)
            out = []
            for v in acc:
                if v in pending:
                    pending.remove(v)
                else:
                    out.append(v)
            return out
        if fn == "merge_map":
            if acc is None:
                return None
            gone = {k for k, _ in x}
            return sorted((k, v) for k, v in acc if k not in gone)
        raise ModelError(f"{fn} cannot retract")


def merge(cfg: Config, recs: Sequence[Rec], *, drop: bool) -> Rec | None:
    """Merge one key's records (already in sequence order) as Paimon 0.9 does."""
    if len(recs) == 1:
        result: Rec | None = recs[0]
    elif cfg.engine == "deduplicate":
        kept = [r for r in recs if not (cfg.ignore_delete and r.kind in RETRACT)]
        result = kept[-1] if kept else None
    elif cfg.engine == "first-row":
        result = None
        for r in recs:
            if r.kind in RETRACT:
                if cfg.ignore_delete:
                    continue
                raise ModelError("first-row: delete")
            if result is None:
                result = r
    elif cfg.engine == "aggregation":
        aggs = {c: Agg(cfg.aggs.get(c, "last_non_null_value") if c not in cfg.key else "primary_key", c, cfg)
                for c in cfg.columns}
        row: dict[str, Any] = dict.fromkeys(cfg.columns)
        for r in recs:
            for c in cfg.columns:
                row[c] = aggs[c].retract(row[c], r.row[c]) if r.kind in RETRACT else aggs[c].agg(row[c], r.row[c])
        result = Rec("+I", row, recs[-1].seq)
    else:
        result = _partial_update(cfg, recs)
    if result is not None and drop and result.kind in RETRACT:
        return None
    return result


def _partial_update(cfg: Config, recs: Sequence[Rec]) -> Rec | None:
    group_of: dict[str, int] = {}
    for i, (_, cols) in enumerate(cfg.groups):
        for c in cols:
            group_of[c] = i
    for i, (seqs, _) in enumerate(cfg.groups):
        for c in seqs:
            group_of[c] = i
    aggs = {c: Agg(fn, c, cfg) for c, fn in cfg.aggs.items()}
    row: dict[str, Any] | None = dict.fromkeys(cfg.columns)
    latest: int | None = None
    deleted = False
    for r in recs:
        if r.kind in RETRACT:
            if cfg.ignore_delete:
                continue
            if cfg.groups:
                assert row is not None
                _retract_groups(cfg, row, r, group_of, aggs)
                continue
            if cfg.remove_record_on_delete:
                if r.kind == "-D":
                    deleted = True
                    row = dict.fromkeys(cfg.columns)
                continue
            raise ModelError("partial-update: delete")
        deleted = False
        latest = r.seq
        assert row is not None
        if not cfg.groups:
            for c in cfg.columns:
                if r.row[c] is not None:
                    row[c] = r.row[c]
            continue
        for c in cfg.columns:
            gi = group_of.get(c)
            agg = aggs.get(c)
            acc = row[c]
            x = r.row[c]
            if gi is None:
                if agg is not None:
                    row[c] = agg.agg(acc, x)
                elif x is not None:
                    row[c] = x
                continue
            seqs = cfg.groups[gi][0]
            if all(r.row[s] is None for s in seqs):
                continue
            if _ge(r.row, row, seqs):
                if c in seqs:
                    for s in seqs:
                        row[s] = r.row[s]
                row[c] = x if agg is None else agg.agg(acc, x)
            elif agg is not None:
                row[c] = agg.agg_reversed(acc, x)
    if deleted or latest is None:
        return None  # removed by -D, or only (ignored) retractions
    assert row is not None
    for c in cfg.key:
        row[c] = recs[-1].row[c]
    return Rec("+I", row, latest)


def _ge(kv: dict[str, Any], row: dict[str, Any], seqs: list[str]) -> bool:
    for s in seqs:
        a, b = kv[s], row[s]
        if a == b:
            continue
        if a is None:
            return False
        if b is None:
            return True
        return a > b
    return True


def _retract_groups(cfg: Config, row: dict[str, Any], r: Rec, group_of: dict[str, int], aggs: dict[str, Agg]) -> None:
    updated: set[str] = set()
    for c in cfg.columns:
        gi = group_of.get(c)
        if gi is None:
            continue
        seqs = cfg.groups[gi][0]
        agg = aggs.get(c)
        if all(r.row[s] is None for s in seqs):
            continue
        if _ge(r.row, row, seqs):
            if c in seqs:
                for s in seqs:
                    if s not in updated:
                        row[s] = r.row[s]
                        updated.add(s)
            elif agg is None:
                row[c] = None
            else:
                row[c] = agg.retract(row[c], r.row[c])
        elif agg is not None:
            row[c] = agg.retract(row[c], r.row[c])


def merge_table(cfg: Config, stages: Sequence[Sequence[Rec]]) -> list[dict[str, Any]]:
    """The table after writing `stages` (each a write buffer flushed into one file) and reading it merged."""
    files: list[Rec] = []
    for stage in stages:
        by_key: dict[tuple[Any, ...], list[Rec]] = {}
        for r in stage:
            by_key.setdefault(tuple(r.row[c] for c in cfg.key), []).append(r)
        for recs in by_key.values():
            out = merge(cfg, sorted(recs, key=cfg.sort_key), drop=False)
            if out is not None:
                files.append(out)
    by_key = {}
    for r in files:
        by_key.setdefault(tuple(r.row[c] for c in cfg.key), []).append(r)
    rows = []
    for key in sorted(by_key):
        out = merge(cfg, sorted(by_key[key], key=cfg.sort_key), drop=True)
        if out is not None:
            rows.append(out.row)
    return rows
