"""Asset checks of table health, applied to Paimon table assets by `build_table_health_checks`.

Per table asset, one multi-asset check evaluates four checks against the table's latest snapshot:

* ``sorted_runs_below_stop_trigger`` (ERROR): no bucket has ``num-sorted-run.stop-trigger`` sorted runs
  (writers would stall);
* ``small_files`` (WARN): no bucket holds ``compaction.min.file-num`` files below 0.7 x ``target-file-size``;
* ``snapshots_within_retention`` (WARN): snapshot expiration by the table's options would expire nothing;
* ``schema_as_declared`` (ERROR): the asset's declared ``dagster/column_schema`` equals the table's columns and types.
"""

from collections.abc import Iterable, Iterator, Sequence

import dagster as dg
import pyarrow as pa

from lakehouse_assets.health import retention_status, table_health
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
                                   metadata={"columns": list(actual)})
    missing = sorted(set(declared) - set(actual))
    extra = sorted(set(actual) - set(declared))
    mismatched = {c: f"declared {declared[c]}, table {actual[c]}" for c in declared
                  if c in actual and declared[c] != actual[c]}
    return dg.AssetCheckResult(
        asset_key=key, check_name="schema_as_declared", passed=not (missing or extra or mismatched),
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"missing_columns": missing, "undeclared_columns": extra, "type_mismatches": mismatched})


def evaluate_table_checks(key: dg.AssetKey, table: Table, declared: dict[str, str] | None
                          ) -> list[dg.AssetCheckResult]:
    """The four health checks of one table (see the module docstring)."""
    health = table_health(table)
    retention = retention_status(table)
    t = health.thresholds
    return [
        dg.AssetCheckResult(
            asset_key=key, check_name="sorted_runs_below_stop_trigger", passed=not health.writers_stalled,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={"max_sorted_runs_per_bucket": health.max_sorted_runs, "stop_trigger": t.stop_trigger,
                      "compaction_trigger": t.compaction_trigger}),
        dg.AssetCheckResult(
            asset_key=key, check_name="small_files", passed=health.max_small_files < t.min_small_files,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"max_small_files_per_bucket": health.max_small_files, "small_files": health.small_file_count,
                      "files": health.file_count, "small_file_bytes": t.small_file_size,
                      "compaction_min_file_num": t.min_small_files}),
        dg.AssetCheckResult(
            asset_key=key, check_name="snapshots_within_retention", passed=retention.within_retention,
            severity=dg.AssetCheckSeverity.WARN,
            metadata={"snapshots": retention.snapshot_count, "expirable": list(retention.expirable_snapshots),
                      **health.consumer_metadata()}),
        _schema_result(key, table, declared),
    ]


def _missing_table(key: dg.AssetKey, identifier: str) -> Iterator[dg.AssetCheckResult]:
    for name in CHECK_NAMES:
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
    )
    def table_health_check(paimon_catalog: PaimonCatalogResource) -> Iterable[dg.AssetCheckResult]:
        try:
            table = paimon_catalog.catalog().load_table(identifier)
        except TableNotFoundError:
            yield from _missing_table(key, identifier)
            return
        yield from evaluate_table_checks(key, table, declared)

    return table_health_check


def build_table_health_checks(assets: Sequence[dg.AssetsDefinition], *,
                              default_database: str = DEFAULT_DATABASE) -> list[dg.AssetChecksDefinition]:
    """Table-health checks for every asset key of `assets` (each one a Paimon table)."""
    return [_health_check(a, key, default_database) for a in assets for key in a.keys]
