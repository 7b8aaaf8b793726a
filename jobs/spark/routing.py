"""``write(df, table_path)``: Spark writes to any table, routing rows so that each bucket has one writer.

Paimon's writers (Flink's and Spark's) shuffle rows by bucket before writing a primary-key table: a bucket's
sorted runs carry sequence numbers that only one writer may hand out. ``write`` does the same on Spark:

* fixed buckets (``bucket`` > 0, primary key): an Arrow UDF computes each row's bucket on the executors with
  table_format's bucket hashing (``Table.bucket_ids``, Java's hash), then ``repartition(partition keys, bucket)``
  gives every (partition, bucket) to one task;
* dynamic buckets (``bucket`` = -1, primary key): the key -> bucket index is per partition, so rows are routed by
  the partition keys (one task per partition; an unpartitioned table is written by one task);
* append tables need no routing.

Then the data source writes and commits once (``df.write.format("paimon")``), whose commit checks the routing.
A DataFrame Spark estimates at most ``driver_max_bytes`` is written on the driver instead
(jobs/spark/driver_write.py): the same rows, files and snapshots, without a distributed job.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.functions import arrow_udf, col
from pyspark.sql.types import IntegerType

from jobs.spark.create import TableSpec, key_list, open_or_create
from jobs.spark.data_source import FORMAT
from jobs.spark.driver_write import driver_max_bytes as threshold
from jobs.spark.driver_write import estimated_bytes, write_on_driver
from jobs.spark.pk_write import ROUTED
from jobs.spark.read_options import catalog_options, open_branch
from jobs.spark.writer import COMMIT_USER, OVERWRITE_PARTITIONS, overwrite_partitions_option, single_writer_unit
from table_format import OptionError, SchemaError, Table, open_table

BUCKET_COLUMN = "__paimon_bucket"


@dataclass(frozen=True)
class SparkWriteResult:
    """What ``write_detailed`` did: the snapshot, and how it wrote ("driver" or "distributed")."""

    snapshot_id: int | None  # None: nothing changed
    path: str  # "driver": collected as Arrow and written in process; "distributed": the data source's tasks
    estimated_bytes: int | None  # Spark's estimate of the plan's size (None: Spark could not size it)
    driver_max_bytes: int  # the threshold that chose the path


def write(df: DataFrame, table_path: str, *, mode: str = "append",
          overwrite_partitions: Sequence[Mapping[str, Any]] | None = None,
          num_partitions: int | None = None, options: Mapping[str, str] | None = None,
          primary_keys: Sequence[str] | None = None, partition_keys: Sequence[str] | None = None,
          table_options: Mapping[str, str] | None = None, branch: str | None = None,
          driver_max_bytes: int | None = None) -> int | None:
    """Write ``df`` into the table at ``table_path`` in one commit; returns the new snapshot id (None: no change).

    The fast path for primary-key tables: rows are routed so that one task writes each bucket, which numbers its
    rows one by one and compacts as Paimon's writers do. A plain ``df.write.format("paimon")`` is also correct
    but leaves its files on level 0 until a compaction (jobs/spark/pk_write.py).

    ``mode`` is "append" (primary-key tables upsert) or "overwrite" (the whole table, or ``overwrite_partitions``
    such as ``[{"dt": "2024-05-14"}]``). ``num_partitions``: the writing tasks (default
    ``spark.sql.shuffle.partitions``). ``options``: catalog options of an s3:// table (``s3.endpoint``, ...); the
    ``s3.*`` ones are passed to the data source. A failed job commits nothing and deletes the files its tasks wrote.

    When no table exists at ``table_path`` (``<warehouse>/<database>.db/<table>``) it is created from the
    DataFrame's schema with ``primary_keys``, ``partition_keys`` and ``table_options`` (``{"bucket": "4"}``); for
    an existing table, keys that differ from its own are refused and ``table_options`` are not applied.
    ``branch``: write that Paimon branch of the (existing) table instead of main.

    ``driver_max_bytes``: a DataFrame whose optimized plan Spark estimates at most this size is collected as Arrow
    and written on the driver (one Spark job; jobs/spark/driver_write.py); default the session's
    ``spark.lakehouse.write.driverMaxBytes``, else 32 MiB; 0: always distributed. ``write_detailed`` also says
    which path ran.
    """
    return write_detailed(df, table_path, mode=mode, overwrite_partitions=overwrite_partitions,
                          num_partitions=num_partitions, options=options, primary_keys=primary_keys,
                          partition_keys=partition_keys, table_options=table_options, branch=branch,
                          driver_max_bytes=driver_max_bytes).snapshot_id


def write_detailed(df: DataFrame, table_path: str, *, mode: str = "append",
                   overwrite_partitions: Sequence[Mapping[str, Any]] | None = None,
                   num_partitions: int | None = None, options: Mapping[str, str] | None = None,
                   primary_keys: Sequence[str] | None = None, partition_keys: Sequence[str] | None = None,
                   table_options: Mapping[str, str] | None = None, branch: str | None = None,
                   driver_max_bytes: int | None = None) -> SparkWriteResult:
    """``write``, returning the snapshot id with the path that wrote it (driver or distributed) and why."""
    s3_options = dict(options or {})
    if mode not in ("append", "overwrite"):
        raise OptionError(f"table at {table_path!r}: mode must be 'append' or 'overwrite', not {mode!r}")
    limit = threshold(df, driver_max_bytes)
    spec = TableSpec(primary_keys=key_list(primary_keys), partition_keys=key_list(partition_keys),
                     options={str(k): str(v) for k, v in (table_options or {}).items()})
    table = open_or_create(table_path, df.schema, spec, catalog_options=s3_options)
    commit_user = str(uuid.uuid4())
    if branch is not None:
        table = table.branch(branch)
    base = table.latest_snapshot()
    size = estimated_bytes(df)
    on_driver = limit > 0 and size is not None and size <= limit
    if on_driver:
        specs = None if overwrite_partitions is None else overwrite_partitions_option(
            _json(overwrite_partitions), table=table.identifier)  # the values as the data source gets them
        write_on_driver(df, table, mode=mode, overwrite_partitions=specs, commit_user=commit_user)
    else:
        routed = route(df, table_path, num_partitions=num_partitions, options=s3_options)
        writer = (routed.write.format(FORMAT).mode(mode).options(**catalog_options(s3_options))
                  .option(COMMIT_USER, commit_user).option(ROUTED, "true"))
        if branch is not None:
            writer = writer.option("branch", branch)
        if overwrite_partitions is not None:
            writer = writer.option(OVERWRITE_PARTITIONS, _json(overwrite_partitions))
        writer.save(table_path)
    ours = [s.id for s in open_branch(table_path, s3_options, branch).snapshots()
            if s.commit_user == commit_user and (base is None or s.id > base.id)]
    return SparkWriteResult(snapshot_id=max(ours) if ours else None,
                            path="driver" if on_driver else "distributed", estimated_bytes=size,
                            driver_max_bytes=limit)


def route(df: DataFrame, table_path: str, *, num_partitions: int | None = None,
          options: Mapping[str, str] | None = None) -> DataFrame:
    """``df`` repartitioned so that each bucket (fixed) or partition (dynamic bucket) of the table is in one task."""
    table = open_table(table_path, options=options)
    unit = single_writer_unit(table)
    if unit is None:
        return df
    partition_keys = [col(k) for k in table.partition_keys]
    n = num_partitions or int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or 200)
    if unit == "partition":
        return df.repartition(n, *partition_keys) if partition_keys else df.repartition(1)
    bucket_keys = list(table.schema.bucket_keys)
    missing = [k for k in bucket_keys if k not in df.columns]
    if missing:
        raise SchemaError(f"table {table.identifier!r}: the DataFrame lacks the bucket-key columns {missing}")
    bucket = arrow_udf(_bucket_function(table_path, bucket_keys, dict(options or {})), IntegerType())  # type: ignore[call-overload]
    with_bucket = df.withColumn(BUCKET_COLUMN, bucket(*[col(k) for k in bucket_keys]))
    return with_bucket.repartition(n, *partition_keys, col(BUCKET_COLUMN)).drop(BUCKET_COLUMN)


def _bucket_function(table_path: str, bucket_keys: list[str], options: dict[str, str]):  # type: ignore[no-untyped-def]
    """The Arrow UDF body (runs on executors): the bucket of each row, from its bucket-key columns."""

    opened: list[Table] = []  # one table per task (the function is unpickled once per task)

    def buckets(*columns: pa.Array) -> pa.Array:
        if not opened:
            opened.append(open_table(table_path, options=options))
        table = opened[0]
        data = pa.Table.from_arrays(list(columns), names=bucket_keys)
        return pa.array(table.bucket_ids(data), type=pa.int32())

    return buckets


def _json(specs: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps([{k: str(v) if v is not None else None for k, v in s.items()} for s in specs])
