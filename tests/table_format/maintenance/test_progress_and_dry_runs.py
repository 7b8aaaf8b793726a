"""The `progress` callback of the maintenance entry points, and dry runs of delete_tag and rollback_to."""

from __future__ import annotations

import datetime as dt
import os
import time

import pyarrow as pa
import pytest
from maintenance_helpers import tree_with_content

from table_format import FileSystemCatalog, ProgressEvent, Table, write_table


def _pk_table(warehouse: str, writes: int = 4) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
    table = catalog.create_table("db.t", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "2", "write-only": "true"})
    for i in range(writes):
        write_table(table, pa.table({"id": [i, i + 100], "dt": ["a", "b"], "v": [float(i), 1.0]}, schema=schema))
    return table


def _check_monotonic(events: list[ProgressEvent], operation: str) -> None:
    assert events, "no progress event"
    assert {e.operation for e in events} == {operation}
    assert events[0].files_done == 0
    assert events[-1].files_done == events[-1].files_total
    for before, after in zip(events, events[1:], strict=False):
        assert after.files_done >= before.files_done
        assert after.bytes_done >= before.bytes_done
        assert after.files_total == before.files_total


def test_compact_reports_every_bucket(warehouse: str) -> None:
    table = _pk_table(warehouse)
    live = table.system_table("files")
    events: list[ProgressEvent] = []
    result = table.maintenance.compact(full=True, progress=events.append)
    _check_monotonic(events, "compact")
    assert events[-1].files_total == live.num_rows
    assert events[-1].bytes_total == events[-1].bytes_done == sum(live.column("file_size_in_bytes").to_pylist())
    assert len(events) == 1 + result.compacted_buckets


def test_rescale_reports_every_partition(warehouse: str) -> None:
    table = _pk_table(warehouse, writes=2)
    live = table.system_table("files")
    events: list[ProgressEvent] = []
    table.maintenance.rescale(bucket=3, progress=events.append)
    _check_monotonic(events, "rescale")
    assert events[-1].files_total == live.num_rows
    assert events[-1].bytes_done == sum(live.column("file_size_in_bytes").to_pylist())
    assert len(events) == 3  # planned + 2 partitions


@pytest.mark.parametrize("dry_run", [True, False])
def test_expire_and_orphans_report_files(warehouse: str, dry_run: bool) -> None:
    table = _pk_table(warehouse)
    table.maintenance.compact(full=True)
    stray = os.path.join(table.path, "dt=a", "bucket-0", "stray.parquet")
    with open(stray, "wb") as f:
        f.write(b"x" * 1000)
    old = time.time() - 3 * 86400
    os.utime(stray, (old, old))

    events: list[ProgressEvent] = []
    expired = table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=dry_run,
                                                 progress=events.append)
    _check_monotonic(events, "expire_snapshots")
    assert events[-1].bytes_total is None
    assert events[-1].files_total == len(expired.deleted_files)

    events = []
    orphans = table.maintenance.remove_orphan_files(dry_run=dry_run, progress=events.append)
    _check_monotonic(events, "remove_orphan_files")
    assert stray in orphans.orphan_files
    assert events[-1].bytes_total == events[-1].bytes_done == orphans.bytes_freed >= 1000


def test_progress_callback_that_raises_aborts_compaction(warehouse: str) -> None:
    table = _pk_table(warehouse)
    before = table.latest_snapshot().id

    def stop(event: ProgressEvent) -> None:
        if event.files_done:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        table.maintenance.compact(full=True, progress=stop)
    assert table.latest_snapshot().id == before


def test_delete_tag_and_rollback_dry_runs_change_nothing(warehouse: str) -> None:
    table = _pk_table(warehouse)
    table.create_tag("t1", snapshot_id=1)
    table.create_tag("t3", snapshot_id=3)
    table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    before = tree_with_content(table.path)

    dry = table.delete_tag("t1", dry_run=True)
    assert dry.deleted_files and tree_with_content(table.path) == before
    real = table.delete_tag("t1")
    assert sorted(real.deleted_files) == sorted(dry.deleted_files)

    before = tree_with_content(table.path)
    dry_rb = table.rollback_to(tag="t3", dry_run=True)
    assert dry_rb.removed_snapshots == (4,) and tree_with_content(table.path) == before
    real_rb = table.rollback_to(tag="t3")
    assert real_rb.removed_snapshots == dry_rb.removed_snapshots
    assert sorted(real_rb.deleted_files) == sorted(dry_rb.deleted_files)
    assert table.latest_snapshot().id == 3
