"""Asset checks of table health, applied to Paimon table assets by `build_table_health_checks`.

Per table asset one multi-asset check op evaluates, against the table's latest snapshot, whichever of the four
checks a run selected (``can_subset``: each can be executed on its own from the UI, without materializing):

* ``sorted_runs_below_stop_trigger`` (ERROR): no bucket has ``num-sorted-run.stop-trigger`` sorted runs
  (writers would stall);
* ``small_files`` (WARN): no bucket holds ``compaction.min.file-num`` files below 0.7 x ``target-file-size``;
* ``snapshots_within_retention`` (WARN): snapshot expiration by the table's options would expire nothing (the
  metadata also counts the orphan files a `remove_orphan_files` run would delete, and their bytes);
* ``schema_as_declared`` (ERROR): the asset's declared ``dagster/column_schema`` equals the table's columns and types.

Every result carries numeric metadata (sorted runs, small files, snapshots, orphan bytes, ...), which Dagster plots
on the check's page. The maintenance jobs have the checks of the tables they touched run again afterwards
(``schedules.checks_sensor``).
"""

from collections.abc import Collection, Iterable, Iterator, Sequence

import dagster as dg
import pyarrow as pa

from lakehouse_assets.health import TableHealth, retention_status, table_health
from lakehouse_assets.resources import PaimonCatalogResource
from lakehouse_assets.table_spec import DEFAULT_DATABASE, table_spec
from table_format import Table, TableNotFoundError

CHECK_NAMES = ("sorted_runs_below_stop_trigger", "small_files", "snapshots_within_retention", "schema_as_declared")


def declared_column_schema(schema: pa.Schema) -> dg.TableSchema:
    """A pyarrow schema as Dagster's column schema (types as pyarrow spells them; NOT NULL as a constraint)."""
    return dg.TableSchema(columns=[
        dg.TableColumn(name=f.name, type=str(f.type), constraints=dg.TableColumnConstraints(nullable=f.nullable))
        for f in schema
    ])


def _declared_columns(metadata: dict) -> dict[str, str] | None:
    declared = metadata.get("dagster/column_schema")
    schema = declared.value if isinstance(declared, dg.MetadataValue) else declared
    if not isinstance(schema, dg.TableSchema):
        return None
    return {c.name: c.type for c in schema.columns}


def _schema_result(key: dg.AssetKey, table: Table, declared: dict[str, str] | None) -> dg.AssetCheckResult:
    actual = {f.name: str(f.type) for f in table.arrow_schema}
    if declared is None:
        return dg.AssetCheckResult(asset_key=key, check_name="schema_as_declared", passed=True,
                                   description="the asset declares no dagster/column_schema",
                                   metadata={"columns": len(actual), "column_names": list(actual)})
    missing = sorted(set(declared) - set(actual))
    extra = sorted(set(actual) - set(declared))
    mismatched = {c: f"declared {declared[c]}, table {actual[c]}" for c in declared
                  if c in actual and declared[c] != actual[c]}
    return dg.AssetCheckResult(
        asset_key=key, check_name="schema_as_declared", passed=not (missing or extra or mismatched),
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"columns": len(actual), "differences": len(missing) + len(extra) + len(mismatched),
                  "missing_columns": missing, "undeclared_columns": extra, "type_mismatches": mismatched})


def _sorted_runs_result(key: dg.AssetKey, health: TableHealth) -> dg.AssetCheckResult:
    t = health.thresholds
    return dg.AssetCheckResult(
        asset_key=key, check_name="sorted_runs_below_stop_trigger", passed=not health.writers_stalled,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"max_sorted_runs_per_bucket": health.max_sorted_runs, "stop_trigger": t.stop_trigger,
                  "compaction_trigger": t.compaction_trigger, "buckets": health.bucket_count})


def _small_files_result(key: dg.AssetKey, health: TableHealth) -> dg.AssetCheckResult:
    t = health.thresholds
    return dg.AssetCheckResult(
        asset_key=key, check_name="small_files", passed=health.max_small_files < t.min_small_files,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"max_small_files_per_bucket": health.max_small_files, "small_files": health.small_file_count,
                  "files": health.file_count, "bytes": health.total_bytes, "small_file_bytes": t.small_file_size,
                  "compaction_min_file_num": t.min_small_files})


def _retention_result(key: dg.AssetKey, table: Table, health: TableHealth) -> dg.AssetCheckResult:
    retention = retention_status(table)
    orphans = table.maintenance.remove_orphan_files(dry_run=True)  # files older than a day: a listing, no read
    return dg.AssetCheckResult(
        asset_key=key, check_name="snapshots_within_retention", passed=retention.within_retention,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={"snapshots": retention.snapshot_count, "expirable_snapshots": len(retention.expirable_snapshots),
                  "expirable": list(retention.expirable_snapshots), "orphan_files": len(orphans.orphan_files),
                  "orphan_bytes": orphans.bytes_freed, **health.consumer_metadata()})


def evaluate_table_checks(key: dg.AssetKey, table: Table, declared: dict[str, str] | None,
                          names: Collection[str] = CHECK_NAMES) -> list[dg.AssetCheckResult]:
    """The health checks `names` (default: all four, see the module docstring) of one table."""
    wanted = {"sorted_runs_below_stop_trigger", "small_files", "snapshots_within_retention"}
    health = table_health(table) if wanted & set(names) else None
    results = {
        "sorted_runs_below_stop_trigger": lambda: _sorted_runs_result(key, health),
        "small_files": lambda: _small_files_result(key, health),
        "snapshots_within_retention": lambda: _retention_result(key, table, health),
        "schema_as_declared": lambda: _schema_result(key, table, declared),
    }
    return [results[name]() for name in CHECK_NAMES if name in names]


def _missing_table(key: dg.AssetKey, identifier: str, names: Collection[str]) -> Iterator[dg.AssetCheckResult]:
    for name in names:
        yield dg.AssetCheckResult(asset_key=key, check_name=name, passed=False, severity=dg.AssetCheckSeverity.WARN,
                                  description=f"table {identifier!r} does not exist yet (materialize the asset)")


def _health_check(assets_def: dg.AssetsDefinition, key: dg.AssetKey, default_database: str
                  ) -> dg.AssetChecksDefinition:
    metadata = dict(assets_def.metadata_by_key.get(key, {}))
    identifier = table_spec(key, metadata, default_database=default_database).identifier
    declared = _declared_columns(metadata)

    @dg.multi_asset_check(
        name=f"{'__'.join(key.path)}_table_health",
        specs=[dg.AssetCheckSpec(name, asset=key, description=name.replace("_", " ")) for name in CHECK_NAMES],
        description=f"health of Paimon table {identifier}: sorted runs, small files, retention, schema",
        can_subset=True,
    )
    def table_health_check(context: dg.AssetCheckExecutionContext,
                           paimon_catalog: PaimonCatalogResource) -> Iterable[dg.AssetCheckResult]:
        names = [name for name in CHECK_NAMES
                 if dg.AssetCheckKey(key, name) in context.selected_asset_check_keys]
        try:
            table = paimon_catalog.catalog().load_table(identifier)
        except TableNotFoundError:
            yield from _missing_table(key, identifier, names)
            return
        yield from evaluate_table_checks(key, table, declared, names)

    return table_health_check


def build_table_health_checks(assets: Sequence[dg.AssetsDefinition], *,
                              default_database: str = DEFAULT_DATABASE) -> list[dg.AssetChecksDefinition]:
    """Table-health checks for every asset key of `assets` (each one a Paimon table)."""
    return [_health_check(a, key, default_database) for a in assets for key in a.keys]
