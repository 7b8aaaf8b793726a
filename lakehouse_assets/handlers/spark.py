"""PySpark DataFrame <-> Paimon through jobs.spark: read with `jobs.spark.read_table`, write with `jobs.spark.write`.

Large data never goes through the driver: reads are Spark Parquet scans of the files that need no merge plus planned
splits read on executors for the rest (jobs/spark/native_read.py; columns pushed down), writes are routed by (partition, bucket) to executor tasks and committed once on the driver. Small data
does, as Spark itself does with small tables: a read whose planned files are at most
``spark.lakehouse.read.driverMaxBytes`` (default 32 MiB) is read in process and handed to Spark as Arrow
(jobs/spark/driver_read.py), and a DataFrame Spark estimates at most ``spark.lakehouse.write.driverMaxBytes``
(default 32 MiB) is collected and written in process (jobs/spark/driver_write.py); ``paimon/spark_write_path`` in
the materialization metadata says which write ran. Tables are
addressed by URI with the store's catalog options (``s3.*`` of s3:// warehouses), so executors reach the store
with the IO manager's settings, whatever their own environment holds.
"""

import logging
from collections.abc import Mapping, Sequence
from functools import reduce
from typing import Any

import pyarrow as pa
from py4j.protocol import Py4JError
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema

from jobs.spark import spark_session, write_detailed
from jobs.spark.driver_read import driver_frame
from jobs.spark.native_read import read_table
from lakehouse_assets.handlers.base import ROW_KIND, PaimonTypeHandler
from lakehouse_assets.handlers.spark_lineage import column_sources, register_local_read
from lakehouse_assets.incremental import ChangeStep
from lakehouse_assets.metadata import spark_write_metadata
from table_format import FileSystemCatalog, SchemaChange, Table


class SparkHandler(PaimonTypeHandler):
    supported_types = (DataFrame,)

    def schema(self, data: DataFrame) -> pa.Schema:
        return to_arrow_schema(data.schema)

    def distinct(self, data: DataFrame, columns: Sequence[str]) -> pa.Table:
        return data.select(*columns).distinct().toArrow()

    def column_sources(self, data: DataFrame) -> dict[str, list[tuple[str, str]]] | None:
        """From the DataFrame's analyzed plan (spark_lineage.py); None when the plan cannot be read."""
        try:
            return column_sources(data)
        except (Py4JError, ValueError, KeyError, IndexError) as exc:  # metadata only: never fails the write
            logging.getLogger(__name__).warning("column lineage of a Spark DataFrame not read: %s", exc)
            return None

    def write(self, catalog: FileSystemCatalog, table: Table, data: DataFrame, *, mode: str,
              overwrite_partitions: Sequence[Mapping[str, Any]] | None, schema_mode: str) -> int | None:
        return self.write_with_metadata(catalog, table, data, mode=mode, overwrite_partitions=overwrite_partitions,
                                        schema_mode=schema_mode)[0]

    def write_with_metadata(self, catalog: FileSystemCatalog, table: Table, data: DataFrame, *, mode: str,
                            overwrite_partitions: Sequence[Mapping[str, Any]] | None,
                            schema_mode: str) -> tuple[int | None, dict[str, Any]]:
        if schema_mode == "merge":
            _add_new_columns(catalog, table, self.schema(data))
        result = write_detailed(data, table.uri, mode=mode, overwrite_partitions=overwrite_partitions,
                                options=table.store.file_io.catalog_options(), branch=_branch(table))
        return result.snapshot_id, spark_write_metadata(path=result.path, estimated_bytes=result.estimated_bytes,
                                                        driver_max_bytes=result.driver_max_bytes)

    def read(self, table: Table, target_type: Any, *, filter: Any, columns: Sequence[str] | None,
             snapshot_id: int | None) -> DataFrame:
        local = driver_frame(spark_session(), table.scan(filter=filter, columns=columns, snapshot_id=snapshot_id))
        if local is not None:  # small: read in process, no data-source workers
            register_local_read(local, table.uri)  # column lineage follows it as it follows a paimon relation
            return local
        options = _read_options(table, columns)
        if snapshot_id is not None:
            options["snapshot-id"] = str(snapshot_id)
        frame = read_table(spark_session(), table.uri, options=options)  # files needing no merge: Spark's Parquet
        register_local_read(frame, table.uri)  # lineage of a Parquet scan of the table's files, as of a paimon one
        return frame.filter(_column_filter(filter)) if filter else frame

    def read_changes(self, table: Table, target_type: Any, *, steps: Sequence[ChangeStep],
                     columns: Sequence[str] | None) -> DataFrame:
        pieces: list[DataFrame] = []
        for step in steps:
            if step.kind == "changes":
                pieces.append(_reader(table, columns).option("incremental-between", f"{step.start},{step.end}")
                              .load(table.uri))
                continue
            if step.kind == "replace":
                pieces.append(self._at(table, step, step.start, columns).withColumn(ROW_KIND, F.lit("-D")))
            pieces.append(self._at(table, step, step.end, columns).withColumn(ROW_KIND, F.lit("+I")))
        return reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), pieces)

    def _at(self, table: Table, step: ChangeStep, snapshot_id: int | None, columns: Sequence[str] | None) -> DataFrame:
        return self.read(table, DataFrame, filter=step.partition_filter(), columns=columns, snapshot_id=snapshot_id)


def _branch(table: Table) -> str | None:
    """The Paimon branch a Table object stands for (None: main), for the data source's option "branch"."""
    return None if table.current_branch == "main" else table.current_branch


def _read_options(table: Table, columns: Sequence[str] | None) -> dict[str, str]:
    options = dict(table.store.file_io.catalog_options())
    if _branch(table) is not None:
        options["branch"] = str(_branch(table))
    if columns:
        options["columns"] = ",".join(columns)
    return options


def _reader(table: Table, columns: Sequence[str] | None) -> Any:
    return spark_session().read.format("paimon").options(**_read_options(table, columns))


def _column_filter(dnf: list[Any]) -> Column:
    """The IO manager's partition filter (``[(col, "in", values)]`` or OR-ed conjunctions of ``=``) in Spark."""
    if len(dnf) == 1 and isinstance(dnf[0], tuple):
        column, _, values = dnf[0]
        return F.col(column).isin(list(values))
    conjunctions = [reduce(lambda a, b: a & b, [F.col(c) == F.lit(v) for c, _, v in conj]) for conj in dnf]
    return reduce(lambda a, b: a | b, conjunctions)


def _add_new_columns(catalog: FileSystemCatalog, table: Table, schema: pa.Schema) -> None:
    """schema_mode="merge" for Spark writes: the columns the table lacks are added (one schema version) first."""
    new = [f for f in schema if f.name not in table.arrow_schema.names and f.name != ROW_KIND]
    if new:
        catalog.alter_table(table.identifier, [SchemaChange.add_column(f.name, f.type) for f in new])
