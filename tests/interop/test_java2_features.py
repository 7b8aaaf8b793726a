"""Java Paimon 2.0 features: read what we implement (dense stats, external data paths), refuse the rest by name.

Row tracking, data evolution, postpone bucket mode and the BLOB / VARIANT / VECTOR types make loading a table
raise UnsupportedFeatureError naming the feature (never a wrong answer); creating such a table here is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, UnsupportedFeatureError, write_table

pytestmark = pytest.mark.interop

FIELDS = [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}]
ROWS = [[["+I", 1, "a"], ["+I", 2, "b"]], [["+I", 3, "c"]]]


def java2_write(oracle2, warehouse: str, table: str, options: dict[str, str], *, pk: bool = False,
                fields: list[dict] | None = None) -> dict:
    return oracle2.write_spec({
        "warehouse": warehouse, "database": "db", "table": table, "if_exists": "drop",
        "schema": {"fields": fields or FIELDS, "primary_keys": ["id"] if pk else [], "options": options},
        "batches": ROWS,
    })


def our_rows(warehouse: str, table: str, **scan) -> list[dict]:
    t = FileSystemCatalog(warehouse).load_table(f"db.{table}")
    return sorted(t.scan(**scan).to_arrow().to_pylist(), key=lambda r: r["id"])


def test_dense_stats_default_filters_like_java(oracle2, warehouse):
    """2.0 stores value stats densely (metadata.stats-dense-store = true, only some columns' stats in
    _VALUE_STATS_COLS); filtered scans on a column with and without stored stats stay exact."""
    java2_write(oracle2, warehouse, "dense", {"bucket": "1", "metadata.stats.mode": "none",
                                              "fields.id.stats.mode": "full"}, pk=True)
    assert [r["id"] for r in our_rows(warehouse, "dense", filter=[("id", ">=", 2)])] == [2, 3]
    assert [r["id"] for r in our_rows(warehouse, "dense", filter=[("v", "=", "c")])] == [3]
    assert [r["id"] for r in our_rows(warehouse, "dense", filter=[("id", "=", 2), ("v", "=", "b")])] == [2]


def test_external_data_paths_read(oracle2, warehouse, tmp_path: Path):
    ext = tmp_path / "external"
    ext.mkdir()
    java2_write(oracle2, warehouse, "ext", {"bucket": "-1", "data-file.external-paths": f"file://{ext}",
                                            "data-file.external-paths.strategy": "round-robin"})
    assert any(p.is_file() for p in ext.rglob("*.parquet"))
    assert our_rows(warehouse, "ext") == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    table = FileSystemCatalog(warehouse).load_table("db.ext")
    with pytest.raises(UnsupportedFeatureError, match="external data paths"):
        table.new_write()


@pytest.mark.parametrize(("name", "options", "pk", "feature"), [
    ("rt", {"bucket": "-1", "row-tracking.enabled": "true"}, False, "row tracking"),
    ("de", {"bucket": "-1", "row-tracking.enabled": "true", "data-evolution.enabled": "true"}, False, "row tracking"),
    # a global index can only be built on a row-tracking table (2.0's create_global_index procedure checks it)
    ("gi", {"bucket": "-1", "row-tracking.enabled": "true", "global-index.enabled": "true"}, False, "row tracking"),
    ("pp", {"bucket": "-2"}, True, "postpone bucket"),
])
def test_java2_feature_tables_refused(oracle2, warehouse, name, options, pk, feature):
    java2_write(oracle2, warehouse, name, options, pk=pk)
    with pytest.raises(UnsupportedFeatureError, match=feature):
        FileSystemCatalog(warehouse).load_table(f"db.{name}")


def test_java2_variant_type_refused(oracle2, warehouse):
    fields = [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "VARIANT"}]
    spec = {"warehouse": warehouse, "database": "db", "table": "var", "if_exists": "drop",
            "schema": {"fields": fields, "primary_keys": [], "options": {"bucket": "-1"}}, "batches": []}
    oracle2.write_spec(spec)
    with pytest.raises(UnsupportedFeatureError, match="VARIANT"):
        FileSystemCatalog(warehouse).load_table("db.var")


@pytest.mark.parametrize(("options", "feature"), [
    ({"row-tracking.enabled": "true"}, "row tracking"),
    ({"data-evolution.enabled": "true"}, "data evolution"),
    ({"bucket": "-2"}, "postpone bucket"),
    ({"data-file.external-paths": "file:///tmp/x"}, "external data paths"),
])
def test_creating_unsupported_feature_table_refused(warehouse, options, feature):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    with pytest.raises(UnsupportedFeatureError, match=feature):
        catalog.create_table("db.t", pa.schema([("id", pa.int32()), ("v", pa.string())]), primary_keys=["id"],
                             options=options)
    assert not catalog.table_exists("db.t")


def test_64_bit_deletion_vectors_read(oracle2, warehouse):
    """2.0 with deletion-vectors.bitmap64 writes 64-bit deletion vectors (another magic number); we read them, write
    and fully compact on top, and 2.0 reads the result."""
    spec = {"warehouse": warehouse, "database": "db", "table": "dv64", "if_exists": "drop",
            "schema": {"fields": FIELDS, "primary_keys": ["id"],
                       "options": {"bucket": "1", "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": "true"}},
            "batches": [[["+I", i, f"v{i}"] for i in range(1, 7)], {"rows": [["+I", 2, "w2"], ["-D", 5, "v5"]]}],
            "compact": True}
    oracle2.write_spec(spec)
    index_files = list((Path(warehouse) / "db.db" / "dv64" / "index").glob("*"))
    magic64 = (1681511377).to_bytes(4, "little")
    assert any(magic64 in f.read_bytes() for f in index_files)
    expected = [{"id": 1, "v": "v1"}, {"id": 2, "v": "w2"}, {"id": 3, "v": "v3"}, {"id": 4, "v": "v4"},
                {"id": 6, "v": "v6"}]
    assert our_rows(warehouse, "dv64") == expected
    table = FileSystemCatalog(warehouse).load_table("db.dv64")
    write_table(table, pa.table({"id": pa.array([3, 7], pa.int32()), "v": ["w3", "v7"]}))
    table.maintenance.compact(full=True)
    expected = sorted([*(r for r in expected if r["id"] != 3), {"id": 3, "v": "w3"}, {"id": 7, "v": "v7"}],
                      key=lambda r: r["id"])
    assert our_rows(warehouse, "dv64") == expected
    java = sorted((json.loads(line) for line in oracle2.call(["read", warehouse, "db", "dv64"]).splitlines() if line),
                  key=lambda r: r["id"])
    assert java == expected


@pytest.fixture
def oracle(oracle_each):
    return oracle_each


@pytest.mark.parametrize("dense", ["true", "false"])
def test_our_format_generation_read_by_both_javas(oracle, warehouse, dense):
    """What we write is read by 0.9 and 2.0: snapshots carry the 1.1 manifest-list sizes, manifest lists the 1.1
    bucket/level ranges (optional fields 0.9 skips), and with our only stats mode (truncate(16) on every column)
    Paimon's dense stats layout (`metadata.stats-dense-store`, 1.0+) is the full one: `_VALUE_STATS_COLS` null. The
    Java side then appends with its own defaults and both read the result alike."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.gen", pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.string())]),
                                 primary_keys=["id"], options={"bucket": "2", "metadata.stats-dense-store": dense})
    write_table(table, pa.table({"id": pa.array([1, 2, 3], pa.int32()), "v": ["a", "b", None]}))
    table = table.refresh()
    snapshot = table.latest_snapshot()
    assert snapshot.base_manifest_list_size and snapshot.delta_manifest_list_size
    metas = table.store.manifests.data_manifests(snapshot)
    assert metas and all(m.min_bucket is not None and m.max_level is not None for m in metas)
    entries = table.store.manifests.live_files(snapshot)
    assert entries and all(e.file.value_stats_cols is None for e in entries)
    oracle.write_spec({"warehouse": warehouse, "database": "db", "table": "gen", "if_exists": "append",
                       "schema": {"fields": FIELDS, "primary_keys": ["id"], "options": {}},
                       "batches": [[["+I", 2, "j2"], ["+I", 4, "j4"]]]})
    expected = [{"id": 1, "v": "a"}, {"id": 2, "v": "j2"}, {"id": 3, "v": None}, {"id": 4, "v": "j4"}]
    assert our_rows(warehouse, "gen") == expected
    java = sorted((json.loads(line) for line in oracle.call(["read", warehouse, "db", "gen"]).splitlines() if line),
                  key=lambda r: r["id"])
    assert java == expected
    table = FileSystemCatalog(warehouse).load_table("db.gen")
    assert all(e.file.value_stats_cols is None for e in table.store.manifests.live_files(table.latest_snapshot()))
