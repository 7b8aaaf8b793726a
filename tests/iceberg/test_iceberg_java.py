"""Iceberg metadata beside Java Paimon 2.0's (which writes it in its commit callback): mixed histories (Java commit,
ours, Java, ours) keep PyIceberg and DuckDB current, and our metadata for the same commits reads the same rows."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
from test_iceberg_metadata import READERS, metadata_path, rows

from table_format import FileSystemCatalog, write_table

OPTIONS = {"bucket": "-1", "metadata.iceberg.storage": "table-location",
           "metadata.iceberg.manifest-compression": "deflate"}  # snappy needs snappy-java on the oracle's classpath


def _spec(warehouse: str, table: str, rows_: list[list[Any]], *, create: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"warehouse": warehouse, "database": "db", "table": table,
                            "if_exists": "drop" if create else "append", "batches": [rows_]}
    if create:
        spec["schema"] = {"fields": [{"name": "id", "type": "BIGINT"}, {"name": "dt", "type": "STRING"},
                                     {"name": "v", "type": "DOUBLE"}],
                          "primary_keys": [], "partition_keys": ["dt"], "options": OPTIONS}
    return spec


def _ours(catalog: FileSystemCatalog, name: str, ids: list[int]) -> None:
    t = catalog.load_table(f"db.{name}")
    write_table(t, pa.table({"id": ids, "dt": ["2024-01-02"] * len(ids), "v": [i / 2 for i in ids]}))


def test_mixed_history_with_java_2(oracle2: Any, warehouse: str, iceberg_readers: Any) -> None:
    catalog = FileSystemCatalog(warehouse)
    oracle2.write_spec(_spec(warehouse, "mixed", [[1, "2024-01-01", 0.5], [2, "2024-01-02", 1.0]], create=True))
    _ours(catalog, "mixed", [3, 4])
    oracle2.write_spec(_spec(warehouse, "mixed", [[5, "2024-01-01", 2.5]], create=False))
    _ours(catalog, "mixed", [6])
    table = catalog.load_table("db.mixed")
    assert table.latest_snapshot().id == 4
    expected = rows(table.scan().to_arrow())
    assert sorted(r["id"] for r in expected) == [1, 2, 3, 4, 5, 6]
    for reader in READERS:
        got = iceberg_readers.read(reader, metadata_path(table))
        assert got["rows"] == expected, reader
    # Java reads the table as we do, its Iceberg metadata and ours alike
    assert sorted(r["id"] for r in oracle2.read(warehouse, "db", "mixed")) == [1, 2, 3, 4, 5, 6]
    snapshots = iceberg_readers.read("pyiceberg", metadata_path(table))["snapshots"]
    assert snapshots == [1, 2, 3, 4]


def test_same_commits_same_rows_as_java(oracle2: Any, warehouse: str, iceberg_readers: Any) -> None:
    """Java writes one table, we write the same commits into another: both Iceberg views read the same rows."""
    catalog = FileSystemCatalog(warehouse)
    batches = [[[1, "2024-01-01", 0.5], [2, "2024-01-02", 1.0]], [[3, "2024-01-01", 1.5]]]
    oracle2.write_spec({**_spec(warehouse, "java", batches[0], create=True), "batches": batches})
    ours = catalog.create_table("db.ours", pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64())]),
                                partition_keys=["dt"], options=OPTIONS)
    for b in batches:
        write_table(ours, pa.table({"id": [r[0] for r in b], "dt": [r[1] for r in b], "v": [r[2] for r in b]}))
    java = catalog.load_table("db.java")
    for reader in READERS:
        assert (iceberg_readers.read(reader, metadata_path(java))["rows"]
                == iceberg_readers.read(reader, metadata_path(ours))["rows"]), reader
    with open(metadata_path(java)) as f:
        java_meta = json.load(f)
    with open(metadata_path(ours)) as f:
        our_meta = json.load(f)
    # the same field ids, partition spec and snapshot ids (docs/iceberg.md lists what differs)
    assert java_meta["schemas"][-1]["fields"] == our_meta["schemas"][-1]["fields"]
    assert java_meta["partition-specs"] == our_meta["partition-specs"]
    assert [s["snapshot-id"] for s in java_meta["snapshots"]] == [s["snapshot-id"] for s in our_meta["snapshots"]]
    assert os.path.isfile(os.path.join(java.path, "metadata", "version-hint.text"))
