"""Compaction, changelog producers, deletion vectors and rescale, checked against real Java Paimon 0.9.

After every operation Java reads exactly the rows we read (also at every earlier snapshot), the LSM
invariants hold (level >= 1 files of a bucket do not overlap) and the merged view never changes by
compaction.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, Table, write_table
from table_format.meta.snapshot import CommitKind
from table_format.row.binary_row import decode_row
from tests.interop.oracle_values import oracle_lines, ours_as_oracle


@pytest.fixture
def oracle(oracle_each):
    """Every Java test of this module runs against Java Paimon 0.9 and 2.0."""
    return oracle_each


SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.string()), ("n", pa.int64())])


def make(warehouse: str, name: str, **options: str) -> Table:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    return cat.create_table(f"db.{name}", SCHEMA, primary_keys=["p", "id"], partition_keys=["p"],
                            options={"bucket": "2", **options})


def rows(ids: list[int], tag: str, kinds: list[str] | None = None, p: str = "a") -> pa.Table:
    data: dict[str, Any] = {"id": ids, "p": [p] * len(ids), "v": [f"{tag}{i}" for i in ids], "n": ids}
    t = pa.table(data, schema=SCHEMA)
    return t.append_column("_row_kind", pa.array(kinds)) if kinds else t


def ours(table: Table, snapshot_id: int | None = None) -> list[str]:
    return ours_as_oracle(table.scan(snapshot_id=snapshot_id).to_arrow(), list(table.schema.fields))


def java(oracle: Any, warehouse: str, name: str, snapshot_id: int | None = None) -> list[str]:
    args = ["read", warehouse, "db", name] + (["--snapshot", str(snapshot_id)] if snapshot_id else [])
    return oracle_lines([json.loads(line) for line in oracle.call(args).splitlines() if line])


def assert_java_agrees_everywhere(oracle: Any, warehouse: str, table: Table) -> None:
    name = table.identifier.split(".")[1]
    for s in table.snapshots():
        assert java(oracle, warehouse, name, s.id) == ours(table, s.id), f"snapshot {s.id} ({s.commit_kind})"


def assert_lsm_invariants(table: Table) -> None:
    store = table.store
    live = store.manifests.live_files(store.snapshots.latest())
    by_level: dict[tuple[bytes, int, int], list[tuple[Any, Any]]] = {}
    for e in live:
        if e.file.level > 0:
            by_level.setdefault((e.partition, e.bucket, e.file.level), []).append(
                (decode_row(e.file.min_key, store.key_types), decode_row(e.file.max_key, store.key_types)))
    for ranges in by_level.values():
        ranges.sort()
        assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:], strict=False)), ranges


def test_minor_and_full_compaction_read_identically_in_java(oracle: Any, warehouse: str) -> None:
    t = make(warehouse, "t", **{"write-only": "true"})
    for i in range(7):
        ids = list(range(i, i + 10))
        write_table(t, rows(ids, f"w{i}_", ["+I"] * 9 + ["-D"]))
    expected = ours(t)
    minor = t.maintenance.compact()
    assert minor.snapshot_id is not None and minor.compacted_buckets > 0
    assert t.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert ours(t) == expected
    write_table(t, rows([100, 3], "late"))
    full = t.maintenance.compact(full=True)
    assert full.snapshot_id is not None
    levels = {f["level"] for f in t.system_table("files").to_pylist()}
    assert levels == {5}
    assert_lsm_invariants(t)
    assert_java_agrees_everywhere(oracle, warehouse, t)
    # a second full compaction of buckets that hold one max-level run is a no-op, as in Paimon 0.9
    assert t.maintenance.compact(full=True).snapshot_id is None


def test_compaction_upgrades_files_without_rewriting(warehouse: str) -> None:
    t = make(warehouse, "t", **{"write-only": "true", "target-file-size": "1 kb", "bucket": "1"})
    write_table(t, rows(list(range(200)), "a"))  # one large file, keys 0..199
    before = {f["file_path"] for f in t.system_table("files").to_pylist()}
    r = t.maintenance.compact(full=True)
    after = t.system_table("files").to_pylist()
    assert r.upgraded_files >= 1
    assert {f["file_path"] for f in after} & before  # the same file, now at the max level
    assert {f["level"] for f in after} == {5}


def test_java_continues_after_our_compaction_and_we_after_javas(oracle: Any, warehouse: str) -> None:
    t = make(warehouse, "t")
    for i in range(6):  # the 5th write triggers an automatic compaction (num-sorted-run.compaction-trigger)
        write_table(t, rows([i, i + 1, 50], f"w{i}_"))
    assert any(s.commit_kind == CommitKind.COMPACT for s in t.snapshots())
    oracle.write_spec({"warehouse": warehouse, "database": "db", "table": "t", "if_exists": "append",
                       "batches": [[["+U", 1, "a", "java1", 1], ["-D", 50, "a", "x", 50]]], "compact": True})
    t = FileSystemCatalog(warehouse).load_table("db.t")
    assert ours(t) == java(oracle, warehouse, "t")
    write_table(t, rows([1, 77], "ours"))
    t.maintenance.compact(full=True)
    assert_lsm_invariants(t)
    assert_java_agrees_everywhere(oracle, warehouse, t)


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update"])
def test_deletion_vectors_written_by_compaction(oracle: Any, warehouse: str, engine: str) -> None:
    t = make(warehouse, "t", **{"deletion-vectors.enabled": "true", "merge-engine": engine})
    write_table(t, rows(list(range(20)), "v"))
    t.maintenance.compact(full=True)
    for step in range(3):
        kinds = ["+U", "-D", "+U", "+I"] if engine == "deduplicate" else ["+U"] * 4
        write_table(t, rows([1, 5, 7 + step, 30 + step], f"s{step}_", kinds))
    index = t.store.manifests.read_index_manifest(t.latest_snapshot().index_manifest)
    assert any(e.index_file.index_type == "DELETION_VECTORS" for e in index)
    assert {f["level"] for f in t.system_table("files").to_pylist()} - {0}  # data reached levels >= 1
    assert_java_agrees_everywhere(oracle, warehouse, t)


def test_we_compact_a_java_table_with_live_deletion_vectors(oracle: Any, warehouse: str) -> None:
    spec = {"warehouse": warehouse, "database": "db", "table": "t", "if_exists": "drop",
            "schema": {"fields": [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}],
                       "primary_keys": ["id"], "options": {"bucket": "1", "deletion-vectors.enabled": "true"}},
            "batches": [[["+I", i, f"v{i}"] for i in range(10)], [["+U", 3, "x"], ["-D", 4, "y"]],
                        [["+U", 5, "z"]]]}
    oracle.write_spec(spec)
    t = FileSystemCatalog(warehouse).load_table("db.t")
    assert ours(t) == java(oracle, warehouse, "t")
    write_table(t, pa.table({"id": pa.array([3, 11], pa.int32()), "v": ["ours3", "ours11"]}))
    assert ours(t) == java(oracle, warehouse, "t")
    t.maintenance.compact(full=True)
    assert_java_agrees_everywhere(oracle, warehouse, t)


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_changelog_producers_match_javas_audit_log_per_snapshot(oracle: Any, warehouse: str, producer: str) -> None:
    name = producer.replace("-", "_")
    t = make(warehouse, name, **{"changelog-producer": producer, "bucket": "1"})
    write_table(t, rows([1, 2, 3], "a"))
    if producer == "full-compaction":
        t.maintenance.compact(full=True)
    write_table(t, rows([2, 3, 4], "b", ["+U", "-D", "+I"]))
    if producer == "full-compaction":
        t.maintenance.compact(full=True)
    assert any(s.changelog_manifest_list for s in t.snapshots())
    for s in t.snapshots():
        got = t.changes(s.id - 1, s.id)
        mine = sorted((r["_row_kind"], r["id"], r["v"]) for r in got.to_pylist())
        out = oracle.call(["read", warehouse, "db", f"{name}$audit_log", "--option",
                           f"incremental-between={s.id - 1},{s.id}"])
        theirs = sorted((r["rowkind"], r["id"], r["v"]) for r in map(json.loads, out.splitlines()) if r)
        assert mine == theirs, f"snapshot {s.id} {s.commit_kind}"


def test_rescale_then_both_writers_continue(oracle: Any, warehouse: str) -> None:
    t = make(warehouse, "t")
    write_table(t, rows(list(range(30)), "a"))
    write_table(t, rows(list(range(10)), "b", p="b"))
    r = t.maintenance.rescale(bucket=3, partitions=[{"p": "a"}])
    assert r.snapshot_id is not None and r.rewritten_partitions == 1 and r.rewritten_rows == 30
    assert t.options["bucket"] == "3"
    assert t.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    buckets = {(f["partition"], f["bucket"]) for f in t.system_table("files").to_pylist()}
    assert {b for p, b in buckets if p == "[a]"} == {0, 1, 2}
    assert ours(t) == java(oracle, warehouse, "t")
    write_table(t, rows([5, 99], "c"))  # partition a now has 3 buckets, like the option
    with pytest.raises(Exception, match="bucket"):
        write_table(t, rows([1], "c", p="b"))  # partition b still has 2: rescale it first
    t.maintenance.rescale(bucket=3)
    oracle.write_spec({"warehouse": warehouse, "database": "db", "table": "t", "if_exists": "append",
                       "batches": [[["+U", 5, "a", "java5", 5], ["+I", 7, "b", "java7", 7]]]})
    t = FileSystemCatalog(warehouse).load_table("db.t")
    assert ours(t) == java(oracle, warehouse, "t")
    assert len([r for r in ours(t) if '"id": 5, "n": 5, "p": "a"' in r]) == 1


def test_append_table_compaction(oracle: Any, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    t = cat.create_table("db.app", SCHEMA, partition_keys=["p"])
    for i in range(6):
        write_table(t, rows([i, i + 10], f"w{i}_"))
    expected = ours(t)
    r = t.maintenance.compact()
    assert r.snapshot_id is not None and r.rewritten_files == 6
    assert len(t.system_table("files")) == 1
    assert ours(t) == expected == java(oracle, warehouse, "app")


def test_random_writes_and_compactions_match_a_model(oracle: Any, warehouse: str) -> None:
    rng = random.Random(7)
    t = make(warehouse, "t", **{"num-sorted-run.compaction-trigger": "3"})
    model: dict[tuple[str, int], str] = {}
    for step in range(25):
        ids = rng.sample(range(40), rng.randint(1, 8))
        kinds = [rng.choice(["+I", "+U", "-D"]) for _ in ids]
        p = rng.choice(["a", "b"])
        write_table(t, rows(ids, f"s{step}_", kinds, p=p))
        for i, k in zip(ids, kinds, strict=True):
            if k == "-D":
                model.pop((p, i), None)
            else:
                model[(p, i)] = f"s{step}_{i}"
        if rng.random() < 0.3:
            t.maintenance.compact(full=rng.random() < 0.5)
        got = {(r["p"], r["id"]): r["v"] for r in t.scan().to_arrow().to_pylist()}
        assert got == model, step
        assert_lsm_invariants(t)
    assert java(oracle, warehouse, "t") == ours(t)
