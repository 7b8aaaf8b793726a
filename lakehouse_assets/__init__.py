"""Dagster layer: each Paimon table a materializable asset through an IO manager (built on table_format)."""

try:
    import dagster  # noqa: F401  (the dagster extra; say so rather than fail deep inside a handler)
except ModuleNotFoundError as error:
    if error.name != "dagster":
        raise
    raise ModuleNotFoundError(
        "lakehouse_assets needs Dagster, which a plain install leaves out: install the dagster and spark extras, "
        "e.g. pip install 'lakehouse[dagster,spark]' (from a checkout: pip install '/path/to/repo[dagster,spark]')",
        name="dagster",
    ) from None

from lakehouse_assets.audit import audit_check_result, audited_table, paimon_publish_asset
from lakehouse_assets.handlers.arrow import ArrowHandler
from lakehouse_assets.handlers.base import ArrowPivotHandler, PaimonTypeHandler
from lakehouse_assets.handlers.polars import PolarsHandler
from lakehouse_assets.handlers.spark import SparkHandler
from lakehouse_assets.incremental import CURSOR_PREFIX, cursor_key
from lakehouse_assets.io_manager import PaimonIOManager, default_warehouse
from lakehouse_assets.metadata import column_schema, paimon_kinds, table_metadata
from lakehouse_assets.observe import (
    observe_table,
    paimon_external_assets,
    paimon_external_table_sensor,
    paimon_observable_source,
    table_asset_key,
)
from lakehouse_assets.partitions import PartitionSlice, partition_slice
from lakehouse_assets.resources import PaimonCatalogResource, PaimonPySparkResource, pyspark_resource
from lakehouse_assets.table_spec import PaimonAssetError, TableSpec, table_spec

__all__ = [
    "CURSOR_PREFIX",
    "ArrowHandler",
    "ArrowPivotHandler",
    "PaimonAssetError",
    "PaimonCatalogResource",
    "PaimonIOManager",
    "PaimonPySparkResource",
    "PaimonTypeHandler",
    "PartitionSlice",
    "PolarsHandler",
    "SparkHandler",
    "TableSpec",
    "audit_check_result",
    "audited_table",
    "column_schema",
    "cursor_key",
    "default_warehouse",
    "paimon_kinds",
    "observe_table",
    "paimon_external_assets",
    "paimon_external_table_sensor",
    "paimon_observable_source",
    "paimon_publish_asset",
    "partition_slice",
    "pyspark_resource",
    "table_asset_key",
    "table_metadata",
    "table_spec",
]
