"""What a maintenance run did to one table, reported on that table's asset page.

A change (a new snapshot, expired snapshots, deleted files) is an `AssetMaterialization` of the table's asset with
the IO manager's metadata (``dagster/*`` and ``paimon/*`` keys of the new state) plus ``maintenance/*`` keys; a dry
run or a no-op is an `AssetObservation`, so the asset's history shows every maintenance run either way.

A materialization by a maintenance job does not change what an incremental asset has consumed: the
``paimon/consumed_snapshot/*`` cursor of its latest materialization is carried over, so its next run goes on
from there instead of re-reading its upstream from the start.
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


def consumed_cursors(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict[str, Any]:
    """The incremental-input cursor keys of the asset's latest materialization (empty when it has none)."""
    records = instance.fetch_materializations(key, limit=1).records
    materialization = records[0].asset_materialization if records else None
    if materialization is None:
        return {}
    return {k: v for k, v in materialization.metadata.items() if k.startswith(CURSOR_PREFIX)}


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
        metadata = {**table_metadata(self.table), **self.maintenance_metadata(),
                    **consumed_cursors(instance, self.asset_key)}
        return dg.AssetMaterialization(asset_key=self.asset_key, description=self.description, metadata=metadata)
