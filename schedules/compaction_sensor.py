"""`compaction_sensor`: requests a `compact_tables` run for each table whose layout passed its compaction triggers.

Each tick looks only at tables with a snapshot the cursor has not seen (cursor: JSON table -> snapshot id), and a
run key is ``compact:<table>@<snapshot>``: one request per table and snapshot, so it never floods. The compaction's
own COMPACT snapshot is seen on the next tick and, its buckets compacted, requests nothing.
`build_compaction_sensor` makes one with another interval, table selection or default status.
"""

import json
from collections.abc import Callable, Sequence

import dagster as dg

from jobs.maintenance import CompactConfig, compact_tables
from lakehouse_assets import PaimonCatalogResource
from lakehouse_assets.health import table_health
from table_format import TableFormatError


def compaction_requests(catalog: PaimonCatalogResource, cursor: str | None, *,
                        log: Callable[[str], None], tables: Sequence[str] = ()) -> dg.SensorResult:
    """The run requests of one tick over `tables` (empty: every table of the warehouse), and the cursor after it.
    A table that cannot be read is logged and skipped (its cursor not advanced, so the next tick looks again); the
    other tables are still served."""
    seen: dict[str, int] = json.loads(cursor) if cursor else {}
    requests = []
    for identifier in list(tables) or catalog.table_identifiers():
        try:
            table = catalog.load_table(identifier)
            latest = table.latest_snapshot()
            if latest is None or seen.get(identifier) == latest.id:
                continue
            health = table_health(table)
        except TableFormatError as exc:
            log(f"compaction_sensor: skipped table {identifier!r}: {exc}")
            continue
        seen[identifier] = latest.id
        if not health.compaction_due:
            continue
        requests.append(dg.RunRequest(
            run_key=f"compact:{identifier}@{latest.id}",
            run_config=dg.RunConfig(ops={"compact_tables_op": CompactConfig(tables=[identifier])}),
            tags={"paimon/table": identifier, "paimon/snapshot_id": str(latest.id),
                  "paimon/max_sorted_runs": str(health.max_sorted_runs),
                  "paimon/max_small_files": str(health.max_small_files)},
        ))
    next_cursor = json.dumps(seen, sort_keys=True)
    if requests:
        return dg.SensorResult(run_requests=requests, cursor=next_cursor)
    return dg.SensorResult(skip_reason=dg.SkipReason("no table passed its compaction triggers"), cursor=next_cursor)


def build_compaction_sensor(*, tables: Sequence[str] = (), minimum_interval_seconds: int = 60,
                            default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
                            name: str = "compaction_sensor") -> dg.SensorDefinition:
    """The compaction sensor over `tables` ('database.table'; empty: every table of the warehouse)."""
    selected = tuple(tables)
    which = ", ".join(selected) if selected else "every table"

    @dg.sensor(name=name, job=compact_tables, minimum_interval_seconds=minimum_interval_seconds,
               default_status=default_status,
               description=f"Compacts tables ({which}) whose sorted runs per bucket or small files pass the tables' "
                           "own triggers")
    def _sensor(context: dg.SensorEvaluationContext, paimon_catalog: PaimonCatalogResource) -> dg.SensorResult:
        return compaction_requests(paimon_catalog, context.cursor, log=context.log.warning, tables=selected)

    return _sensor


compaction_sensor = build_compaction_sensor()
