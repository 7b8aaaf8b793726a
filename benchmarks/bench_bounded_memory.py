"""Bounded-memory benchmark (issue 11): one bucket of narrow rows in 4 sorted runs, merged in key ranges.

    .venv/bin/python benchmarks/bench_bounded_memory.py [--rows 30000000] [--small 3000000]

Builds a primary-key table (id BIGINT, v BIGINT; bucket 1) of `--rows` rows in 4 sorted runs (three runs of
interleaved keys and one run updating the first run's keys), then, each in a fresh subprocess whose peak RSS
(resource.getrusage ru_maxrss) is printed with its time:
  1. a full `to_batches()` read, twice, the faster printed (merged key range by key range,
     `sort-spill-buffer-size` default 64 mb),
  2. a full compaction (the same merge, written as it goes),
  3. a full read after the compaction;
  4. on a deletion-vector table of the same rows, fully compacted, then given a level-0 file updating 5 % of the
     keys: a minor compaction (the level-0 file merged with the older versions of its keys, which are marked
     deleted in the top level's files, read key range by key range) and a read after it;
and checks each read's row count and checksum against the values computed from the generated data. Then the
same on `--small` rows through the whole-bucket path (a `sort-spill-buffer-size` larger than the bucket) beside
the key-range path, rows and checksums compared. Issue 11's target: peak RSS under 1 GiB at 30M rows.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from table_format import FileSystemCatalog, write_table  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.int64())])
MASK = (1 << 61) - 1


def build(root: str, rows: int, options: dict[str, str]) -> tuple[int, int]:
    """The table, and the (row count, checksum) a merged read must give."""
    catalog = FileSystemCatalog(root)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "write-only": "true", **options})
    per_run = rows // 4
    rng = np.random.default_rng(11)
    latest: dict[int, np.ndarray] = {}
    for run in range(4):
        slot = run if run < 3 else 0  # the fourth run updates the first run's keys
        ids = np.arange(per_run, dtype=np.int64) * 3 + slot
        v = rng.integers(0, 1 << 40, per_run)
        latest[slot] = v
        write_table(table, pa.table({"id": ids, "v": v}, schema=SCHEMA))
        table = table.refresh()
    expected_rows = 3 * per_run
    ids_sum = sum(int((np.arange(per_run, dtype=np.int64) * 3 + s).sum()) for s in range(3))
    return expected_rows, checksum_of(ids_sum, sum(int(v.sum()) for v in latest.values()))


def update_keys(root: str, rows: int, expected: tuple[int, int], *, updates: int) -> tuple[int, int]:
    """Write new values for `updates` keys of the second run (one level-0 file); the expected (rows, checksum)."""
    table = FileSystemCatalog(root).load_table("db.t")
    per_run = rows // 4
    rng = np.random.default_rng(11)
    old = [rng.integers(0, 1 << 40, per_run) for _ in range(2)][1]  # the second run's values (see build)
    picked = np.sort(np.random.default_rng(5).choice(per_run, updates, replace=False))
    new = np.random.default_rng(6).integers(0, 1 << 40, updates)
    write_table(table, pa.table({"id": picked.astype(np.int64) * 3 + 1, "v": new}, schema=SCHEMA))
    n, checksum = expected
    return n, (checksum - int(old[picked].sum()) + int(new.sum())) & MASK


def checksum_of(ids_sum: int, v_sum: int) -> int:
    return (ids_sum * 1_000_003 + v_sum) & MASK


CHILD = r"""
import json, resource, sys, time
import pyarrow.compute as pc
sys.path.insert(0, {repo!r})
from table_format import FileSystemCatalog
from benchmarks.bench_bounded_memory import peak_rss_mib
table = FileSystemCatalog({root!r}).load_table("db.t")
t0 = time.perf_counter()
out = {{}}
if {action!r} in ("compact", "compact_minor"):
    table.maintenance.compact(full={action!r} == "compact")
    out["seconds"] = time.perf_counter() - t0
else:
    for attempt in range(2):  # the faster of two reads (the first one warms the page cache)
        t0 = time.perf_counter()
        rows = ids = vs = batches = 0
        for b in table.scan().to_batches():
            rows += b.num_rows
            batches += 1
            ids += pc.sum(b.column(0)).as_py() or 0
            vs += pc.sum(b.column(1)).as_py() or 0
        seconds = time.perf_counter() - t0
        out["seconds"] = min(out.get("seconds", seconds), seconds)
    out.update(rows=rows, ids_sum=ids, v_sum=vs, batches=batches)
out["peak_rss_mib"] = peak_rss_mib()
print(json.dumps(out))
"""


def peak_rss_mib() -> float:
    """This process's peak resident set: VmHWM (Linux; a fresh exec starts its own, where ru_maxrss keeps the
    parent's), else getrusage's ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_child(root: str, action: str) -> dict[str, float]:
    code = CHILD.format(repo=str(Path(__file__).resolve().parents[1]), root=root, action=action)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(label: str, r: dict[str, float], expected: tuple[int, int] | None) -> bool:
    ok = True
    line = f"{label:<44} {r['seconds']:8.2f} s   peak RSS {r['peak_rss_mib']:7.0f} MiB"
    if "rows" in r:
        got = (int(r["rows"]), checksum_of(int(r["ids_sum"]), int(r["v_sum"])))
        ok = expected is None or got == expected
        line += f"   rows {got[0]:,}  checksum {got[1]:x}  {'ok' if ok else 'MISMATCH ' + str(expected)}"
    print(line, flush=True)
    return ok


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=30_000_000)
    ap.add_argument("--small", type=int, default=3_000_000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-bounded-")
    ok = True
    try:
        t0 = time.perf_counter()
        expected = build(f"{tmp}/big", args.rows, {})
        print(f"built {args.rows:,} rows in 4 sorted runs in {time.perf_counter() - t0:.1f} s "
              f"(builder peak RSS {peak_rss_mib():.0f} MiB)", flush=True)
        big = f"{tmp}/big"
        results = {}
        results["read"] = in_child(big, "read")
        ok &= report(f"{args.rows:,} rows: to_batches (key ranges)", results["read"], expected)
        results["compact"] = in_child(big, "compact")
        ok &= report(f"{args.rows:,} rows: full compaction (key ranges)", results["compact"], None)
        results["read_after"] = in_child(big, "read")
        ok &= report(f"{args.rows:,} rows: to_batches after compaction", results["read_after"], expected)
        shutil.rmtree(big, ignore_errors=True)
        # deletion vectors: a minor compaction merges a level-0 file with the older versions of its keys in the top
        # level and marks those deleted (the top level streamed key range by key range)
        dv = f"{tmp}/dv"
        expected_dv = build(dv, args.rows, {"deletion-vectors.enabled": "true"})
        in_child(dv, "compact")
        expected_dv = update_keys(dv, args.rows, expected_dv, updates=args.rows // 20)
        results["dv_minor"] = in_child(dv, "compact_minor")
        ok &= report(f"{args.rows:,} rows: deletion-vector minor compaction", results["dv_minor"], None)
        results["dv_read"] = in_child(dv, "read")
        ok &= report(f"{args.rows:,} rows: to_batches after it", results["dv_read"], expected_dv)
        shutil.rmtree(dv, ignore_errors=True)
        for label, options in (("whole bucket", {"sort-spill-buffer-size": "64 gb"}), ("key ranges", {})):
            root = f"{tmp}/{label.replace(' ', '_')}"
            exp = build(root, args.small, options)
            ok &= report(f"{args.small:,} rows: to_batches ({label})", in_child(root, "read"), exp)
            report(f"{args.small:,} rows: full compaction ({label})", in_child(root, "compact"), None)
            ok &= report(f"{args.small:,} rows: to_batches after compaction ({label})", in_child(root, "read"), exp)
        peak = max(r["peak_rss_mib"] for r in results.values())
        print(f"peak RSS at {args.rows:,} rows: {peak:.0f} MiB (target < 1024 MiB): "
              f"{'ok' if peak < 1024 else 'OVER'}; rows and checksums: {'ok' if ok else 'MISMATCH'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
