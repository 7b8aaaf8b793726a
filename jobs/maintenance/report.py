"""What a maintenance run did to one table, reported on that table's asset page.

A change (a new snapshot, expired snapshots, deleted files) is an `AssetMaterialization` of the table's asset; a
dry run or a no-op is an `AssetObservation`, so the asset's history shows every maintenance run either way.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from lakehouse_assets.health import TableHealth
from table_format import Table


def asset_key_of(identifier: str) -> dg.AssetKey:
    """'database.table' -> AssetKey([database, table]), the IO manager's mapping."""
    return dg.AssetKey(identifier.split("."))


@dataclass(frozen=True)
class MaintenanceReport:
    """One table's maintenance outcome: the layout before and after, and the operation's own numbers."""

    job: str
    table: Table
    before: TableHealth
    after: TableHealth
    changed: bool
    details: Mapping[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        latest = self.table.latest_snapshot()
        return {
            "maintenance/job": self.job,
            "maintenance/changed": self.changed,
            "paimon/snapshot_id": latest.id if latest else None,
            "paimon/commit_kind": latest.commit_kind.value if latest else None,
            "paimon/files_before": self.before.file_count,
            "paimon/files_after": self.after.file_count,
            "paimon/snapshots_before": self.before.snapshot_count,
            "paimon/snapshots_after": self.after.snapshot_count,
            "paimon/max_sorted_runs_before": self.before.max_sorted_runs,
            "paimon/max_sorted_runs_after": self.after.max_sorted_runs,
            **{f"maintenance/{k}": v for k, v in self.details.items()},
            "dagster/table_name": self.table.identifier,
        }

    def event(self) -> dg.AssetMaterialization | dg.AssetObservation:
        key = asset_key_of(self.table.identifier)
        what = "changed" if self.changed else "no change"
        description = f"{self.job}: {what} ({self.before.file_count} -> {self.after.file_count} files)"
        if self.changed:
            return dg.AssetMaterialization(asset_key=key, description=description, metadata=self.metadata())
        return dg.AssetObservation(asset_key=key, description=description, metadata=self.metadata())
