"""Paimon's own Spark connector as a peer: its Spark SQL reads the tables our data source wrote, we read a table it
wrote, and its ``CALL sys.compact`` compacts a table we wrote, which we then read."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.spark import write
from table_format import CommitKind, FileSystemCatalog, TableFormatError, open_table, write_table

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64()), ("s", pa.string())])


def _data(start: int, n: int, v: float) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"dt": [("2024-05-01", "2024-05-02")[i % 2] for i in ids], "id": ids,
                     "v": [i * v for i in ids], "s": [f"row-{i}" for i in ids]}, schema=SCHEMA)


def _sorted(rows: list[list[object]] | list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in rows)


def test_the_connector_and_our_data_source_read_each_others_tables(spark, paimon_spark, warehouse):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    pk = catalog.create_table("db.pk_ours", SCHEMA, primary_keys=("dt", "id"), partition_keys=("dt",),
                              options={"bucket": "2"})
    append = catalog.create_table("db.append_ours", SCHEMA, partition_keys=("dt",))
    for start, n, v in ((0, 300, 1.0), (150, 300, 2.0), (400, 50, 3.0)):  # overlapping keys: upserts
        write(spark.createDataFrame(_data(start, n, v)), pk.path)
    spark.createDataFrame(_data(0, 500, 0.5)).write.format("paimon").mode("append").save(append.path)
    ours_pk = _sorted(tuple(r.values()) for r in open_table(pk.path).scan().to_arrow().to_pylist())
    ours_append = _sorted(tuple(r.values()) for r in open_table(append.path).scan().to_arrow().to_pylist())
    assert len(ours_pk) == 450 and len(ours_append) == 500

    answers = paimon_spark.sql(
        warehouse,
        "USE paimon",
        "SELECT dt, id, v, s FROM db.pk_ours",
        "SELECT dt, id, v, s FROM db.append_ours",
        "CREATE TABLE db.theirs (dt STRING, id BIGINT, v DOUBLE, s STRING) PARTITIONED BY (dt) "
        "TBLPROPERTIES ('primary-key' = 'dt,id', 'bucket' = '2')",
        "INSERT INTO db.theirs VALUES ('2024-05-01', 1, 1.5, 'a'), ('2024-05-02', 2, 2.5, 'b'), "
        "('2024-05-01', 3, 3.5, 'c')",
        "INSERT INTO db.theirs VALUES ('2024-05-01', 1, 10.5, 'a2'), ('2024-05-02', 4, 4.5, 'd')",
        "CALL sys.compact(table => 'db.pk_ours')",
        "SELECT dt, id, v, s FROM db.pk_ours",
    )
    assert _sorted(answers[1]["rows"]) == ours_pk
    assert _sorted(answers[2]["rows"]) == ours_append

    # we read the table the connector wrote (table_format and our data source)
    theirs = [("2024-05-01", 1, 10.5, "a2"), ("2024-05-01", 3, 3.5, "c"), ("2024-05-02", 2, 2.5, "b"),
              ("2024-05-02", 4, 4.5, "d")]
    path = f"{warehouse}/db.db/theirs"
    assert _sorted(tuple(r.values()) for r in open_table(path).scan().to_arrow().to_pylist()) == theirs
    assert _sorted(tuple(r) for r in spark.read.format("paimon").load(path).collect()) == theirs

    # the connector's CALL sys.compact on our table: a COMPACT snapshot that we read as before
    compacted = open_table(pk.path)
    assert compacted.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert _sorted(tuple(r.values()) for r in compacted.scan().to_arrow().to_pylist()) == ours_pk
    assert _sorted(answers[-1]["rows"]) == ours_pk
    assert _sorted(tuple(r) for r in spark.read.format("paimon").load(pk.path).collect()) == ours_pk


@pytest.mark.slow  # two Spark sessions; tests/table_format/test_bounded_merge.py checks ours without Java
def test_key_filtered_read_of_partial_update_deletes_fails_as_java(paimon_spark, warehouse):
    """Java 0.9 filters keys by file and row-group statistics only and merges every row it reads: a key filter that
    excludes a -D key of a partial-update table still fails when that key's rows are in the files read, and
    succeeds when they are pruned. Our key-filtered read does the same (scan/reader.py `merge_excluded`)."""
    schema = pa.schema([("id", pa.int64(), False), ("a", pa.int64())])
    deletes = schema.append(pa.field("_row_kind", pa.string()))
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.pu", schema, primary_keys=("id",),
                             options={"bucket": "1", "merge-engine": "partial-update"})
    write_table(t, pa.table({"id": [1, 2, 3, 4, 5], "a": [10, 20, 30, 40, 50]}, schema=schema))
    write_table(t, pa.table({"id": [1, 2], "a": [None, 21], "_row_kind": ["-D", "+I"]}, schema=deletes))
    write_table(t, pa.table({"id": [5], "a": [None], "_row_kind": ["-D"]}, schema=deletes))
    t = t.refresh()
    queries = {"id >= 3 AND id <= 4": [("id", ">=", 3), ("id", "<=", 4)],  # no file holding -D is read
               "id = 2": [("id", "=", 2)]}  # key 1's -D is in a file read: merged, refused
    outcomes = {}
    for where, dnf in queries.items():
        try:
            java: object = _sorted(paimon_spark.sql(warehouse, f"SELECT * FROM paimon.db.pu WHERE {where}")[0]["rows"])
        except AssertionError as e:
            assert "can not accept delete records" in str(e)
            java = "fails"
        try:
            ours: object = _sorted([tuple(r.values()) for r in t.scan(filter=dnf).to_arrow().to_pylist()])
        except TableFormatError as e:
            assert "cannot accept -U/-D" in str(e)
            ours = "fails"
        assert ours == java, where
        outcomes[where] = ours
    assert outcomes == {"id >= 3 AND id <= 4": [(3, 30), (4, 40)], "id = 2": "fails"}
