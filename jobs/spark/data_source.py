"""``format("paimon")``: the PySpark Python data source over table_format (reads, writes, filter pushdown).

    register_data_source(spark)
    df = spark.read.format("paimon").load("/warehouse/db.db/orders")
    df.write.format("paimon").mode("append").save("/warehouse/db.db/orders")

Reader options: ``columns`` ("a,b": Spark does not prune Python data sources, so project here), ``snapshot-id``,
``tag``, ``incremental-between`` ("3,5": the changes after snapshot 3 up to 5, with ``_row_kind``),
``source.split.target-size`` / ``source.split.open-file-cost`` / ``min-partitions`` (split packing),
``read.changelog`` (true: a ``_row_kind`` column, "+I" for every row of a snapshot read), ``warehouse`` (then
``load("db.table")``), and ``s3.*`` catalog options of s3:// tables (``s3.endpoint``,
``s3.access-key``, ...; readers and writers alike; see docs/object-storage.md). See docs/spark.md.

Streams: ``spark.readStream.format("paimon")`` (jobs/spark/stream_reader.py, options in stream_options.py) and
``df.writeStream.format("paimon")`` (jobs/spark/stream_writer.py, exactly once per micro-batch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.datasource import (
        DataSourceReader,
        DataSourceStreamReader,
        DataSourceStreamWriter,
        DataSourceWriter,
    )
    from pyspark.sql.types import StructType

# Spark starts a Python worker per planning step (create the source, plan the read) and per task, and each imports
# this module: it imports only what the step at hand needs, on first use (reads never import the writers).

FORMAT = "paimon"
ROW_KIND = "_row_kind"


class PaimonDataSource(DataSource):
    """Spark's entry point; ``self.options`` holds the user's options (case-insensitive) and ``path``."""

    pinned_snapshot_id: int | None = None  # set by schema(), at load()
    defaults: dict[str, str] = {}  # catalog options of every table (register_warehouse); never in Spark's catalog

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        import pyarrow as pa  # noqa: PLC0415 - lazy (see the imports)
        from pyspark.sql.types import StringType, StructField, StructType  # noqa: PLC0415

        from jobs.spark.read_options import read_options  # noqa: PLC0415
        from jobs.spark.reader import pinned_snapshot, read_schema  # noqa: PLC0415
        from jobs.spark.sql import tag_session_table  # noqa: PLC0415
        from jobs.spark.stream_options import wants_changelog  # noqa: PLC0415
        from jobs.spark.types import spark_schema  # noqa: PLC0415
        from table_format import SchemaError  # noqa: PLC0415

        opts = read_options(self._with_defaults())
        table = opts.open_table()
        arrow = read_schema(table, opts)
        # load() pins the latest snapshot (PySpark pickles this instance after schema()): every action of the
        # DataFrame reads it, as Spark's file sources list their files once, at load()
        self.pinned_snapshot_id = pinned_snapshot(table, opts)
        if opts.columns is not None:
            unknown = [c for c in opts.columns if c not in arrow.names]
            if unknown:
                raise SchemaError(f"table {table.identifier!r}: option 'columns' names unknown columns {unknown} "
                                  f"(columns: {arrow.names})")
            arrow = pa.schema([arrow.field(c) for c in opts.columns])
        schema = spark_schema(arrow, table=table.identifier)
        if opts.incremental is not None or wants_changelog(self.options):  # deletions: any column may be null
            schema = StructType([StructField(f.name, f.dataType, True) for f in schema.fields]
                                + [StructField(ROW_KIND, StringType(), False)])
        return tag_session_table(schema, self.options)  # CREATE TABLE: the path kept in the catalog (jobs/spark/sql.py)

    def reader(self, schema: StructType) -> DataSourceReader:
        import dataclasses  # noqa: PLC0415 - lazy (see the imports)

        from jobs.spark.read_options import read_options  # noqa: PLC0415
        from jobs.spark.reader import PaimonReader, PushdownReader  # noqa: PLC0415
        from jobs.spark.sql import session_options, stored_table  # noqa: PLC0415

        merged = session_options(self.options, schema, defaults=self.defaults)
        if stored_table(schema) is not None and "columns" not in merged:  # a session table: its catalog columns
            merged["columns"] = ",".join(f.name for f in schema.fields if f.name != ROW_KIND)
        options = read_options(merged)
        if self.pinned_snapshot_id is not None:  # None also when a schema was given with .schema(...)
            options = dataclasses.replace(options, snapshot_id=self.pinned_snapshot_id)
        return (PushdownReader if options.pushdown else PaimonReader)(options, schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from jobs.spark.sql import check_writable_options, session_options  # noqa: PLC0415 - lazy (see the imports)
        from jobs.spark.writer import PaimonWriter, plan_write  # noqa: PLC0415

        options = session_options(self.options, schema, defaults=self.defaults)
        check_writable_options(options, path=options["path"])
        return PaimonWriter(plan_write(options, schema, overwrite=overwrite))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802 - pyspark's name
        from jobs.spark.stream_options import stream_options  # noqa: PLC0415 - lazy (see the imports)
        from jobs.spark.stream_reader import PaimonStreamReader  # noqa: PLC0415

        return PaimonStreamReader(stream_options(self._with_defaults()), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        from jobs.spark.stream_writer import stream_writer  # noqa: PLC0415 - lazy (see the imports)

        return stream_writer(self._with_defaults(), schema, overwrite=overwrite)

    def _with_defaults(self) -> dict[str, str]:
        """The session's catalog options (register_warehouse; s3:// tables only), then this load's own."""
        from jobs.spark.sql import with_defaults  # noqa: PLC0415 - lazy (see the imports)

        return with_defaults(self.options, self.defaults)


def register_data_source(spark: SparkSession, *, defaults: dict[str, str] | None = None) -> None:
    """Register ``format("paimon")`` on this session and turn on Python filter pushdown (the reader needs it).
    ``defaults``: catalog options (``s3.*``) every read and write of the session gets unless it gives its own."""
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    source = PaimonDataSource
    if defaults:
        # a class made here is pickled by value (cloudpickle), defaults included, to every Python worker
        source = type("PaimonDataSourceWithDefaults", (PaimonDataSource,), {"defaults": dict(defaults)})
    spark.dataSource.register(source)
