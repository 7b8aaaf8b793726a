"""Fixtures of the maintenance-job, sensor, schedule and check tests: real tables in a scratch warehouse, the
catalog resource over it, and the PySpark resource on the session's SparkSession."""

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from lakehouse_assets import PaimonCatalogResource, pyspark_resource
from table_format import FileSystemCatalog, Table, write_table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("amount", pa.float64())])
MAINTAINED = {"write-only": "true", "snapshot.num-retained.min": "1"}  # compaction and expiration left to the jobs


def batch(start: int, n: int = 10) -> pa.Table:
    ids = list(range(start, start + n))
    return pa.table({"id": ids, "name": [f"n{i}" for i in ids], "amount": [i * 1.5 for i in ids]}, schema=SCHEMA)


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    return cat


@pytest.fixture
def make_table(catalog: FileSystemCatalog) -> Callable[..., Table]:
    """make_table(name, writes, primary_keys=("id",), **options): a table with `writes` overlapping batches."""

    def make(name: str, writes: int, *, primary_keys: tuple[str, ...] = ("id",), **options: str) -> Table:
        opts = {"bucket": "2" if primary_keys else "-1", **MAINTAINED, **options}
        table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=list(primary_keys), options=opts)
        for i in range(writes):
            write_table(table, batch(i * 5))
        return catalog.load_table(f"db.{name}")

    return make


@pytest.fixture
def catalog_resource(warehouse: str) -> PaimonCatalogResource:
    return PaimonCatalogResource(warehouse=warehouse)


@pytest.fixture
def resources(spark: Any, catalog_resource: PaimonCatalogResource) -> dict[str, Any]:
    """The resources of the maintenance jobs; the PySpark resource gets the session's SparkSession."""
    return {"pyspark": pyspark_resource(), "paimon_catalog": catalog_resource}
