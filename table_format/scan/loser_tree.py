"""The order in which Paimon 0.9's SortMergeReaderWithLoserTree hands out the records of one merge.

Records of a key come one per sorted run per round; inside a round they go by sequence number, and records with
equal sequence numbers in the order the loser tree pops them (LoserTree's winner/loser bookkeeping), worked out
here for whole sections at once: two-way ties vectorized, chains of ties by pointer jumping, larger sets of tied
records one by one.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict

import numpy as np

from table_format.merge.kernels import lex_rank
from table_format.row.sort import first_of_runs


def dense(keys: list[np.ndarray]) -> np.ndarray:
    """Dense rank (0, 1, ...) of row tuples."""
    if len(keys) > 1:
        return lex_rank(keys)
    return np.unique(keys[0], return_inverse=True)[1].reshape(-1).astype(np.int64)


def merge_order(sec: np.ndarray, leaf: np.ndarray, nleaf: np.ndarray, key: np.ndarray,
                 s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Records in run order (section, run, position) -> (the order the merge functions see them, round of each).

    A round is (key, occurrence of the key in its run); rounds come in key order, records in a round by sequence
    (`s`: dense rank of sequence.field values and _SEQUENCE_NUMBER), equal sequences by `_tie_ranks`."""
    m = len(leaf)
    idx = np.arange(m, dtype=np.int64)
    first = first_of_runs([sec, leaf, key])
    occ = idx - np.maximum.accumulate(np.where(first, idx, 0))
    rounds = dense([key, occ])
    order = np.lexsort((s, rounds))
    gs, ss = rounds[order], s[order]
    tied = np.flatnonzero((gs[1:] == gs[:-1]) & (ss[1:] == ss[:-1]))
    if len(tied) == 0:
        return order, rounds
    tie = _tie_ranks(sec, leaf, nleaf, rounds, s, order, tied)
    return np.lexsort((tie, s, rounds)), rounds


# ---- the LoserTree's order of equal sequence numbers ---------------------------------------------------------------
#
# LoserTree (leaf i at tree position i + n, node k has children 2k and 2k+1) resolves a tie of two records where
# they meet, at the lowest common ancestor p of their leaves: the record that reached p first wins (is popped
# first), except when the later one climbs there while the round is being drained (after a record of the same
# round from its side was popped): the climber wins. A record reaches p when it becomes the winner of p's child on
# its side: at initialisation (leaves are filled from the last; a side whose lowest leaf is higher completes
# first), or when the side's previous winner, popped in an earlier round h, is replaced. Popped leaves advance in
# reverse pop order, so after round h the side holding the last popped record of round h below p comes first.


def _depth(x: np.ndarray) -> np.ndarray:
    return (np.frexp(x.astype(np.float64))[1] - 1).astype(np.int64)


def _in_subtree(pos: np.ndarray, dpos: np.ndarray, node: np.ndarray, dnode: np.ndarray) -> np.ndarray:
    shift = dpos - dnode
    return (shift >= 0) & ((pos >> np.maximum(shift, 0)) == node)


class _Runs:
    """Records of every run of one split, looked up by (run, round): runs in order, rounds increasing in a run."""

    def __init__(self, sec: np.ndarray, leaf: np.ndarray, nleaf: np.ndarray, rounds: np.ndarray) -> None:
        offsets = np.zeros(int(sec.max()) + 2, np.int64)
        np.maximum.at(offsets, sec + 1, nleaf)
        self.base = np.cumsum(offsets)  # first global run id of each section
        self.width = int(rounds.max()) + 1
        self.gleaf = self.base[sec] + leaf
        self.code = self.gleaf * self.width + rounds  # ascending in run order
        self.rounds = rounds

    def at(self, gleaf: np.ndarray, rnd: np.ndarray) -> np.ndarray:
        """The record of round `rnd` in run `gleaf`, or -1."""
        q = gleaf * self.width + rnd
        i = np.searchsorted(self.code, q)
        j = np.minimum(i, len(self.code) - 1)
        return np.where((i < len(self.code)) & (self.code[j] == q) & (rnd >= 0), j, -1)

    def last_before(self, gleaf: np.ndarray, rnd: np.ndarray) -> np.ndarray:
        """The last round before `rnd` that run `gleaf` took part in, or -1."""
        i = np.searchsorted(self.code, gleaf * self.width + rnd) - 1
        j = np.maximum(i, 0)
        return np.where((i >= 0) & (self.gleaf[j] == gleaf), self.rounds[j], -1)


def _tie_ranks(sec: np.ndarray, leaf: np.ndarray, nleaf: np.ndarray, rounds: np.ndarray, s: np.ndarray,
               order: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """Rank of each record among the records of its round with an equal sequence (0 = popped first).

    Ties of two records are decided vectorized; ties of three or more (sequence numbers restarted by several
    overwrites), and the pairs that depend on them, one at a time in merge order."""
    runs = _Runs(sec, leaf, nleaf, rounds)
    tie = np.zeros(len(leaf), np.int64)
    starts = np.ones(len(tied), bool)
    starts[1:] = tied[1:] != tied[:-1] + 1
    bounds = np.append(np.flatnonzero(starts), len(tied))
    first = order[tied[bounds[:-1]]]  # first record of each tie set, sets in merge order
    size = np.diff(bounds) + 1
    width = int(s.max()) + 1
    set_code = runs.rounds[first] * width + s[first]  # ascending
    is_pair = size == 2
    pair_sets = np.flatnonzero(is_pair)
    a, b = first[pair_sets], order[tied[bounds[:-1]] + 1][pair_sets]
    decided = _pairs(runs, sec, leaf, nleaf, s, a, b, tie, set_code, is_pair, width)
    if decided.all() and is_pair.all():
        return tie
    slow = np.sort(np.concatenate([np.flatnonzero(~is_pair), pair_sets[~decided]]))
    _sets(runs, sec, leaf, nleaf, s, [order[tied[bounds[i]]: tied[bounds[i + 1] - 1] + 2] for i in slow], tie)
    return tie


def _pairs(runs: _Runs, sec: np.ndarray, leaf: np.ndarray, nleaf: np.ndarray, s: np.ndarray, a: np.ndarray,
           b: np.ndarray, tie: np.ndarray, set_code: np.ndarray, is_pair: np.ndarray, width: int) -> np.ndarray:
    """Ties of two records, vectorized (a tie decided by another tie of the same two subtrees is chained).
    Returns which pairs it decided (not those depending on a tie of three or more)."""
    npairs = len(a)
    if npairs == 0:
        return np.ones(0, bool)
    n = nleaf[a]
    pos_a, pos_b = leaf[a] + n, leaf[b] + n
    u, v = pos_a.copy(), pos_b.copy()
    while (u != v).any():
        du, dv = _depth(u), _depth(v)
        ne = u != v
        u, v = np.where(ne & (du >= dv), u >> 1, u), np.where(ne & (dv >= du), v >> 1, v)
    p, dp = u, _depth(u)
    dc = dp + 1
    c_a, c_b = pos_a >> (_depth(pos_a) - dc), pos_b >> (_depth(pos_b) - dc)
    rnd, sv, base = runs.rounds[a], s[a], runs.base[sec[a]]
    h_a, h_b = np.full(npairs, -1), np.full(npairs, -1)
    low_a, low_b = np.full(npairs, -1), np.full(npairs, -1)
    drain_a, drain_b = np.full(npairs, -1), np.full(npairs, -1)  # latest sequence popped before, this round
    max_leaves = int(n.max())
    for lf in range(max_leaves):
        pos = lf + n
        dpos = _depth(pos)
        in_a = (lf < n) & _in_subtree(pos, dpos, c_a, dc)
        in_b = (lf < n) & _in_subtree(pos, dpos, c_b, dc)
        last = runs.last_before(base + lf, rnd)
        h_a, h_b = np.where(in_a, np.maximum(h_a, last), h_a), np.where(in_b, np.maximum(h_b, last), h_b)
        low_a, low_b = np.where(in_a & (low_a < 0), lf, low_a), np.where(in_b & (low_b < 0), lf, low_b)
        r = runs.at(base + lf, rnd)
        rs = np.where(r >= 0, s[np.maximum(r, 0)], -1)
        before = (r >= 0) & (rs < sv)
        drain_a = np.where(in_a & before, np.maximum(drain_a, rs), drain_a)
        drain_b = np.where(in_b & before, np.maximum(drain_b, rs), drain_b)
    first_a = np.zeros(npairs, bool)
    dep_round, dep_s = np.full(npairs, -1), np.full(npairs, -1)
    drain = (drain_a >= 0) | (drain_b >= 0)
    first_a[drain] = drain_a[drain] > drain_b[drain]  # the later climber wins
    same = drain & (drain_a == drain_b)
    dep_round[same], dep_s[same] = rnd[same], drain_a[same]
    fresh = ~drain
    first_a = np.where(fresh & (h_a != h_b), h_a < h_b, first_a)  # the earlier arrival wins
    init = fresh & (h_a == h_b) & (h_a < 0)
    first_a = np.where(init, low_a > low_b, first_a)
    after = np.flatnonzero(fresh & (h_a == h_b) & (h_a >= 0))
    if len(after):  # both sides refilled after round h: the side of h's last popped record below p comes first
        h = h_a[after]
        top = np.full(len(after), -1)
        on_a, on_b = np.zeros(len(after), bool), np.zeros(len(after), bool)
        pa_, dpa = p[after], dp[after]
        for lf in range(max_leaves):
            pos = lf + n[after]
            dpos = _depth(pos)
            in_p = (lf < n[after]) & _in_subtree(pos, dpos, pa_, dpa)
            r = runs.at(base[after] + lf, h)
            rs = np.where(in_p & (r >= 0), s[np.maximum(r, 0)], -1)
            side_a = _in_subtree(pos, dpos, c_a[after], dc[after])
            higher = rs > top
            equal = (rs == top) & (rs >= 0)
            on_a = np.where(higher, side_a, on_a | (equal & side_a))
            on_b = np.where(higher, ~side_a, on_b | (equal & ~side_a))
            top = np.maximum(top, rs)
        first_a[after] = on_a & ~on_b
        both = on_a & on_b
        dep_round[after[both]], dep_s[after[both]] = h[both], top[both]
    # decided by tie q (its records on both sides): first_a = first_a[q] xor (q's `a` is on our `a` side)
    dep = np.arange(npairs)
    flip = np.zeros(npairs, bool)
    decided = np.ones(npairs, bool)
    chained = np.flatnonzero(dep_round >= 0)
    if len(chained):
        target = np.searchsorted(set_code, dep_round[chained] * width + dep_s[chained])  # a tie set
        by_pair = np.cumsum(is_pair) - 1  # tie set -> pair number
        on_pair = is_pair[target]
        decided[chained[~on_pair]] = False  # decided by a tie of three or more
        chained, q = chained[on_pair], by_pair[target[on_pair]]
        dep[chained] = q
        pos_q = leaf[a[q]] + n[chained]
        flip[chained] = _in_subtree(pos_q, _depth(pos_q), c_a[chained], dc[chained])
        while (dep[dep] != dep).any():  # pointer jumping to the chain's first tie
            flip, dep = flip ^ flip[dep], dep[dep]
        first_a = first_a[dep] ^ flip
        decided = decided[dep]
    tie[a] = np.where(first_a, 0, 1)
    tie[b] = np.where(first_a, 1, 0)
    return decided


def _sets(runs: _Runs, sec: np.ndarray, leaf: np.ndarray, nleaf: np.ndarray, s: np.ndarray,
          sets: list[np.ndarray], tie: np.ndarray) -> None:
    """Tie sets one at a time, in merge order: the next popped is the one winning against every other."""
    popped = np.zeros(len(leaf), bool)
    gleaf_of = (runs.base[sec] + leaf).tolist()
    rounds_of = runs.rounds.tolist()
    record = {(g, r): i for i, (g, r) in enumerate(zip(gleaf_of, rounds_of, strict=True))}
    leaf_rounds: dict[int, list[int]] = defaultdict(list)
    for g, r in zip(gleaf_of, rounds_of, strict=True):
        leaf_rounds[g].append(r)  # ascending

    def last_before(gl: int, rnd: int) -> int:
        rs = leaf_rounds.get(gl, [])
        i = bisect_left(rs, rnd)
        return rs[i - 1] if i else -1

    def below(node: int, lf: int, n: int) -> bool:
        pos = lf + n
        shift = pos.bit_length() - node.bit_length()
        return shift >= 0 and pos >> shift == node

    def first_of(x: int, y: int) -> bool:
        n = int(nleaf[x])
        base = int(runs.base[sec[x]])
        u, v = int(leaf[x]) + n, int(leaf[y]) + n
        while u != v:
            du, dv = u.bit_length(), v.bit_length()
            if du >= dv:
                u >>= 1
            if dv >= du and u != v:
                v >>= 1
        p = u

        def child(lf: int) -> int:
            pos = lf + n
            return pos >> (pos.bit_length() - p.bit_length() - 1)

        rnd, sv = rounds_of[x], int(s[x])

        def side(c: int) -> tuple[int, tuple[int, int] | None, int]:
            h, drained, low = -1, None, -1
            for lf in range(n):
                if not below(c, lf, n):
                    continue
                low = lf if low < 0 else low
                h = max(h, last_before(base + lf, rnd))
                r = record.get((base + lf, rnd), -1)
                if r >= 0 and (s[r] < sv or popped[r]):
                    at = (int(s[r]), int(tie[r]))
                    drained = at if drained is None or at > drained else drained
            return h, drained, low

        h_x, d_x, low_x = side(child(int(leaf[x])))
        h_y, d_y, low_y = side(child(int(leaf[y])))
        if d_x is not None or d_y is not None:  # the later climber wins
            return d_y is None or (d_x is not None and d_x > d_y)
        if h_x != h_y:  # the earlier arrival wins
            return h_x < h_y
        if h_x < 0:
            return low_x > low_y
        cands = [r for lf in range(n) if below(p, lf, n) and (r := record.get((base + lf, h_x), -1)) >= 0]
        last = max(cands, key=lambda r: (int(s[r]), int(tie[r])))
        return below(child(int(leaf[x])), gleaf_of[last] - base, n)

    for members in sets:
        left = [int(r) for r in members]
        rank = 0
        while left:
            best = left[0]
            for r in left[1:]:
                if not first_of(best, r):
                    best = r
            tie[best] = rank
            popped[best] = True
            rank += 1
            left.remove(best)
