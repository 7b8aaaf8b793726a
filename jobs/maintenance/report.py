"""What a maintenance run did to one table, reported on that table's asset page.

Every run is an `AssetObservation` of the table's asset: ``maintenance/*`` keys (the job, files, snapshots and
sorted runs before and after, the operation's own numbers), plus, after a change (a COMPACT or OVERWRITE snapshot,
expired snapshots, deleted files), the IO manager's ``dagster/*`` and ``paimon/*`` keys of the new state.

Maintenance changes no row, so it is not a materialization: the asset's data version stays (downstream assets stay
in sync, only a real write makes them "Unsynced"), the checks evaluated against the latest materialization stay
evaluated, and an incremental asset's ``paimon/consumed_snapshot/*`` cursor stays where its own runs left it. The
observation carries the asset's current data version, so an observable (external) table's version stays too.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from lakehouse_assets import table_metadata
from lakehouse_assets.health import TableHealth
from table_format import Table


def asset_key_of(identifier: str) -> dg.AssetKey:
    """'database.table' -> AssetKey([database, table]), the IO manager's mapping of asset keys to tables."""
    return dg.AssetKey(identifier.split("."))


DATA_VERSION_TAGS = ("dagster/data_version", "dagster/data_version_is_user_provided")


def current_data_version(instance: dg.DagsterInstance, key: dg.AssetKey) -> dict[str, str]:
    """The data version tags of the asset's latest materialization (else observation): what the rows still are."""
    record = instance.get_latest_data_version_record(key)
    if record is None:
        return {}
    tags = record.event_log_entry.tags or {}
    return {k: tags[k] for k in DATA_VERSION_TAGS if k in tags}


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

    def event(self, instance: dg.DagsterInstance) -> dg.AssetObservation:
        """The observation reporting this run on the table's asset (see the module docstring)."""
        metadata = self.maintenance_metadata()
        if self.changed:
            metadata = {**table_metadata(self.table), **metadata}
        return dg.AssetObservation(asset_key=self.asset_key, description=self.description, metadata=metadata,
                                   tags=current_data_version(instance, self.asset_key))
