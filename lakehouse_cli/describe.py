"""What `describe` and `snapshots` print about a table: its schema, keys, layout, options and snapshots."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from table_format import CoreOptions, Snapshot, Table, TableFormatError

# the keys whose defaults table_format knows (CoreOptions and the post-commit options); for these an explicitly
# set default value ("bucket" = "-1", "snapshot.time-retained" = "60 min") is not shown as a difference
_KNOWN_KEYS = frozenset({
    "bucket", "file.format", "file.compression", "file.compression.zstd-level", "manifest.compression",
    "manifest.target-file-size", "manifest.merge-min-count", "target-file-size", "merge-engine",
    "changelog-producer", "partition.default-name", "sequence.field", "commit.max-retries", "commit.min-retry-wait",
    "commit.max-retry-wait", "snapshot.num-retained.min", "snapshot.num-retained.max", "snapshot.time-retained",
    "snapshot.expire.limit", "num-sorted-run.compaction-trigger", "write-only", "deletion-vectors.enabled",
    "dynamic-bucket.target-row-num", "dynamic-bucket.max-buckets", "read.batch-size",
    "snapshot.expire.execution-mode", "partition.expiration-check-interval", "partition.expiration-strategy",
    "end-input.check-partition-expire", "tag.automatic-creation", "tag.creation-period", "tag.creation-delay",
    "tag.period-formatter", "tag.automatic-completion", "sink.watermark-time-zone",
})


def _parsed(options: dict[str, str], has_pk: bool) -> tuple[Any, Any]:
    core = CoreOptions.parse(options, has_primary_key=has_pk)
    return dataclasses.replace(core, raw={}), core.post_commit()


def non_default_options(table: Table) -> dict[str, str]:
    """The table's options minus those set to Paimon's default value."""
    has_pk = bool(table.primary_keys)
    defaults = _parsed({}, has_pk)
    out = {}
    for key, value in sorted(table.options.items()):
        if key in _KNOWN_KEYS:
            try:
                if _parsed({key: value}, has_pk) == defaults:
                    continue
            except TableFormatError:
                pass  # an invalid value is certainly worth showing
        out[key] = value
    return out


def snapshot_json(snapshot: Snapshot) -> dict[str, Any]:
    """One snapshot as in `lakehouse snapshots --json` (commit_time: ISO 8601 UTC)."""
    commit_time = dt.datetime.fromtimestamp(snapshot.time_millis / 1000, dt.timezone.utc)
    return {
        "snapshot_id": snapshot.id,
        "schema_id": snapshot.schema_id,
        "commit_kind": snapshot.commit_kind.value,
        "commit_time": commit_time.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "commit_user": snapshot.commit_user,
        "commit_identifier": snapshot.commit_identifier,
        "total_record_count": snapshot.total_record_count,
        "delta_record_count": snapshot.delta_record_count,
        "changelog_record_count": snapshot.changelog_record_count,
        "watermark": snapshot.watermark,
    }


def describe_json(table: Table) -> dict[str, Any]:
    """The document of `lakehouse describe --json`."""
    schema = table.schema
    options = CoreOptions.parse(table.options, has_primary_key=bool(table.primary_keys))
    latest = table.latest_snapshot()
    return {
        "table": table.identifier,
        "path": table.path,
        "schema_id": schema.id,
        "comment": schema.comment,
        "fields": [
            {"id": f.id, "name": f.name, "type": f.type.as_sql(), "nullable": f.type.nullable,
             "comment": f.description}
            for f in schema.fields
        ],
        "primary_keys": list(schema.primary_keys),
        "partition_keys": list(schema.partition_keys),
        "bucket_keys": list(schema.bucket_keys),
        "bucket": options.bucket,
        "bucket_mode": options.bucket_mode(has_primary_key=bool(table.primary_keys)).value,
        "merge_engine": options.merge_engine.value if table.primary_keys else None,
        "changelog_producer": options.changelog_producer.value,
        "file_format": options.file_format,
        "options": non_default_options(table),
        "snapshot_count": len(table.snapshots()),
        "tags": table.tags(),
        "latest_snapshot": snapshot_json(latest) if latest is not None else None,
        "iceberg_metadata": _iceberg(table),
    }


def _iceberg(table: Table) -> str | None:
    location = table.iceberg_metadata_dir()
    if location is None:
        return None
    dvs = "; deletion vectors as Iceberg v3 Puffin deletion vectors" if table.store.options.deletion_vectors_enabled else ""
    if table.primary_keys:
        return f"{location} (highest-level files only: rows show in Iceberg readers after a full compaction{dvs})"
    return f"{location} ({dvs[2:]})" if dvs else location
