"""Commits: consecutive snapshots, LATEST/EARLIEST hints (and distrust of bad ones), manifest merging over many
commits, concurrent committers (processes and threads), conflicts, and failures that leave no trace."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import (
    CommitConflictError,
    CommitKind,
    CommitMessage,
    FileSystemCatalog,
    SchemaError,
    Table,
    TableFormatError,
    write_table,
)
from table_format.write.file_writer import DataFileWriter

SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
PSCHEMA = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("v", pa.string())])

_n = [0]


def new_table(warehouse: str, schema: pa.Schema = SCHEMA, name: str | None = None, **kw: Any) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    _n[0] += 1
    return catalog.create_table(f"db.{name or f'c{_n[0]}'}", schema, **kw)


def rows(ids: list[int], v: str = "x") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids]}, schema=SCHEMA)


def tree(path: str) -> dict[str, int]:
    """Every file below path (relative) with its size; hidden temp files included."""
    out = {}
    for dirpath, _, names in os.walk(path):
        for n in names:
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, path)] = os.path.getsize(full)
    return out


def hint(table: Table, name: str) -> str:
    with open(os.path.join(table.path, "snapshot", name)) as f:
        return f.read().strip()


def set_hint(table: Table, name: str, text: str) -> None:
    with open(os.path.join(table.path, "snapshot", name), "w") as f:
        f.write(text)


# ---- snapshots and hints -----------------------------------------------------------------------------------


@pytest.mark.parametrize("opts", [{}, {"bucket": "2", "bucket-key": "id"}])
def test_snapshots_are_consecutive_and_hinted(warehouse: str, opts: dict[str, str]) -> None:
    table = new_table(warehouse, options=opts)
    for i in range(5):
        assert write_table(table, rows([i])) == i + 1
        assert hint(table, "LATEST") == str(i + 1)
        assert hint(table, "EARLIEST") == "1"
    snap_dir = os.path.join(table.path, "snapshot")
    assert sorted(os.listdir(snap_dir)) == sorted(["EARLIEST", "LATEST"] + [f"snapshot-{i}" for i in range(1, 6)])
    snaps = table.snapshots()
    assert [s.id for s in snaps] == [1, 2, 3, 4, 5]
    assert [s.total_record_count for s in snaps] == [1, 2, 3, 4, 5]
    assert all(s.delta_record_count == 1 for s in snaps)
    assert all(s.schema_id == 0 for s in snaps)
    times = [s.time_millis for s in snaps]
    assert times == sorted(times)
    assert table.latest_snapshot().id == 5
    assert table.store.snapshots.earliest_id() == 1


def test_commit_user_is_recorded(warehouse: str) -> None:
    table = new_table(warehouse)
    w = table.new_write()
    w.write(rows([1]))
    table.commit(w.prepare_commit(), commit_user="alice")
    assert table.latest_snapshot().commit_user == "alice"
    assert table.latest_snapshot().commit_kind == CommitKind.APPEND


@pytest.mark.parametrize("bad", ["1", "2", "0", "-3", "abc", "", "999", "3\n4", "\x00\xff"])
def test_stale_or_garbage_latest_hint_is_not_trusted(warehouse: str, bad: str) -> None:
    table = new_table(warehouse)
    for i in range(3):
        write_table(table, rows([i]))
    set_hint(table, "LATEST", bad)
    fresh = FileSystemCatalog(warehouse).load_table(table.identifier)
    assert fresh.latest_snapshot().id == 3
    assert sorted(r["id"] for r in fresh.scan().to_arrow().to_pylist()) == [0, 1, 2]
    # a commit goes on from the real latest and repairs the hint
    assert write_table(fresh, rows([3])) == 4
    assert hint(fresh, "LATEST") == "4"
    assert sorted(r["id"] for r in fresh.scan().to_arrow().to_pylist()) == [0, 1, 2, 3]


def test_missing_hints_are_not_needed(warehouse: str) -> None:
    table = new_table(warehouse)
    for i in range(3):
        write_table(table, rows([i]))
    os.remove(os.path.join(table.path, "snapshot", "LATEST"))
    os.remove(os.path.join(table.path, "snapshot", "EARLIEST"))
    assert table.latest_snapshot().id == 3
    assert table.store.snapshots.earliest_id() == 1
    assert write_table(table, rows([3])) == 4
    assert hint(table, "LATEST") == "4"
    assert table.scan().to_arrow().num_rows == 4


@pytest.mark.parametrize("bad", ["2", "3", "abc", "0", "99"])
def test_bad_earliest_hint_is_not_trusted(warehouse: str, bad: str) -> None:
    table = new_table(warehouse)
    for i in range(3):
        write_table(table, rows([i]))
    set_hint(table, "EARLIEST", bad)
    assert table.store.snapshots.earliest_id() == 1
    # after an (external) expiry of snapshot 1 the earliest is 2 whatever the hint says
    os.remove(os.path.join(table.path, "snapshot", "snapshot-1"))
    set_hint(table, "EARLIEST", "1")
    assert table.store.snapshots.earliest_id() == 2


def test_latest_hint_ahead_of_a_gap(warehouse: str) -> None:
    """LATEST pointing at an existing snapshot that is not the last one is ignored."""
    table = new_table(warehouse)
    for i in range(4):
        write_table(table, rows([i]))
    set_hint(table, "LATEST", "2")
    assert table.latest_snapshot().id == 4


# ---- manifest merging ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pk", [False, True])
def test_many_commits_keep_base_manifest_list_bounded(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = {"options": {"manifest.merge-min-count": "3"}, "partition_keys": ["dt"]}
    if pk:
        kw["primary_keys"] = ["dt", "id"]
        kw["options"]["bucket"] = "2"
        kw["options"]["write-only"] = "true"  # one snapshot per write (no automatic compaction)
    table = new_table(warehouse, PSCHEMA, **kw)
    expected: dict[tuple[str, int], str] = {}
    manifests = table.store.manifests
    for i in range(34):
        dt = f"d{i % 3}"
        ids = [i, i + 1] if pk else [i]
        data = pa.table({"dt": [dt] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"c{i}"] * len(ids)},
                        schema=PSCHEMA)
        if i % 10 == 9:
            write_table(table, data, mode="overwrite", overwrite_partitions=[{"dt": dt}])
            expected = {k: v for k, v in expected.items() if k[0] != dt}
        else:
            write_table(table, data)
        for r in data.to_pylist():
            if pk or (r["dt"], r["id"]) not in expected:
                expected[(r["dt"], r["id"])] = r["v"]
        snap = table.latest_snapshot()
        base = manifests.read_manifest_list(snap.base_manifest_list)
        delta = manifests.read_manifest_list(snap.delta_manifest_list)
        assert len(base) <= 3, (i, [m.file_name for m in base])
        assert len(delta) >= 1
    assert len(table.snapshots()) == 34
    got = {(r["dt"], r["id"]): r["v"] for r in table.scan().to_arrow().to_pylist()}
    assert got == expected
    # every snapshot is still readable after manifests were merged
    fresh = FileSystemCatalog(warehouse).load_table(table.identifier)
    for sid in (1, 10, 20, 34):
        assert fresh.scan(snapshot_id=sid).to_arrow().num_rows > 0
    files = table.system_table("files")
    assert files.num_rows == sum(len(s.files) for s in table.scan().plan())


def test_manifest_merge_default_still_reads_right(warehouse: str) -> None:
    table = new_table(warehouse)
    for i in range(35):
        write_table(table, rows([i]))
    snap = table.latest_snapshot()
    base = table.store.manifests.read_manifest_list(snap.base_manifest_list)
    assert len(base) <= 30  # manifest.merge-min-count default
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == list(range(35))


# ---- concurrent committers -------------------------------------------------------------------------------


def _process_writer(warehouse: str, identifier: str, worker: int, n: int) -> None:
    table = FileSystemCatalog(warehouse).load_table(identifier)
    for i in range(n):
        write_table(table, rows([worker * 1000 + i], v=f"w{worker}-"))


def test_concurrent_processes(warehouse: str) -> None:
    table = new_table(warehouse)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_process_writer, args=(warehouse, table.identifier, w, 10)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    snaps = table.snapshots()
    assert [s.id for s in snaps] == list(range(1, 41))
    assert table.latest_snapshot().id == 40
    assert hint(table, "LATEST") == "40"
    assert snaps[-1].total_record_count == 40
    got = sorted(r["id"] for r in table.scan().to_arrow().to_pylist())
    assert got == sorted(w * 1000 + i for w in range(4) for i in range(10))
    # no leftovers of lost attempts: every manifest file is referenced by some snapshot
    referenced = set()
    manifests = table.store.manifests
    for s in snaps:
        referenced |= {s.base_manifest_list, s.delta_manifest_list}
        referenced |= {m.file_name for m in manifests.data_manifests(s)}
    on_disk = set(os.listdir(os.path.join(table.path, "manifest")))
    assert on_disk == referenced
    assert not [n for n in os.listdir(os.path.join(table.path, "snapshot")) if n.startswith(".")]


@pytest.mark.parametrize("shared", [False, True])
def test_concurrent_threads(warehouse: str, shared: bool) -> None:
    table = new_table(warehouse, options={"bucket": "2", "bucket-key": "id"})
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(worker: int) -> None:
        try:
            t = table if shared else FileSystemCatalog(warehouse).load_table(table.identifier)
            barrier.wait()
            for i in range(10):
                write_table(t, rows([worker * 1000 + i]))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert [s.id for s in table.snapshots()] == list(range(1, 41))
    got = sorted(r["id"] for r in table.scan().to_arrow().to_pylist())
    assert got == sorted(w * 1000 + i for w in range(4) for i in range(10))


def test_concurrent_pk_writers_all_rows_present(warehouse: str) -> None:
    table = new_table(warehouse, primary_keys=["id"], options={"bucket": "3", "write-only": "true"})
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            t = FileSystemCatalog(warehouse).load_table(table.identifier)
            for i in range(8):
                write_table(t, rows([worker * 100 + i]))
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert len(table.snapshots()) == 24
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == sorted(
        w * 100 + i for w in range(3) for i in range(8)
    )


# ---- conflicts -------------------------------------------------------------------------------------------


def _only_message(table: Table, data: pa.Table) -> CommitMessage:
    w = table.new_write()
    w.write(data)
    (msg,) = w.prepare_commit()
    return msg


def test_compact_of_removed_file_conflicts(warehouse: str) -> None:
    table = new_table(warehouse, primary_keys=["id"], options={"bucket": "1"})
    write_table(table, rows([1, 2]))
    (entry,) = table.store.manifests.live_files(table.latest_snapshot())
    # another writer overwrites the table: the file is gone
    write_table(table, rows([3]), mode="overwrite")
    before = tree(table.path)
    replacement = _only_message(table, rows([1, 2], v="compacted"))
    msg = CommitMessage(
        partition=entry.partition,
        bucket=entry.bucket,
        total_buckets=entry.total_buckets,
        compact_before=(entry.file,),
        compact_after=replacement.new_files,
    )
    with pytest.raises(CommitConflictError, match=entry.file.file_name) as e:
        table.commit([msg])
    assert table.identifier in str(e.value)
    assert isinstance(e.value, TableFormatError)
    assert len(table.snapshots()) == 2
    after = tree(table.path)
    # nothing new in manifest/ or snapshot/ (the replacement data file was written before the commit)
    new = {p for p in after if p not in before}
    assert all(p.startswith("bucket-") for p in new), new
    assert [r["id"] for r in table.scan().to_arrow().to_pylist()] == [3]


def test_compacting_a_file_twice_conflicts(warehouse: str) -> None:
    table = new_table(warehouse, options={"bucket": "1", "bucket-key": "id"})
    write_table(table, rows([1, 2]))
    (entry,) = table.store.manifests.live_files(table.latest_snapshot())

    def compact_msg() -> CommitMessage:
        after = _only_message(table, rows([1, 2]))
        return CommitMessage(entry.partition, entry.bucket, entry.total_buckets, compact_before=(entry.file,),
                             compact_after=tuple(replace(f, level=1) for f in after.new_files))

    first, second = compact_msg(), compact_msg()
    assert table.commit([first]) == 2
    assert table.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2]
    manifest_files = set(os.listdir(os.path.join(table.path, "manifest")))
    with pytest.raises(CommitConflictError, match="already removed"):
        table.commit([second])
    assert len(table.snapshots()) == 2
    assert set(os.listdir(os.path.join(table.path, "manifest"))) == manifest_files
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2]


def test_concurrent_overwrites_do_not_lose_or_duplicate(warehouse: str) -> None:
    """Two overwrites prepared on the same snapshot: each replaces whatever is live when it commits."""
    table = new_table(warehouse, PSCHEMA, partition_keys=["dt"])
    write_table(table, pa.table({"dt": ["a", "b"], "id": pa.array([1, 2], pa.int64()), "v": ["1", "2"]}))
    w1 = table.new_write(overwrite=True)
    w1.write(pa.table({"dt": ["a"], "id": pa.array([10], pa.int64()), "v": ["w1"]}))
    w2 = table.new_write(overwrite=True)
    w2.write(pa.table({"dt": ["a"], "id": pa.array([20], pa.int64()), "v": ["w2"]}))
    m1, m2 = w1.prepare_commit(), w2.prepare_commit()
    assert table.commit(m1, overwrite_partitions=[{"dt": "a"}]) == 2
    assert table.commit(m2, overwrite_partitions=[{"dt": "a"}]) == 3
    got = sorted((r["dt"], r["id"]) for r in table.scan().to_arrow().to_pylist())
    assert got == [("a", 20), ("b", 2)]


@pytest.mark.parametrize(
    "kw",
    [
        pytest.param({"options": {"bucket": "2", "bucket-key": "id"}}, id="append-fixed"),
        pytest.param({"options": {"bucket": "2"}, "primary_keys": ["id"]}, id="pk"),
        pytest.param({}, id="append-unaware"),
    ],
)
def test_committing_the_same_messages_twice_is_refused(warehouse: str, kw: dict[str, Any]) -> None:
    """Re-committing files that are already live must not corrupt the table."""
    table = new_table(warehouse, **kw)
    w = table.new_write()
    w.write(rows([1, 2, 3]))
    messages = w.prepare_commit()
    assert table.commit(messages) == 1
    with pytest.raises(CommitConflictError, match="already added"):
        table.commit(messages)
    assert len(table.snapshots()) == 1
    # the table stays readable and holds each row once
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2, 3]


# ---- failures leave no trace -------------------------------------------------------------------------------


def _reader_with_failure(schema: pa.Schema, good: list[pa.RecordBatch], exc: BaseException) -> pa.RecordBatchReader:
    def gen() -> Iterator[pa.RecordBatch]:
        yield from good
        raise exc

    return pa.RecordBatchReader.from_batches(schema, gen())


@pytest.mark.parametrize("pk", [False, True])
def test_raising_data_source_leaves_nothing(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = {"primary_keys": ["id"], "options": {"bucket": "2"}} if pk else {}
    table = new_table(warehouse, **kw)
    write_table(table, rows([0]))
    before = tree(table.path)
    good = rows(list(range(1, 100))).to_batches()
    with pytest.raises(Exception, match="source broke"):
        write_table(table, _reader_with_failure(SCHEMA, good, RuntimeError("source broke")))
    assert tree(table.path) == before
    assert len(table.snapshots()) == 1


@pytest.mark.parametrize("pk", [False, True])
def test_bad_data_in_later_batch_leaves_nothing(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = {"primary_keys": ["id"], "options": {"bucket": "2"}} if pk else {}
    table = new_table(warehouse, **kw)
    write_table(table, rows([0]))
    before = tree(table.path)
    nullable = pa.schema([("id", pa.int64()), ("v", pa.string())])
    good = [pa.record_batch({"id": pa.array(range(1, 50), pa.int64()), "v": ["a"] * 49}, schema=nullable)]
    bad = pa.record_batch({"id": pa.array([None, 5], pa.int64()), "v": ["b", "c"]}, schema=nullable)
    reader = pa.RecordBatchReader.from_batches(nullable, iter(good + [bad]))
    with pytest.raises(SchemaError, match="'id'") as e:
        write_table(table, reader)
    assert table.identifier in str(e.value)
    assert tree(table.path) == before
    assert len(table.snapshots()) == 1


def test_a_failed_bucket_leaves_no_file_of_the_buckets_written_beside_it(warehouse: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Buckets are written in parallel: when one fails, the write waits for the others before it removes what they
    wrote (a bucket still writing when the error came used to leave its file behind)."""
    table = new_table(warehouse, primary_keys=["id"], options={"bucket": "4"})
    write_table(table, rows([0]))
    before = tree(table.path)
    real_write = DataFileWriter.write

    def slow_or_failing(self: DataFileWriter, data: pa.Table, **kw: Any) -> Any:
        if self.bucket == 0:
            raise OSError("disk full")
        time.sleep(0.3)  # still writing when bucket 0 fails
        return real_write(self, data, **kw)

    monkeypatch.setattr(DataFileWriter, "write", slow_or_failing)
    with pytest.raises(OSError, match="disk full"):
        write_table(table, rows(list(range(1, 200))))
    monkeypatch.undo()
    time.sleep(0.5)  # anything still running in the background would have written by now
    assert tree(table.path) == before
    assert len(table.snapshots()) == 1


def test_two_phase_writer_failure_then_abort(warehouse: str) -> None:
    table = new_table(warehouse, primary_keys=["id"], options={"bucket": "2"})
    before = tree(table.path)
    w = table.new_write()
    w.write(rows(list(range(20))))
    w.prepare_commit()  # files written, not committed
    with pytest.raises(SchemaError):
        w.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["x"], "extra": [1]}))
    w.abort()
    assert tree(table.path) == before
    assert table.snapshots() == []


def test_failed_partition_overwrite_removes_written_files(warehouse: str) -> None:
    table = new_table(warehouse, PSCHEMA, partition_keys=["dt"])
    write_table(table, pa.table({"dt": ["a"], "id": pa.array([1], pa.int64()), "v": ["1"]}))
    before = tree(table.path)
    data = pa.table({"dt": ["a", "b"], "id": pa.array([2, 3], pa.int64()), "v": ["2", "3"]})
    with pytest.raises(SchemaError, match="outside overwrite_partitions"):
        write_table(table, data, mode="overwrite", overwrite_partitions=[{"dt": "a"}])
    after = tree(table.path)
    assert set(after) == set(before) or all(not p.endswith(".parquet") for p in set(after) - set(before))
    assert {p for p in after if p.endswith(".parquet")} == {p for p in before if p.endswith(".parquet")}
    assert len(table.snapshots()) == 1


# ---- commit kinds ----------------------------------------------------------------------------------------


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.sampled_from(["append", "overwrite", "empty"]), min_size=1, max_size=8))
def test_snapshot_record_counts_track_operations(warehouse: str, ops: list[str]) -> None:
    table = new_table(warehouse)
    live = 0
    expected_id = 0
    for i, op in enumerate(ops):
        if op == "append":
            sid = write_table(table, rows([i, i + 100]))
            live += 2
        elif op == "overwrite":
            sid = write_table(table, rows([i]), mode="overwrite")
            live = 1
        else:
            sid = write_table(table, rows([]))
            assert sid is None
            continue
        expected_id += 1
        assert sid == expected_id
        snap = table.latest_snapshot()
        assert snap.total_record_count == live
        assert snap.commit_kind == (CommitKind.APPEND if op == "append" else CommitKind.OVERWRITE)
        assert table.scan().to_arrow().num_rows == live
