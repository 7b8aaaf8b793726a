"""Incremental inputs: a downstream asset reads only what changed upstream since its own last materialization.

Ask for it with ``AssetIn(metadata={"incremental": True})``. The input is the upstream table's changes
(``table.changes(consumed, current)``) with a ``_row_kind`` column (+I, -U, +U, -D); the first run reads the
whole table as +I. The cursor is Dagster's own record: the load adds ``paimon/consumed_snapshot/<upstream>``
to the downstream's materialization metadata, so it advances only when that materialization happens. A failed
run records nothing and its rerun reads the same changes again, plus any newer ones: nothing is skipped or
counted twice.

Each incremental downstream is also a Paimon consumer of its upstream table (``consumer/consumer-<id>``, id
`consumer_id` of the downstream's asset key): its ``nextSnapshot`` is the snapshot the downstream consumed last, so
snapshot expiration (ours, Spark's and Java's) keeps every snapshot the downstream has not read, however long it is
paused. The IO manager sets it when the downstream's output is stored (after its compute succeeded), and again when
the next run loads the input (from Dagster's cursor, which only successful materializations carry: a failed run
never advances it; this also refreshes the file's time). The consumer pins the snapshot read last, not the one
after it: an overwrite right after it is read as a replacement of that snapshot's rows. A downstream removed from
the code location leaves its consumer behind; the table option ``consumer.expiration-time`` (e.g. '7 d') deletes
consumers not refreshed for that long, and ``table.delete_consumer(id)`` at once.

Paimon's incremental read (``table.changes``, like Java's) skips OVERWRITE snapshots. Here an overwrite is not
lost: the rows of the partitions it replaced are retracted (-D, as of the snapshot before) and the new rows
inserted (+I), in commit order between the incremental pieces (`change_plan`).
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg

from lakehouse_assets.table_spec import PaimonAssetError, raw
from table_format import PINNING_CONSUMER_PREFIX, CommitKind, Table, snapshot_summary

CURSOR_PREFIX = "paimon/consumed_snapshot/"
INCREMENTAL = "incremental"
_PAGE = 100


def consumer_id(downstream: dg.AssetKey) -> str:
    """The Paimon consumer id of an incremental downstream asset: ``dagster-<key path joined by '.'>``."""
    return PINNING_CONSUMER_PREFIX + re.sub(r"[^A-Za-z0-9_.\-]", "_", ".".join(downstream.path))


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

    @property
    def consumer_id(self) -> str:
        """The Paimon consumer id of the step's downstream asset (the first of its keys)."""
        return consumer_id(self._asset_keys[0])

    @property
    def step_key(self) -> tuple[str, str]:
        return self.context.step_context.run_id, self.context.step_context.step.key

    def consumed(self, upstream: dg.AssetKey) -> int | None:
        """The upstream snapshot consumed by the latest materialization that recorded one (None: never).

        Materializations without the cursor (a maintenance job reporting a compaction of this asset's table, a
        manual report) are skipped, so they never reset it.
        """
        key = cursor_key(upstream)
        found = [r for r in (self._latest_with(asset_key, key) for asset_key in self._asset_keys) if r is not None]
        if not found:
            return None
        latest = max(found, key=lambda r: r.storage_id)
        return int(raw(latest.asset_materialization.metadata[key]))

    def _latest_with(self, asset_key: dg.AssetKey, key: str) -> dg.EventLogRecord | None:
        cursor = None
        while True:
            page = self.context.instance.fetch_materializations(asset_key, limit=_PAGE, cursor=cursor)
            for record in page.records:
                materialization = record.asset_materialization
                if materialization is not None and key in materialization.metadata:
                    return record
            if not page.has_more:
                return None
            cursor = page.cursor

    def record(self, upstream: dg.AssetKey, snapshot_id: int) -> None:
        """Add the consumed snapshot to the materialization metadata of every asset of the step."""
        for asset_key in self._asset_keys:
            self.context.step_context.add_asset_metadata(
                {cursor_key(upstream): dg.MetadataValue.int(snapshot_id)}, asset_key=asset_key
            )


@dataclass(frozen=True)
class ChangeStep:
    """One piece of the changes between two snapshots, in commit order.

    ``kind``: "changes" (``table.changes(start, end)``), "replace" (the rows of ``partitions`` at ``start`` as -D,
    then at ``end`` as +I; ``partitions`` None: the whole table) or "snapshot" (every row of ``end`` as +I).
    """

    kind: str
    start: int | None
    end: int
    partitions: tuple[Mapping[str, Any], ...] | None = None

    def partition_filter(self) -> list[Any] | None:
        """A DNF filter of the replaced partitions (None: the whole table)."""
        if self.partitions is None:
            return None
        return [[(column, "=", value) for column, value in spec.items()] for spec in self.partitions]


def change_plan(table: Table, consumed: int | None, latest: int, *, where: str) -> list[ChangeStep]:
    """The steps reading every change after snapshot `consumed` up to `latest` (all of `latest` if None)."""
    if consumed is None:
        return [ChangeStep("snapshot", None, latest)]
    kinds = {s.id: s.commit_kind for s in table.snapshots() if consumed <= s.id <= latest}
    missing = [i for i in range(consumed, latest + 1) if i not in kinds]
    if missing:
        raise PaimonAssetError(
            f"{where}: snapshot {missing[0]} (consumed last: {consumed}) has expired, so the changes since are "
            "lost; keep snapshots longer (snapshot.time-retained) than the downstream's update interval"
        )
    steps: list[ChangeStep] = []
    start = consumed
    for snapshot_id in range(consumed + 1, latest + 1):
        if kinds[snapshot_id] != CommitKind.OVERWRITE:
            continue
        if start < snapshot_id - 1:
            steps.append(ChangeStep("changes", start, snapshot_id - 1))
        summary = snapshot_summary(table, snapshot_id)
        partitions = summary.delta_partitions if summary is not None and table.partition_keys else None
        if partitions is None or partitions:
            steps.append(ChangeStep("replace", snapshot_id - 1, snapshot_id, partitions))
        start = snapshot_id
    if start < latest or not steps:
        steps.append(ChangeStep("changes", start, latest))
    return steps


def plan_steps(steps: Sequence[ChangeStep]) -> str:
    """A log line of the plan."""
    return ", ".join(f"{s.kind}({s.start},{s.end}{'' if s.partitions is None else f' {list(s.partitions)}'})"
                     for s in steps)
