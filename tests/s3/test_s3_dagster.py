"""A Dagster materialization on an s3:// warehouse: PaimonIOManager writes assets to S3 and loads them as inputs."""

from __future__ import annotations

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from lakehouse_assets import PaimonIOManager
from table_format import FileSystemCatalog
from table_format.io.s3_file_io import S3FileIO

pytestmark = [pytest.mark.s3, pytest.mark.dagster]


def test_materialize_writes_to_and_reads_from_s3(s3_warehouse: str) -> None:
    @dg.asset(key_prefix="sales")
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "amount": [1.5, 2.5, 3.5, 4.5]})

    @dg.asset(key_prefix="sales")
    def big_orders(orders: pa.Table) -> pa.Table:  # loaded from S3 by the IO manager
        return orders.filter(pc.greater(orders["amount"], 2.0))

    io_manager = PaimonIOManager(warehouse=s3_warehouse)
    for _ in range(2):  # the second run overwrites both tables on S3
        result = dg.materialize([orders, big_orders], resources={"io_manager": io_manager},
                                instance=dg.DagsterInstance.ephemeral())
        assert result.success
    catalog = FileSystemCatalog(s3_warehouse)
    assert isinstance(catalog.file_io, S3FileIO)
    table = catalog.load_table("sales.big_orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [2, 3, 4]
    assert len(table.snapshots()) == 2
    assert catalog.load_table("sales.orders").scan().to_arrow().num_rows == 4
