"""PaimonStreamReader's driver-side calls without a SparkSession (as Spark's planner process makes them): offsets,
batch boundaries at overwrites, the consumer kept alive under consumer.expiration-time, expired snapshots named."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles  # noqa: E402
from pyspark.sql.types import StringType, StructField, StructType  # noqa: E402

from jobs.spark.stream_options import stream_options  # noqa: E402
from jobs.spark.stream_reader import PaimonStreamReader  # noqa: E402
from jobs.spark.types import spark_schema  # noqa: E402
from table_format import FileSystemCatalog, SnapshotNotFoundError, Table, write_table  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _table(warehouse: str, **options: str) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=("id",), options={"bucket": "2", **options})
    for i in range(3):
        write_table(table, pa.table({"id": [i, i + 1], "v": [f"v{i}", f"w{i}"]}, schema=SCHEMA))
    write_table(table, pa.table({"id": [7], "v": ["o"]}, schema=SCHEMA), mode="overwrite")  # snapshot 4
    write_table(table, pa.table({"id": [8], "v": ["x"]}, schema=SCHEMA))
    return table


def _reader(table: Table, **options: str) -> PaimonStreamReader:
    schema = StructType([StructField(f.name, f.dataType, True) for f in spark_schema(table.arrow_schema, table="t")]
                        + [StructField("_row_kind", StringType(), False)])
    return PaimonStreamReader(stream_options({"path": table.path, "read.changelog": "true", **options}), schema)


def _read(reader: PaimonStreamReader, start: dict, end: dict) -> list[tuple]:
    rows = [r for p in reader.partitions(start, end) for b in reader.read(p) for r in b.to_pylist()]
    return sorted((r["id"], r["v"], r["_row_kind"]) for r in rows)


def test_offsets_stop_at_the_overwrite_and_batches_read_the_changes(warehouse: str) -> None:
    table = _table(warehouse)
    reader = _reader(table, **{"scan.mode": "from-snapshot", "scan.snapshot-id": "1"})
    start = reader.initialOffset()
    assert start == {"snapshot": 0}
    ends = []
    while (end := reader.latestOffset(start, ReadAllAvailable())) != start:
        ends.append(end)
        changes = (table.changes(start["snapshot"], end["snapshot"], merged=False) if end["snapshot"] != 4
                   else None)
        got = _read(reader, start, end)
        if changes is not None:
            assert got == sorted((r["id"], r["v"], r["_row_kind"]) for r in changes.to_pylist())
        else:  # the overwrite: everything before as -D, the new rows as +I
            before = table.scan(snapshot_id=3).to_arrow().to_pylist()
            assert got == sorted([(r["id"], r["v"], "-D") for r in before] + [(7, "o", "+I")])
        start = end
    assert ends == [{"snapshot": 3}, {"snapshot": 4}, {"snapshot": 5}]
    assert reader.latestOffset({"snapshot": 0}, ReadMaxFiles(2)) == {"snapshot": 2}  # max-snapshots-per-trigger


def test_consumer_is_kept_alive_and_expired_snapshots_are_named(warehouse: str) -> None:
    table = _table(warehouse, **{"consumer.expiration-time": "1 h"})
    reader = _reader(table, **{"consumer-id": "c1", "scan.mode": "latest"})
    start = reader.initialOffset()
    assert table.consumer("c1").next_snapshot == 6  # type: ignore[union-attr]
    path = os.path.join(table.path, "consumer", "consumer-c1")
    old = time.time() - 2400  # older than half the expiration time
    os.utime(path, (old, old))
    reader.latestOffset(start, ReadAllAvailable())
    assert os.path.getmtime(path) > old + 2000  # re-touched, still at its next snapshot
    assert table.consumer("c1").next_snapshot == 6  # type: ignore[union-attr]
    for sid in (1, 2):
        os.remove(os.path.join(table.path, "snapshot", f"snapshot-{sid}"))
    with open(os.path.join(table.path, "snapshot", "EARLIEST"), "w") as f:
        f.write("3")
    with pytest.raises(SnapshotNotFoundError, match="consumer-id"):
        reader.latestOffset({"snapshot": 0}, ReadAllAvailable())
