"""Incremental inputs: a downstream asset reads only what changed upstream since its own last materialization.

Ask for it with ``AssetIn(metadata={"incremental": True})``. The input is the upstream table's changes
(``table.changes(consumed, current)``) with a ``_row_kind`` column (+I, -U, +U, -D); the first run reads the
whole table as +I. The cursor is Dagster's own record: the load adds ``paimon/consumed_snapshot/<upstream>``
to the downstream's materialization metadata, so it advances only when that materialization happens. A failed
run records nothing and its rerun reads the same changes again, plus any newer ones: nothing is skipped or
counted twice.
"""

from dataclasses import dataclass

import dagster as dg

from lakehouse_assets.table_spec import PaimonAssetError, raw

CURSOR_PREFIX = "paimon/consumed_snapshot/"
INCREMENTAL = "incremental"


def cursor_key(upstream: dg.AssetKey) -> str:
    """The materialization metadata key holding the upstream snapshot a downstream asset consumed."""
    return CURSOR_PREFIX + upstream.to_user_string()


def wants_incremental(context: dg.InputContext) -> bool:
    value = raw(context.definition_metadata.get(INCREMENTAL, False))
    if not isinstance(value, bool):
        raise PaimonAssetError(
            f"input {context.name!r} of {context.op_def.name!r}: metadata 'incremental' must be True or False, "
            f"not {value!r}"
        )
    return value


@dataclass(frozen=True)
class IncrementalCursor:
    """Reads and records the consumed upstream snapshot for the assets one step materializes."""

    context: dg.InputContext

    @property
    def _asset_keys(self) -> list[dg.AssetKey]:
        step = self.context.step_context
        assets_def = step.assets_def
        where = f"input {self.context.name!r} of {self.context.op_def.name!r}"
        if assets_def is None or not assets_def.keys:
            raise PaimonAssetError(f"{where}: incremental inputs need an asset downstream (not an op)")
        if assets_def.partitions_def is not None:
            raise PaimonAssetError(
                f"{where}: incremental inputs need an unpartitioned downstream asset (its cursor is per asset); "
                "read the upstream partitions instead"
            )
        return sorted(assets_def.keys, key=lambda k: k.to_user_string())

    def consumed(self, upstream: dg.AssetKey) -> int | None:
        """The upstream snapshot the latest materialization of these assets consumed (None: never)."""
        key = cursor_key(upstream)
        latest: dg.EventLogRecord | None = None
        for asset_key in self._asset_keys:
            record = self.context.instance.fetch_materializations(asset_key, limit=1).records
            if not record:
                continue
            materialization = record[0].asset_materialization
            if materialization is not None and key in materialization.metadata and (
                latest is None or record[0].storage_id > latest.storage_id
            ):
                latest = record[0]
        if latest is None:
            return None
        value = latest.asset_materialization.metadata[key]
        return int(raw(value))

    def record(self, upstream: dg.AssetKey, snapshot_id: int) -> None:
        """Add the consumed snapshot to the materialization metadata of every asset of the step."""
        for asset_key in self._asset_keys:
            self.context.step_context.add_asset_metadata(
                {cursor_key(upstream): dg.MetadataValue.int(snapshot_id)}, asset_key=asset_key
            )
