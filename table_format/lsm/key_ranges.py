"""Merge a bucket's sorted runs by key ranges: a bounded number of rows of each run in memory at a time.

Java Paimon merges the sorted runs of a bucket record by record (SortMergeReader over one reader per run; with
more runs than `sort-spill-threshold` it spills them through a buffer of `sort-spill-buffer-size`). Here the
runs are cut into key ranges instead, each merged whole by the vectorized `merge_kv`:

* every run holds about `budget / runs` bytes of decoded rows (read `batch_rows` at a time, Parquet one row group
  at a time); the next range ends at the smallest last key buffered by any run, so each step consumes at least
  one run's buffer, and every other run only its rows up to that key;
* a range is cut *between* keys: all versions of a key (in every run) are in the same range, so a key merges
  with exactly the records it would merge with in a whole-bucket merge;
* the pieces of a range keep the whole-bucket input order (files by `min_sequence_number`, rows in file order),
  so ties that `merge_kv` breaks by input order (stable sort) break the same way.

This is exact for `merge_kv` (reads, compaction, rescale, changelog of full-compaction/lookup): it merges each
key on its own. It is *not* exact for the LoserTree order of equal sequence numbers (scan/loser_tree.py), whose
state carries over from earlier keys (the last round a run took part in): the audit-log/changes reads
(scan/changes.py) keep the whole-bucket merge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from table_format.meta.manifest import DataFileMeta
from table_format.row.binary_row import decode_row
from table_format.types import DataType, DoubleType, FloatType

Piece = tuple[int, pa.Table]
"""(position of the file in the whole-bucket input order, rows of that file)."""

SYSTEM_ROW_BYTES = 9  # `_SEQUENCE_NUMBER` (int64) + `_VALUE_KIND` (int8) of a row read for a merge
_VAR_WIDTH_BYTES = 24  # a guess for strings/binaries/nested values when estimating decoded bytes


def row_bytes(schema: pa.Schema) -> int:
    """Estimated decoded bytes per row of `schema` (fixed widths; a guess for variable-length columns)."""
    total = 0
    for f in schema:
        try:
            total += max(1, f.type.bit_width // 8)
        except ValueError:
            total += _VAR_WIDTH_BYTES
    return max(1, total)


def estimated_bytes(files: Sequence[DataFileMeta], per_row: int) -> int:
    """Decoded bytes of `files`: the larger of the schema estimate and three times their compressed size."""
    rows = sum(f.row_count for f in files)
    return max(rows * per_row, 3 * sum(f.file_size for f in files))


def sorted_runs(files: Sequence[DataFileMeta], key_types: Sequence[DataType]) -> list[list[int]]:
    """Indices of `files` chained into sorted runs (each chain: files in key order, key ranges not overlapping):
    the fewest chains, by interval partitioning on (min_key, max_key)."""
    bounds = [(decode_row(f.min_key, key_types), decode_row(f.max_key, key_types)) for f in files]
    sort_key = _python_key(key_types)
    order = sorted(range(len(files)), key=lambda i: (sort_key(bounds[i][0]), sort_key(bounds[i][1])))
    chains: list[list[int]] = []
    ends: list[Any] = []
    for i in order:
        lo = sort_key(bounds[i][0])
        for c, end in enumerate(ends):
            if end < lo:
                chains[c].append(i)
                ends[c] = sort_key(bounds[i][1])
                break
        else:
            chains.append([i])
            ends.append(sort_key(bounds[i][1]))
    return chains


def _python_key(key_types: Sequence[DataType]) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
    """Python values of a key -> a tuple ordered as Paimon orders keys (floats: NaN greatest, as Double.compare)."""
    floats = [i for i, t in enumerate(key_types) if isinstance(t, (FloatType, DoubleType))]
    if not floats:
        return tuple

    def key(values: Sequence[Any]) -> tuple[Any, ...]:
        out = list(values)
        for i in floats:
            v = out[i]
            out[i] = (1, 0.0) if v is not None and math.isnan(v) else (0, v)
        return tuple(out)
    return key


@dataclass
class _Run:
    source: Iterator[Piece]
    pieces: list[Piece] = field(default_factory=list)
    rows: int = 0
    done: bool = False

    def fill(self, min_rows: int) -> None:
        while not self.done and self.rows < min_rows:
            nxt = next(self.source, None)
            if nxt is None:
                self.done = True
            elif nxt[1].num_rows:
                self.pieces.append(nxt)
                self.rows += nxt[1].num_rows

    def take(self, n: int) -> list[Piece]:
        """The first `n` rows (as pieces); the rest stay buffered."""
        out: list[Piece] = []
        while n > 0:
            tag, t = self.pieces[0]
            if t.num_rows <= n:
                out.append(self.pieces.pop(0))
                n -= t.num_rows
                self.rows -= t.num_rows
            else:
                out.append((tag, t.slice(0, n)))
                self.pieces[0] = (tag, t.slice(n))
                self.rows -= n
                n = 0
        return out


class KeyRanges:
    """Cuts the sorted runs of one merge into consecutive key ranges (see the module doc)."""

    def __init__(self, runs: Sequence[Iterator[Piece]], key_names: Sequence[str], key_types: Sequence[DataType],
                 *, run_rows: int) -> None:
        self.runs = [_Run(r) for r in runs]
        self.key_names = list(key_names)
        self.sort_key = _python_key(key_types)
        self.run_rows = max(1, run_rows)

    def _key(self, t: pa.Table, i: int) -> tuple[Any, ...]:
        values = []
        for k in self.key_names:
            v = t.column(k)[i]
            # temporal values as their integers: nanosecond timestamps have no exact Python datetime
            if pa.types.is_temporal(v.type):
                values.append(v.cast(pa.int32() if v.type.bit_width == 32 else pa.int64()).as_py())
            else:
                values.append(v.as_py())
        return self.sort_key(values)

    def _count_le(self, run: _Run, cut: tuple[Any, ...]) -> int:
        """Rows of the run's buffer with key <= cut (the buffer is in key order): a binary search."""
        n = 0
        for _, t in run.pieces:
            if self._key(t, t.num_rows - 1) <= cut:
                n += t.num_rows
                continue
            lo, hi = 0, t.num_rows - 1  # key(hi) > cut
            while lo < hi:
                mid = (lo + hi) // 2
                if self._key(t, mid) <= cut:
                    lo = mid + 1
                else:
                    hi = mid
            return n + lo
        return n

    def __iter__(self) -> Iterator[list[Piece]]:
        """Each range's pieces, in the whole-bucket input order (by file position, then row)."""
        while True:
            for r in self.runs:
                r.fill(self.run_rows)
            active = [r for r in self.runs if r.rows]
            if not active:
                return
            if all(r.done for r in active):
                cut_pieces = [p for r in active for p in r.take(r.rows)]
            else:
                cut = min(self._key(r.pieces[-1][1], r.pieces[-1][1].num_rows - 1) for r in active)
                cut_pieces = [p for r in active for p in r.take(self._count_le(r, cut))]
            yield sorted(cut_pieces, key=lambda p: p[0])


def file_key_ranges(files: Sequence[DataFileMeta], key_names: Sequence[str], key_types: Sequence[DataType], *,
                    budget: int, per_row: int, read: Callable[[int, int], Iterator[pa.Table]]) -> KeyRanges:
    """The key ranges of `files` (in input order, oldest first), each sorted run holding about `budget / runs` bytes
    of decoded rows: `read(i, batch_rows)` yields file i's rows in slices of at most `batch_rows`; a piece's tag is
    i. `per_row` estimates the decoded bytes of a row read (see row_bytes)."""
    runs = sorted_runs(files, key_types)
    batch_rows = max(1, budget // (max(1, len(runs)) * per_row))

    def run(chain: list[int]) -> Iterator[Piece]:
        for i in chain:
            for t in read(i, batch_rows):
                yield i, t

    return KeyRanges([run(c) for c in runs], key_names, key_types, run_rows=batch_rows)


def concat_pieces(pieces: Sequence[Piece]) -> pa.Table:
    tables = [t for _, t in pieces]
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
