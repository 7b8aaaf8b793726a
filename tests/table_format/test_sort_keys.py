"""stable_sort_indices: every strategy (radix, timsort of a few runs, unique-key quicksort, per-key stable sorts)
gives the one stable permutation a least-significant-first chain of stable sorts gives."""

from __future__ import annotations

import numpy as np
import pytest

from table_format.row.sort import stable_sort_indices


def _reference(keys: list[np.ndarray], initial: np.ndarray | None) -> np.ndarray:
    perm = np.arange(len(keys[0]), dtype=np.int64) if initial is None else initial
    for k in reversed(keys):
        perm = perm[np.argsort(k[perm], kind="stable")]
    return perm


def _key(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "small":  # few distinct values: radix sort
        return rng.integers(-3, 4, n).astype(np.int32)
    if kind == "runs":  # concatenated sorted files with repeated keys: timsort
        cut = int(rng.integers(0, n + 1))
        return np.concatenate([np.sort(rng.integers(0, 50, cut)), np.sort(rng.integers(0, 50, n - cut))])
    if kind == "wide":  # spread out, shuffled: quicksort of unique (value, position)
        return rng.integers(-(10**12), 10**12, n)
    return rng.integers(-(2**62), 2**62, n).astype(np.int64)  # "huge": ranges overflow the composite key


@pytest.mark.parametrize("kinds", [("small",), ("runs",), ("wide",), ("huge",), ("small", "runs"),
                                   ("runs", "wide"), ("small", "huge"), ("wide", "small")])
def test_every_strategy_is_the_stable_order(kinds: tuple[str, ...]) -> None:
    rng = np.random.default_rng(len(kinds) * 31 + sum(map(len, kinds)))
    for n in (0, 1, 2, 17, 1000, 70_000):
        keys = [_key(rng, k, n) for k in kinds]
        for initial in (None, rng.permutation(n).astype(np.int64)):
            got = stable_sort_indices(keys, initial=initial)
            assert got.dtype == np.int64
            assert np.array_equal(got, _reference(keys, initial)), (kinds, n)


def test_many_runs_fall_back_to_quicksort_with_the_same_order() -> None:
    rng = np.random.default_rng(5)
    key = np.concatenate([np.sort(rng.integers(0, 10**9, 500)) for _ in range(200)])  # 200 runs
    assert np.array_equal(stable_sort_indices([key]), _reference([key], None))
