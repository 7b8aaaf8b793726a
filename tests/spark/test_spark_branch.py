"""The Spark data source reads and writes a Paimon branch with option "branch" (a path cannot name one)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.spark.read_options import read_options
from table_format import FileSystemCatalog, OptionError, write_table


def test_read_and_write_branch_option(spark, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int32()), ("v", pa.string())]), primary_keys=["id"],
                         options={"bucket": "1"})
    write_table(t, pa.table({"id": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
    t.create_branch("dev", from_latest=True)
    df = spark.createDataFrame([(3, "dev")], "id int, v string")
    df.write.format("paimon").mode("append").option("branch", "dev").save(t.path)
    read = spark.read.format("paimon").option("branch", "dev").load(t.path)
    assert sorted(r.id for r in read.collect()) == [1, 2, 3]
    assert sorted(r.id for r in spark.read.format("paimon").load(t.path).collect()) == [1, 2]  # main unchanged
    with pytest.raises(Exception, match="branch 'nope' does not exist"):
        spark.read.format("paimon").option("branch", "nope").load(t.path).collect()


def test_branch_named_with_warehouse(warehouse: str) -> None:
    opts = read_options({"warehouse": warehouse, "path": "db.t$branch_dev"})
    assert opts.branch == "dev" and opts.path.endswith("/db.db/t")
    with pytest.raises(OptionError, match="branch_<name>"):
        read_options({"warehouse": warehouse, "path": "db.t$snapshots"})
    with pytest.raises(OptionError, match="differs"):
        read_options({"warehouse": warehouse, "path": "db.t$branch_dev", "branch": "x"})
