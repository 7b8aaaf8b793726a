"""The maintenance jobs' engine choice, timed as a user sees it: a `compact_tables` run (Dagster, in process) on a
small table (engine auto -> local) and on a table above the 256 MiB threshold (auto -> Spark, including the JVM's
start), each in a fresh process (``run``: the run itself; ``process``: with Python's and Dagster's start-up); plus
the large table forced local, to judge the threshold. The auto runs set `spark_on_local_master` (a local master would
otherwise keep the large table in process too).

    .venv/bin/python benchmarks/bench_maintenance_engine.py [--rows-per-write N] [--writes W]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from table_format import FileSystemCatalog, write_table  # noqa: E402

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.int64()), ("x", pa.float64())])
OPTIONS = {"bucket": "4", "write-only": "true"}

RUN = """
import json, sys, time
start = time.perf_counter()
import dagster as dg
from jobs.maintenance import CompactConfig, compact_tables
from lakehouse_assets import PaimonCatalogResource, pyspark_resource
instance = dg.DagsterInstance.ephemeral()  # Dagster's own start-up (imports of its storage): not the run's
imported = time.perf_counter()
config = CompactConfig(tables=[sys.argv[2]], engine=sys.argv[3], spark_on_local_master=True)
result = compact_tables.execute_in_process(
    resources={"pyspark": pyspark_resource(), "paimon_catalog": PaimonCatalogResource(warehouse=sys.argv[1])},
    run_config=dg.RunConfig(ops={"compact_tables_op": config}), instance=instance)
done = time.perf_counter()
(event,) = [e for e in result.all_events if e.event_type_value in ("ASSET_MATERIALIZATION", "ASSET_OBSERVATION")]
data = event.event_specific_data
meta = (data.materialization if event.event_type_value == "ASSET_MATERIALIZATION" else data.asset_observation).metadata
assert meta["maintenance/changed"].value, f"{sys.argv[2]}: nothing compacted"
print(json.dumps({"run_s": done - imported, "process_s": done - start, "engine": meta["maintenance/engine"].value,
                  "work_bytes": meta["maintenance/work_bytes"].value}))
"""


def make_table(catalog: FileSystemCatalog, name: str, *, writes: int, rows: int) -> None:
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options=OPTIONS)
    rng = np.random.default_rng(7)
    for _ in range(writes):  # the same keys each time: compaction merges them
        write_table(table, pa.table({"id": np.arange(rows, dtype=np.int64),
                                     "v": rng.integers(0, 1 << 62, rows), "x": rng.random(rows)}, schema=SCHEMA))


def timed_run(warehouse: str, table: str, engine: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([sys.executable, "-c", RUN, warehouse, table, engine], env=env, capture_output=True,
                         text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{table}: " + out.stderr[-1500:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-write", type=int, default=3_500_000)
    parser.add_argument("--writes", type=int, default=5)  # 5 sorted runs: compaction due
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-engine-")
    try:
        warehouse = f"{root}/wh"
        catalog = FileSystemCatalog(warehouse)
        catalog.create_database("db")
        start = time.perf_counter()
        make_table(catalog, "small", writes=6, rows=1_000)
        make_table(catalog, "large", writes=args.writes, rows=args.rows_per_write)
        print(f"tables written in {time.perf_counter() - start:.1f} s", flush=True)
        shutil.copytree(f"{warehouse}/db.db/large", f"{warehouse}/db.db/large_local")
        for table, engine in (("db.small", "auto"), ("db.large", "auto"), ("db.large_local", "local")):
            r = timed_run(warehouse, table, engine)
            print(f"compact_tables {table} (engine {engine} -> {r['engine']}, {r['work_bytes'] / 2**20:.1f} MiB "
                  f"rewritten): run {r['run_s']:.1f} s, process {r['process_s']:.1f} s", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
