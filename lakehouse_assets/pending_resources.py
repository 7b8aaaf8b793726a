"""TEMPORARY (dagster-ops): stand-ins for dagster-io's PaimonCatalogResource and PySpark resource factory, with the
names of API.md, until their branch provides them; then this module is deleted."""

import os

import dagster as dg
from dagster_pyspark import PySparkResource
from pydantic import Field

from lakehouse_assets.io_manager import default_warehouse
from table_format import FileSystemCatalog


class PaimonCatalogResource(dg.ConfigurableResource):
    warehouse: str | None = Field(default=None, description="default LAKEHOUSE_WAREHOUSE, else ./warehouse")

    def catalog(self) -> FileSystemCatalog:
        return FileSystemCatalog(self.warehouse or default_warehouse())


def pyspark_resource(master: str | None = None) -> PySparkResource:
    return PySparkResource(spark_config={
        "spark.master": master or os.environ.get("SPARK_MASTER") or "local[2]",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1", "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4", "spark.ui.showConsoleProgress": "false"})
