"""What a maintenance run did to one table, reported on that table's asset page.

A change (a new snapshot, expired snapshots, deleted files) is an `AssetMaterialization` of the table's asset with
the IO manager's metadata (``dagster/*`` and ``paimon/*`` keys of the new state) plus ``maintenance/*`` keys; a dry
run or a no-op is an `AssetObservation`, so the asset's history shows every maintenance run either way.

Maintenance does not change a table's rows, so its materialization carries over from the asset's latest one the
data version (downstream assets stay in sync) and the ``paimon/consumed_snapshot/*`` cursor of an incremental asset
(its next run goes on from there instead of re-reading its upstream from the start).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from lakehouse_assets import CURSOR_PREFIX, table_metadata
from lakehouse_assets.health import TableHealth
from table_format import Table


def asset_key_of(identifier: str) -> dg.AssetKey:
    """'database.table' -> AssetKey([database, table]), the IO manager's mapping of asset keys to tables."""
    return dg.AssetKey(identifier.split("."))


DATA_VERSION_TAGS = ("dagster/data_version", "dagster/data_version_is_user_provided")


def carried_over(instance: dg.DagsterInstance, key: dg.AssetKey) -> tuple[dict[str, Any], dict[str, str]]:
    """What a maintenance materialization keeps from the asset's latest one: the incremental-input cursor keys
    (metadata) and the data version (tags): the rows did not change, so downstream assets stay in sync."""
    records = instance.fetch_materializations(key, limit=1).records
    if not records or records[0].asset_materialization is None:
        return {}, {}
    metadata = {k: v for k, v in records[0].asset_materialization.metadata.items() if k.startswith(CURSOR_PREFIX)}
    tags = records[0].event_log_entry.tags or {}
    return metadata, {k: tags[k] for k in DATA_VERSION_TAGS if k in tags}


@dataclass(frozen=True)
class MaintenanceReport:
    """One table's maintenance outcome: the layout before and after, and the operation's own numbers."""

    job: str
    table: Table
    before: TableHealth
    after: TableHealth
    changed: bool
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def asset_key(self) -> dg.AssetKey:
        return asset_key_of(self.table.identifier)

    @property
    def description(self) -> str:
        what = "changed" if self.changed else "no change"
        return (f"{self.job}: {what} ({self.before.file_count} -> {self.after.file_count} files, "
                f"{self.before.snapshot_count} -> {self.after.snapshot_count} snapshots)")

    def maintenance_metadata(self) -> dict[str, Any]:
        latest = self.table.latest_snapshot()
        return {
            "maintenance/job": self.job,
            "maintenance/changed": self.changed,
            "maintenance/files_before": self.before.file_count,
            "maintenance/files_after": self.after.file_count,
            "maintenance/snapshots_before": self.before.snapshot_count,
            "maintenance/snapshots_after": self.after.snapshot_count,
            "maintenance/max_sorted_runs_before": self.before.max_sorted_runs,
            "maintenance/max_sorted_runs_after": self.after.max_sorted_runs,
            **{f"maintenance/{k}": v for k, v in self.details.items()},
            "paimon/snapshot_id": latest.id if latest else None,
            "paimon/commit_kind": latest.commit_kind.value if latest else None,
        }

    def event(self, instance: dg.DagsterInstance) -> dg.AssetMaterialization | dg.AssetObservation:
        if not self.changed:
            return dg.AssetObservation(asset_key=self.asset_key, description=self.description,
                                       metadata=self.maintenance_metadata())
        cursors, data_version = carried_over(instance, self.asset_key)
        metadata = {**table_metadata(self.table), **self.maintenance_metadata(), **cursors}
        return dg.AssetMaterialization(asset_key=self.asset_key, description=self.description, metadata=metadata,
                                       tags=data_version)
