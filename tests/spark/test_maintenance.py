"""Distributed maintenance (jobs.spark) against table_format's local maintenance on the same tables.

Compaction and rescale run on twin tables (the same writes in two warehouses): same rows, same result counts,
same commit kinds, and Java Paimon reads the distributed result. Expiration and orphan cleaning run on one table:
the distributed dry run equals the local dry run and changes nothing; the real run deletes exactly those files.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest
from maintenance_tables import batch, expected_rows, java_rows, make_table, relative, rows, tree

from jobs.spark import compact, expire_snapshots, remove_orphan_files, rescale
from jobs.spark.fan_out import fan_out
from table_format import CommitKind, TableFormatError, open_table

pytestmark = pytest.mark.spark


def _twins(tmp_path: Path, kind: str, commits: int = 6) -> tuple[str, str]:
    local_wh, spark_wh = str(tmp_path / "local"), str(tmp_path / "spark")
    make_table(local_wh, kind, commits=commits)
    make_table(spark_wh, kind, commits=commits)
    return local_wh, spark_wh


def _path(warehouse: str) -> str:
    return os.path.join(warehouse, "db.db", "t")


@pytest.mark.parametrize("full", [False, True], ids=["universal", "full"])
@pytest.mark.parametrize("kind", ["pk", "pk-dv", "append"])
def test_compaction_equals_local(spark, oracle, tmp_path, kind, full):
    local_wh, spark_wh = _twins(tmp_path, kind)
    local = open_table(_path(local_wh))
    expected = local.maintenance.compact(full=full)
    got = compact(spark, _path(spark_wh), full=full)
    assert got.snapshot_id is not None and got.compacted_buckets > 0
    assert got == expected
    table = open_table(_path(spark_wh))
    assert table.latest_snapshot().commit_kind == local.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert rows(table) == rows(local)
    if kind != "pk-dv" or full:  # deletion vectors: level-0 files stay invisible until compacted into a level
        assert rows(table) == expected_rows(kind)
    assert java_rows(oracle, spark_wh) == rows(table)


def test_compaction_of_some_partitions(spark, tmp_path):
    local_wh, spark_wh = _twins(tmp_path, "pk")
    only = [{"dt": "2024-05-02"}]
    expected = open_table(_path(local_wh)).maintenance.compact(full=True, partitions=only)
    got = compact(spark, _path(spark_wh), full=True, partitions=only)
    assert got == expected and got.compacted_buckets == 4  # the 4 buckets of one partition
    files = open_table(_path(spark_wh)).system_table("files").to_pylist()
    assert {f["level"] for f in files if f["partition"] == "[2024-05-01]"} == {0}


def test_nothing_to_compact(spark, warehouse):
    table = make_table(warehouse, "pk", commits=0)
    assert compact(spark, table.path).snapshot_id is None
    assert table.latest_snapshot() is None


def test_rescale_equals_local(spark, oracle, tmp_path):
    local_wh, spark_wh = _twins(tmp_path, "pk", commits=3)
    before = rows(open_table(_path(local_wh)))
    expected = open_table(_path(local_wh)).maintenance.rescale(bucket=8)
    got = rescale(spark, _path(spark_wh), bucket=8)
    assert got == expected and got.rewritten_partitions == 2
    table = open_table(_path(spark_wh))
    assert table.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    assert table.options["bucket"] == "8"
    assert {f["bucket"] for f in table.system_table("files").to_pylist()} == set(range(8))
    assert rows(table) == before
    assert java_rows(oracle, spark_wh) == before


def test_rescale_refuses_bad_bucket_and_changes_nothing(spark, warehouse):
    table = make_table(warehouse, "pk", commits=1)
    with pytest.raises(TableFormatError, match="bucket"):
        rescale(spark, table.path, bucket=0)
    assert open_table(table.path).options["bucket"] == "4"
    assert len(table.snapshots()) == 1


def test_a_failing_rescale_commits_nothing_and_deletes_what_it_wrote(spark, warehouse):
    table = make_table(warehouse, "pk", commits=2)
    victim = next(f["file_path"] for f in table.system_table("files").to_pylist() if f["partition"] == "[2024-05-01]")
    Path(victim).write_bytes(b"PAR1 broken PAR1")
    before_files, before_snapshots = tree(table.path), len(table.snapshots())
    with pytest.raises(TableFormatError) as failure:
        rescale(spark, table.path, bucket=3)
    assert any("dt=2024-05-01" in note for note in getattr(failure.value, "__notes__", []))
    assert len(open_table(table.path).snapshots()) == before_snapshots
    assert tree(table.path) == before_files | {"schema/schema-1"}  # like the local rescale: the schema stays


def test_expire_snapshots_equals_local(spark, warehouse):
    table = make_table(warehouse, "pk", commits=8)
    compact(spark, table.path, full=True)  # so that expiring deletes data files, not only metadata
    files_before = tree(table.path)
    local_dry = table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=True)
    dry = expire_snapshots(spark, table.path, retain_min=1, older_than=dt.timedelta(0), dry_run=True)
    assert dry == local_dry and len(dry.expired_snapshots) == 8
    assert any("/bucket-" in p for p in dry.deleted_files)
    assert tree(table.path) == files_before  # a dry run changes nothing

    real = expire_snapshots(spark, table.path, retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    assert (real.expired_snapshots, real.deleted_files) == (dry.expired_snapshots, dry.deleted_files)
    gone = {os.path.relpath(p, table.path) for p in real.deleted_files}
    assert tree(table.path) == (files_before - gone) | {"snapshot/EARLIEST"}
    assert [s.id for s in table.snapshots()] == [9]
    assert rows(table) == rows(open_table(table.path))


def test_remove_orphan_files_equals_local(spark, warehouse):
    table = make_table(warehouse, "pk", commits=3)
    strays = [
        os.path.join(table.path, "dt=2024-05-01", "bucket-0", "data-stray.parquet"),
        os.path.join(table.path, "manifest", "manifest-stray"),
        os.path.join(table.path, "snapshot", ".snapshot-9.stray.tmp"),
    ]
    old = (dt.datetime.now() - dt.timedelta(days=2)).timestamp()
    for p in strays:
        Path(p).write_bytes(b"x" * 10)
        os.utime(p, (old, old))
    files_before = tree(table.path)
    assert sorted(remove_orphan_files(spark, table.path).orphan_files) == sorted(strays)  # default: a day old
    local_dry = table.maintenance.remove_orphan_files(older_than=dt.timedelta(hours=1), dry_run=True)
    dry = remove_orphan_files(spark, table.path, older_than=dt.timedelta(hours=1), dry_run=True)
    assert relative(table, dry) == relative(table, local_dry)
    assert sorted(dry.orphan_files) == sorted(strays)
    assert tree(table.path) == files_before

    real = remove_orphan_files(spark, table.path, older_than=dt.timedelta(hours=1), dry_run=False)
    assert sorted(real.deleted_files) == sorted(strays) and real.bytes_freed == 30
    assert tree(table.path) == files_before - {os.path.relpath(p, table.path) for p in strays}
    assert rows(table) == rows(open_table(table.path))


def test_orphans_after_a_failed_write_are_found_by_the_executors(spark, warehouse):
    table = make_table(warehouse, "append", commits=2)
    writer = table.new_write()
    writer.write(batch(99))
    written = writer.prepare_commit()  # files written, never committed: orphans
    paths = {table.store.data_file_path(m.partition, m.bucket, f.file_name) for m in written for f in m.new_files}
    time.sleep(0.05)  # older than "now" is strict, in milliseconds: a file of this very millisecond is kept
    result = remove_orphan_files(spark, table.path, older_than=dt.timedelta(0), dry_run=False)
    assert set(result.deleted_files) == paths
    assert not any(os.path.exists(p) for p in paths)


def test_a_failing_task_fails_the_job_and_commits_nothing(spark, warehouse):
    table = make_table(warehouse, "pk", commits=3)
    files = table.system_table("files").to_pylist()
    victim_path = next(f["file_path"] for f in files if f["bucket"] == 1 and f["partition"] == "[2024-05-02]")
    Path(victim_path).write_bytes(b"PAR1 this is not a parquet file PAR1")
    before_files, before_snapshots = tree(table.path), len(table.snapshots())
    with pytest.raises(TableFormatError) as failure:
        compact(spark, table.path, full=True)
    assert any("bucket 1 of dt=2024-05-02" in note for note in getattr(failure.value, "__notes__", []))
    assert len(open_table(table.path).snapshots()) == before_snapshots
    assert tree(table.path) == before_files  # the other tasks' new files were deleted


def test_tasks_use_one_core_worth_of_threads(spark):
    """Each task sizes pyarrow's pool to its cores and the executors' polars pool is spark.task.cpus (1), so
    local[1] does not quietly use every core and local[2]'s two tasks do not oversubscribe each other."""
    def thread_pools(_: int) -> tuple[int, int]:  # nested: pickled by value, runs in the executor's Python
        import polars as pl  # noqa: PLC0415 - the executor's own polars
        import pyarrow as pa  # noqa: PLC0415

        return pa.cpu_count(), pl.thread_pool_size()

    result = fan_out(spark, [0, 1, 2], thread_pools, job="thread pools")
    assert not result.failures
    assert set(result.outcomes) == {(1, 1)}
    assert spark.conf.get("spark.executorEnv.POLARS_MAX_THREADS") == "1"
