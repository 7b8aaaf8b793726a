"""Resources: the Paimon catalog (for ops, sensors and checks) and dagster-pyspark's PySparkResource on jobs.spark."""

from typing import Any

import dagster as dg
from dagster_pyspark import PySparkResource
from dagster_spark.utils import flatten_dict
from pydantic import Field, PrivateAttr
from pyspark.sql import SparkSession

from jobs.spark import spark_session
from lakehouse_assets.io_manager import default_warehouse
from table_format import FileSystemCatalog, Table


class PaimonCatalogResource(dg.ConfigurableResource):
    """The filesystem catalog of a warehouse: ``catalog()``, ``load_table("db.table")``, ``table_identifiers()``,
    ``table_uri("db.table")``; ``options``: catalog options of s3:// warehouses (``s3.endpoint``, ...)."""

    warehouse: str | None = Field(
        default=None, description="Warehouse path or URI; default LAKEHOUSE_WAREHOUSE, else ./warehouse"
    )
    options: dict[str, str] = Field(
        default_factory=dict, description="catalog options of s3:// warehouses (s3.endpoint, s3.access-key, ...); "
                                          "unset ones come from the AWS_* variables"
    )

    def catalog(self) -> FileSystemCatalog:
        return FileSystemCatalog(self.warehouse or default_warehouse(), options=self.options or None)

    def table_uri(self, identifier: str) -> str:
        """The table's URI, for `jobs.spark` functions (with ``options=self.options``)."""
        return self.catalog().table_uri(identifier)

    def load_table(self, identifier: str) -> Table:
        return self.catalog().load_table(identifier)

    def table_identifiers(self) -> list[str]:
        """Every table of every database, as ``database.table``, sorted."""
        catalog = self.catalog()
        return sorted(f"{db}.{t}" for db in catalog.list_databases() for t in catalog.list_tables(db))


class PaimonPySparkResource(PySparkResource):
    """dagster-pyspark's PySparkResource, built by `jobs.spark.spark_session` (loopback, Arrow, pushdown, the
    ``paimon`` data source registered), created lazily: on the first ``spark_session`` access, so a run that never
    asks for it (a maintenance job on its local engine) starts no JVM.

    ``master`` defaults to ``SPARK_MASTER``, then ``local[2]``; ``spark_config`` adds Spark settings (nested
    dicts are flattened with dots, as dagster-pyspark does). An active session is reused (one JVM per process);
    a session this resource created is stopped when the run's resources are torn down.
    """

    spark_config: dict[str, Any] = Field(default_factory=dict, description="extra Spark settings")
    master: str | None = Field(default=None, description="Spark master; default SPARK_MASTER, else local[2]")
    _owns_session: bool = PrivateAttr(default=False)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._spark_session = None  # created on first use (spark_session)

    @property
    def spark_session(self) -> SparkSession:
        if self._spark_session is None:
            self._owns_session = SparkSession.getActiveSession() is None
            conf = {key: str(value) for key, value in flatten_dict(self.spark_config)}
            self._spark_session = spark_session(self.master, conf=conf)
        return self._spark_session

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._owns_session and self._spark_session is not None:
            self._spark_session.stop()
            self._spark_session = None


def pyspark_resource(master: str | None = None, *, spark_config: dict[str, Any] | None = None) -> PaimonPySparkResource:
    """The PySpark resource for Definitions (``SPARK_MASTER`` is read when the run starts, not at import)."""
    return PaimonPySparkResource(master=master, spark_config=spark_config or {})
