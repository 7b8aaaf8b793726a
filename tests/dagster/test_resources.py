"""Resources and defaults: the warehouse from LAKEHOUSE_WAREHOUSE, the catalog resource's tables."""

import dagster as dg
import pyarrow as pa

from lakehouse_assets import PaimonCatalogResource, PaimonIOManager
from tests.dagster.helpers import rows


def test_the_warehouse_comes_from_lakehouse_warehouse_when_not_configured(warehouse, instance, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_WAREHOUSE", warehouse)

    @dg.asset(key_prefix="env")
    def t() -> pa.Table:
        return pa.table({"id": [1]})

    dg.materialize([t], resources={"io_manager": PaimonIOManager()}, instance=instance)
    assert rows(warehouse, "env.t") == [{"id": 1}]
    catalog = PaimonCatalogResource()
    assert catalog.table_identifiers() == ["env.t"]
    assert catalog.load_table("env.t").identifier == "env.t"


def test_the_default_warehouse_is_dot_warehouse(monkeypatch, tmp_path):
    monkeypatch.delenv("LAKEHOUSE_WAREHOUSE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert PaimonCatalogResource().table_identifiers() == []
    assert PaimonIOManager().catalog.warehouse.rstrip("/").endswith("warehouse")
