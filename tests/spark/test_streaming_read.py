"""spark.readStream.format("paimon"): micro-batches equal to table.changes (unmerged, as Java streams) over the same
snapshots, overwrites as retractions then insertions, compactions skipped, the consumer advanced, admission control,
availableNow, Java's expiration kept off the snapshots the stream has not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_format import CommitKind, FileSystemCatalog, OptionError, Table, write_table

SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), pa.field("id", pa.int64(), nullable=False),
                    ("v", pa.string())])
COLUMNS = ["dt", "id", "v", "_row_kind"]
Rows = list[tuple[Any, ...]]


def _rows(data: pa.Table) -> Rows:
    return sorted(tuple(r[c] for c in COLUMNS) for r in data.select(COLUMNS).to_pylist())


def _as(data: pa.Table, kind: str) -> Rows:
    return _rows(data.append_column("_row_kind", pa.array([kind] * data.num_rows, pa.string())))


def _write(table: Table, rows: list[tuple[str, int, str]], kinds: list[str] | None = None, **kw: Any) -> None:
    data = pa.table({"dt": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
                    schema=SCHEMA)
    if kinds is not None:
        data = data.append_column("_row_kind", pa.array(kinds, pa.string()))
    write_table(table, data, **kw)


def history(warehouse: str) -> Table:
    """Snapshots 1-6: insert, upsert, delete, overwrite of partition b, compaction, upsert."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=("dt", "id"), partition_keys=("dt",),
                                 options={"bucket": "2"})
    _write(table, [("a", i, f"a{i}") for i in range(1, 5)] + [("b", i, f"b{i}") for i in range(1, 4)])
    _write(table, [("a", 2, "a2'"), ("b", 9, "b9")])
    _write(table, [("a", 3, "a3")], kinds=["-D"])
    _write(table, [("b", 1, "x"), ("b", 5, "y")], mode="overwrite", overwrite_partitions=[{"dt": "b"}])
    table.maintenance.compact(full=True)
    _write(table, [("a", 1, "z")])
    kinds = [s.commit_kind for s in table.snapshots()]
    assert kinds == [CommitKind.APPEND] * 3 + [CommitKind.OVERWRITE, CommitKind.COMPACT, CommitKind.APPEND]
    return table


def run_stream(spark: Any, path: str, checkpoint: Path, **options: str) -> list[tuple[int, pa.Table]]:
    """One availableNow run; the micro-batches (id, rows) it wrote, in order."""
    batches: list[tuple[int, pa.Table]] = []
    reader = spark.readStream.format("paimon").option("read.changelog", "true")
    for k, v in options.items():
        reader = reader.option(k, v)
    query = (reader.load(path).writeStream.foreachBatch(lambda df, i: batches.append((i, df.toArrow())))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert query.exception() is None
    return batches


def replaced(table: Table, sid: int) -> Rows:
    where = [("dt", "=", "b")]
    return sorted(_as(table.scan(snapshot_id=sid - 1, filter=where).to_arrow(), "-D")
                  + _as(table.scan(snapshot_id=sid, filter=where).to_arrow(), "+I"))


@pytest.mark.slow
def test_stream_equals_changes_and_resumes(spark: Any, warehouse: str, tmp_path: Path) -> None:
    table = history(warehouse)
    checkpoint = tmp_path / "ckpt"
    batches = run_stream(spark, table.path, checkpoint, **{"scan.mode": "from-snapshot-full", "scan.snapshot-id": "1",
                                                           "consumer-id": "s1"})
    # snapshot 1 whole; changes 1-3; the overwrite alone; changes 4-6 (the compaction adds nothing)
    assert [_rows(b) for _, b in batches] == [
        _as(table.scan(snapshot_id=1).to_arrow(), "+I"),
        _rows(table.changes(1, 3, merged=False)),
        replaced(table, 4),
        _rows(table.changes(4, 6, merged=False)),
    ]
    assert any(k == "-D" for *_, k in _rows(batches[1][1]))  # the delete of snapshot 3 streamed as -D
    # Spark tells a source that a batch is done when it plans the next one: the consumer trails by one batch
    # (batch 2 ended at snapshot 4), which keeps more snapshots, never fewer
    consumer = table.consumer("s1")
    assert consumer is not None and consumer.next_snapshot == 5
    # a restart from the checkpoint reads only what came since
    _write(table, [("a", 7, "a7"), ("b", 5, "y'")])
    more = run_stream(spark, table.path, checkpoint, **{"consumer-id": "s1"})
    assert [(i, _rows(b)) for i, b in more] == [(4, _rows(table.changes(6, 7, merged=False)))]
    assert table.consumer("s1").next_snapshot == 7  # type: ignore[union-attr]  # batch 3 (to 6) committed at restart


def test_max_snapshots_per_trigger_and_latest_full(spark: Any, warehouse: str, tmp_path: Path) -> None:
    table = history(warehouse)
    batches = run_stream(spark, table.path, tmp_path / "one", **{"scan.mode": "from-snapshot", "scan.snapshot-id": "2",
                                                                "max-snapshots-per-trigger": "1"})
    expected = [_rows(table.changes(1, 2, merged=False)), _rows(table.changes(2, 3, merged=False)),
                replaced(table, 4), [], _rows(table.changes(5, 6, merged=False))]
    assert [_rows(b) for _, b in batches] == expected
    # latest-full (the default): the latest snapshot whole, as +I
    full = run_stream(spark, table.path, tmp_path / "full")
    assert [_rows(b) for _, b in full] == [_as(table.scan().to_arrow(), "+I")]


def test_primary_key_stream_without_row_kinds(spark: Any, warehouse: str, tmp_path: Path) -> None:
    """Without read.changelog every change record is a row without its kind, as Paimon's Spark connector streams
    (tests/spark/peer/test_paimon_spark_stream.py compares the two); an overwrite is refused by name."""
    table = history(warehouse)
    batches: list[pa.Table] = []
    query = (spark.readStream.format("paimon").option("scan.mode", "from-snapshot").option("scan.snapshot-id", "1")
             .load(table.path).writeStream.foreachBatch(lambda df, _: batches.append(df.toArrow()))
             .option("checkpointLocation", str(tmp_path / "c")).trigger(availableNow=True).start())
    with pytest.raises(Exception, match="snapshot 4 is an OVERWRITE.*read.changelog"):
        query.awaitTermination(300)
    changes = table.changes(0, 3, merged=False)
    assert "-D" in changes.column("_row_kind").to_pylist() and "_row_kind" not in batches[0].column_names
    assert sorted(tuple(r.values()) for r in batches[0].to_pylist()) == \
        sorted(tuple(r.values()) for r in changes.drop_columns("_row_kind").to_pylist())
    with pytest.raises(OptionError, match="scan.snapshot-id"):
        from jobs.spark.stream_options import stream_options  # noqa: PLC0415

        stream_options({"path": table.path, "scan.mode": "from-snapshot"})


def test_consumer_keeps_unread_snapshots_from_java_expiration(spark: Any, oracle: Any, warehouse: str,
                                                              tmp_path: Path) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.ev", SCHEMA)  # an append table: streams without read.changelog too
    for i in range(1, 4):
        _write(table, [("a", i, f"v{i}")])
    checkpoint = tmp_path / "ckpt"
    run_stream(spark, table.path, checkpoint, **{"scan.mode": "from-snapshot", "scan.snapshot-id": "1",
                                                 "max-snapshots-per-trigger": "1", "consumer-id": "c1"})
    assert table.consumer("c1").next_snapshot == 3  # type: ignore[union-attr]  # batch 2 (snapshot 3) not acked
    _write(table, [("a", 4, "v4")])
    _write(table, [("a", 5, "v5")])
    # Java commits snapshot 6 keeping one snapshot: its expiration stops at the consumer's next snapshot
    oracle.write_spec({
        "warehouse": warehouse, "database": "db", "table": "ev", "if_exists": "append",
        "schema": {"fields": [{"name": "dt", "type": "STRING NOT NULL"}, {"name": "id", "type": "BIGINT NOT NULL"},
                              {"name": "v", "type": "STRING"}], "primary_keys": [], "partition_keys": [],
                   "options": {}},
        "batches": [{"rows": [["+I", "a", 6, "v6"]]}],
        "dynamic_options": {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"},
    })
    assert [s.id for s in table.snapshots()] == [3, 4, 5, 6]
    more = run_stream(spark, table.path, checkpoint, **{"consumer-id": "c1"})
    assert sorted(r for _, b in more for r in _rows(b)) == _rows(table.changes(3, 6, merged=False))
    # the restart acked snapshot 3; its one batch (4-6) is acked when the next run plans its first batch
    assert table.consumer("c1").next_snapshot == 4  # type: ignore[union-attr]
