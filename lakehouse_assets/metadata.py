"""Materialization and observation metadata of Paimon tables: Dagster's standard keys plus the snapshot's."""

from typing import Any

import dagster as dg

from table_format import SnapshotSummary, Table, snapshot_summary

STORAGE_KIND = "paimon"
SNAPSHOT_ID = "paimon/snapshot_id"
# what one commit did: left out of the metadata of a write that committed nothing (they would be an older commit's)
COMMIT_KEYS = ("paimon/commit_kind", "paimon/files_added", "paimon/files_removed", "paimon/snapshot_time")


def paimon_kinds(*others: str) -> set[str]:
    """``kinds`` for an asset stored in Paimon, e.g. ``@asset(kinds=paimon_kinds("polars"))``."""
    return {STORAGE_KIND, *others}


def column_schema(table: Table) -> dg.TableSchema:
    """The table's columns with their Paimon types; key columns are marked in their description."""
    primary, partition = set(table.primary_keys), set(table.partition_keys)
    columns = []
    for f in table.schema.fields:
        roles = [role for role, keys in (("primary key", primary), ("partition key", partition)) if f.name in keys]
        description = "; ".join([*roles, *([f.description] if f.description else [])]) or None
        columns.append(dg.TableColumn(
            name=f.name,
            type=str(f.type),
            description=description,
            constraints=dg.TableColumnConstraints(nullable=f.type.nullable, unique=f.name in primary and len(primary) == 1),
        ))
    return dg.TableSchema(columns=columns)


def row_count(table: Table, summary: SnapshotSummary | None, *, filter: Any = None) -> int:
    """Rows of the merged view at the summary's snapshot (only the partitions in `filter`): exact.

    Reads only the key columns; unfiltered append tables without deletion vectors take the snapshot's count.
    """
    if summary is None:
        return 0
    deletion_vectors = table.options.get("deletion-vectors.enabled", "false").lower() == "true"
    if not table.primary_keys and filter is None and not deletion_vectors:
        return summary.total_record_count
    columns = table.primary_keys or table.arrow_schema.names[:1]
    return table.scan(filter=filter, columns=columns, snapshot_id=summary.snapshot_id).to_arrow().num_rows


def snapshot_metadata(summary: SnapshotSummary) -> dict[str, Any]:
    """The ``paimon/*`` keys of one snapshot."""
    return {
        SNAPSHOT_ID: dg.MetadataValue.int(summary.snapshot_id),
        "paimon/schema_id": dg.MetadataValue.int(summary.schema_id),
        "paimon/commit_kind": summary.commit_kind,
        "paimon/files_added": dg.MetadataValue.int(summary.files_added),
        "paimon/files_removed": dg.MetadataValue.int(summary.files_removed),
        "paimon/file_count": dg.MetadataValue.int(summary.file_count),
        "paimon/total_file_size": dg.MetadataValue.int(summary.total_file_size),
        "paimon/max_sorted_runs_per_bucket": dg.MetadataValue.int(summary.max_sorted_runs),
        "paimon/snapshot_time": dg.MetadataValue.timestamp(summary.time_millis / 1000),
    }


def table_metadata(table: Table, *, partition_filter: Any = None, snapshot_id: int | None = None,
                   committed: bool = True) -> dict[str, Any]:
    """Standard ``dagster/*`` keys and ``paimon/*`` keys of the table at `snapshot_id` (default latest).

    With `partition_filter` (the materialized partitions) ``dagster/partition_row_count`` is added. With
    ``committed=False`` (a write that committed nothing) only the table's state is given, not the latest
    snapshot's commit (``COMMIT_KEYS``), and ``paimon/committed: False`` says so.
    """
    summary = snapshot_summary(table, snapshot_id)
    metadata: dict[str, Any] = {
        "dagster/table_name": table.identifier,
        "dagster/uri": table.uri,
        "dagster/storage_kind": STORAGE_KIND,
        "dagster/column_schema": column_schema(table),
        "dagster/row_count": dg.MetadataValue.int(row_count(table, summary)),
    }
    if partition_filter is not None:
        metadata["dagster/partition_row_count"] = dg.MetadataValue.int(
            row_count(table, summary, filter=partition_filter)
        )
    if summary is not None:
        metadata.update(snapshot_metadata(summary))
    if not committed:
        metadata = {k: v for k, v in metadata.items() if k not in COMMIT_KEYS}
        metadata["paimon/committed"] = False
    return metadata


SPARK_WRITE_PATH = "paimon/spark_write_path"  # "driver" (collected as Arrow, written in process) | "distributed"


def spark_write_metadata(*, path: str, estimated_bytes: int | None, driver_max_bytes: int) -> dict[str, Any]:
    """How a Spark DataFrame was written (jobs.spark.write_detailed): the path, Spark's size estimate of its plan
    (left out when Spark could not size it) and the threshold that chose the path."""
    metadata: dict[str, Any] = {
        SPARK_WRITE_PATH: path,
        "paimon/spark_driver_max_bytes": dg.MetadataValue.int(driver_max_bytes),
    }
    if estimated_bytes is not None:
        metadata["paimon/spark_estimated_bytes"] = dg.MetadataValue.int(estimated_bytes)
    return metadata
