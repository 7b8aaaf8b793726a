"""S3 vs local disk: write, merged read, planning and compaction, with the S3 requests each one sends.

    .venv/bin/python benchmarks/bench_s3.py [--rows N] [--commits C] [--json]

Starts SeaweedFS on 127.0.0.1 (tests/s3/seaweed.py, the `weed` of the venv) and runs one workload on three
warehouses: a local directory; `s3-pyarrow`, the generic FileIO over pyarrow's S3FileSystem that s3:// URIs used
before S3FileIO (a FileCommitLock makes its check-then-write commits safe; hints by copy + delete); and `s3`, the
S3FileIO of `FileSystemCatalog("s3://...")`. Requests are counted by the server (Prometheus metrics of SeaweedFS,
so both S3 clients are measured the same way) per phase:

* write: C commits of N/C rows into a primary-key table (bucket 2, write-only), then one commit of N/10 upserts;
* plan (cold): a fresh catalog plans a scan of the latest snapshot (what a Spark driver does per query);
* plan (warm): the same catalog plans again (S3FileIO caches manifests, which are immutable);
* merged read: `scan().to_arrow()` of the merged table from a fresh catalog;
  (the read-only phases run `--repeat` times: the fastest time, the requests of one run)
* compaction: a full compaction.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from table_format import FileSystemCatalog, write_table  # noqa: E402
from table_format.io.file_io import FileIO  # noqa: E402
from table_format.io.lock import FileCommitLock  # noqa: E402

BUCKET = "bench"
SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.int64()), ("s", pa.string())])


def _seaweed() -> Any:
    spec = importlib.util.spec_from_file_location("seaweed", REPO / "tests" / "s3" / "seaweed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["seaweed"] = module
    spec.loader.exec_module(module)
    return module


def _rows(ids: np.ndarray, salt: int) -> pa.Table:
    return pa.table({"id": ids, "v": ids * 7 + salt, "s": pa.array([f"s{salt}-{i % 1000}" for i in ids])},
                    schema=SCHEMA)


class Target:
    """One warehouse: how to open a catalog on it, and how to count the requests it caused."""

    def __init__(self, name: str, open_catalog: Callable[[], FileSystemCatalog], count: Callable[[], int]) -> None:
        self.name = name
        self.open_catalog = open_catalog
        self.count = count


def _phase(target: Target, fn: Callable[[], Any]) -> tuple[float, int, Any]:
    before = target.count()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, target.count() - before, out


def run(target: Target, rows: int, commits: int, repeat: int) -> dict[str, Any]:
    catalog = target.open_catalog()
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2", "write-only": "true"})
    per = rows // commits
    res: dict[str, Any] = {}

    def write_all() -> None:
        for c in range(commits):
            write_table(table, _rows(np.arange(c * per, (c + 1) * per), 0))
        write_table(table, _rows(np.arange(0, rows, 10), 1))

    t, n, _ = _phase(target, write_all)
    res["write_s"], res["requests_per_commit"] = round(t, 3), round(n / (commits + 1), 1)
    cold, warm, reads = [], [], []
    for _ in range(repeat):  # the fastest of `repeat` runs: robust against other load on the machine
        fresh = target.open_catalog().load_table("db.t")
        cold.append(_phase(target, lambda t=fresh: t.scan().plan()))
        warm.append(_phase(target, lambda t=fresh: t.scan().plan()))
        reader = target.open_catalog().load_table("db.t")
        reads.append(_phase(target, lambda t=reader: t.scan().to_arrow()))
        assert reads[-1][2].num_rows == rows, (reads[-1][2].num_rows, rows)
    for name, runs in (("plan_cold", cold), ("plan_warm", warm), ("read", reads)):
        res[f"{name}_s"], res[f"{name}_requests"] = round(min(r[0] for r in runs), 3), runs[0][1]
    res["splits"] = len(cold[0][2])
    t, n, _ = _phase(target, lambda: table.maintenance.compact(full=True))
    res["compact_s"], res["compact_requests"] = round(t, 3), n
    return res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each read-only phase (the fastest counts)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seaweed = _seaweed()
    with tempfile.TemporaryDirectory() as tmp:
        server = seaweed.SeaweedS3.start(Path(tmp) / "seaweedfs", metrics=True)
        try:
            server.client().create_bucket(Bucket=BUCKET)

            def s3_count() -> int:
                return sum(server.request_counts(BUCKET).values())

            pyarrow_fs = pafs.S3FileSystem(endpoint_override=server.endpoint, access_key=server.access_key,
                                           secret_key=server.secret_key, region=server.region)
            lock = FileCommitLock(str(Path(tmp) / "locks"))
            targets = [
                Target("local", lambda: FileSystemCatalog(str(Path(tmp) / "local")), lambda: 0),
                Target("s3-pyarrow", lambda: FileSystemCatalog(
                    f"s3://{BUCKET}/before", file_io=FileIO(pyarrow_fs, local=False), commit_lock=lock), s3_count),
                Target("s3", lambda: FileSystemCatalog(f"s3://{BUCKET}/after", options=server.options()), s3_count),
            ]
            results = {t.name: run(t, args.rows, args.commits, args.repeat) for t in targets}
        finally:
            server.stop()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    keys = list(next(iter(results.values())))
    print(f"{args.rows} rows, {args.commits} commits + 1 upsert commit, primary key, bucket 2, write-only (the read merges the runs, compaction rewrites them)")
    print(f"{'':24}" + "".join(f"{name:>14}" for name in results))
    for key in keys:
        print(f"{key:24}" + "".join(f"{r[key]:>14}" for r in results.values()))


if __name__ == "__main__":
    main()
