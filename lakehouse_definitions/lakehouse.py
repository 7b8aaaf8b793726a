"""`paimon_lakehouse_definitions`: the jobs, sensor, schedules, observations, checks and resources of one warehouse.

    defs = dg.Definitions.merge(
        dg.Definitions(assets=[orders, revenue]),
        paimon_lakehouse_definitions(warehouse="s3://bucket/wh", options={"s3.secret-key": dg.EnvVar("S3_SECRET")},
                                     observe=[ObservedTable(table="raw.clicks", deps=["raw.sessions"])],
                                     maintenance=MaintenancePolicy(tables=["shop.orders"]),
                                     checked_assets=[orders, revenue]),
    )

The `dg` component `PaimonLakehouse` (component.py) builds the same from ``defs.yaml``. Secrets (``s3.access-key``,
``s3.secret-key``, ``s3.session-token``) go in as `dg.EnvVar`, so the Dagster UI shows the variable's name only.
"""

import os
from collections.abc import Collection, Mapping, Sequence

import dagster as dg

from jobs.maintenance import MAINTENANCE_JOBS, RetentionConfig
from lakehouse_assets import (
    PaimonCatalogResource,
    PaimonIOManager,
    default_warehouse,
    paimon_observable_source,
    pyspark_resource,
    table_asset_key,
)
from lakehouse_assets.checks import build_table_health_checks
from lakehouse_assets.table_spec import DEFAULT_DATABASE, table_spec
from lakehouse_definitions.policy import (
    IOManagerPolicy,
    MaintenancePolicy,
    ObservedTable,
    check_spark_master,
)
from schedules import (
    build_compaction_sensor,
    build_expire_schedule,
    build_orphan_schedule,
    checks_after_maintenance,
    table_health_checks,
)
from table_format import FileSystemCatalog, TableFormatError
from table_format.io.s3_config import S3Config

SECRET_OPTIONS = ("s3.access-key", "s3.secret-key", "s3.session-token", "s3.access.key", "s3.secret.key")
DEFAULT_IO_MANAGER = IOManagerPolicy()


class LakehouseConfigError(TableFormatError):
    """The lakehouse's configuration (warehouse, options, tables, policy) is wrong; names the field at fault."""


def _status(on: bool, kind: type[dg.DefaultSensorStatus] | type[dg.DefaultScheduleStatus]):
    return kind.RUNNING if on else kind.STOPPED


def resolve_warehouse(warehouse: str | None, *, base: str | None = None) -> str:
    """A URI as given; a local path made absolute (relative to `base`, default the working directory)."""
    warehouse = warehouse or default_warehouse()
    if "://" in warehouse:
        return warehouse
    return os.path.abspath(os.path.join(base or os.getcwd(), warehouse))


def open_catalog(warehouse: str, options: Mapping[str, str]) -> FileSystemCatalog:
    """The catalog (option keys and values checked; secrets from their environment variables)."""
    values = {k: (v.get_value() if isinstance(v, dg.EnvVar) else v) for k, v in options.items()}
    values = {k: v for k, v in values.items() if v}
    try:
        S3Config.resolve(values, env={})
    except TableFormatError as exc:
        raise LakehouseConfigError(f"options: {exc}") from exc
    if values and "://" not in warehouse:
        raise LakehouseConfigError(f"options {sorted(values)} apply to s3:// warehouses only, not {warehouse!r}")
    try:
        return FileSystemCatalog(warehouse, options=values or None)
    except TableFormatError as exc:
        raise LakehouseConfigError(f"warehouse {warehouse!r}: {exc}") from exc


def check_tables(catalog: FileSystemCatalog, maintenance: MaintenancePolicy,
                 observe: Sequence[ObservedTable], defined: Collection[str] = ()) -> list[str]:
    """The warehouse's tables; each of `maintenance.tables` must be one of them, an observed table, or a table an
    asset of the code location writes (`defined`: it exists once the asset is materialized)."""
    present = sorted(f"{db}.{t}" for db in catalog.list_databases() for t in catalog.list_tables(db))
    known = set(present) | {o.table for o in observe} | set(defined)
    for i, identifier in enumerate(maintenance.tables):
        if identifier not in known:
            raise LakehouseConfigError(
                f"maintenance.tables[{i}]: table {identifier!r} is neither in warehouse {catalog.warehouse_uri!r} "
                f"(tables: {present or 'none'}) nor observed; create it first or fix the name")
    return present


def _health_checks(checked_assets: Sequence[dg.AssetsDefinition], identifiers: Sequence[str],
                   default_database: str) -> list[dg.AssetChecksDefinition]:
    """The table health checks of `checked_assets` (their declared schemas too) and of the other tables by key."""
    covered = {key for a in checked_assets for key in a.keys}
    others = [dg.AssetSpec(key) for key in dict.fromkeys(table_asset_key(i) for i in identifiers)
              if key not in covered]
    external = [dg.AssetsDefinition(specs=others)] if others else []
    return build_table_health_checks([*checked_assets, *external], default_database=default_database)


def paimon_lakehouse_definitions(
    *,
    warehouse: str | None = None,
    options: Mapping[str, str] | None = None,
    spark_master: str | None = None,
    observe: Sequence[ObservedTable] = (),
    maintenance: MaintenancePolicy | None = None,
    io_manager: IOManagerPolicy | None = DEFAULT_IO_MANAGER,
    checked_assets: Sequence[dg.AssetsDefinition] = (),
    default_database: str = DEFAULT_DATABASE,
) -> dg.Definitions:
    """The lakehouse over `warehouse` (default ``LAKEHOUSE_WAREHOUSE``, then ./warehouse) with catalog `options`
    (``s3.*``; secrets as `dg.EnvVar`) on Spark `spark_master` (default ``SPARK_MASTER``, then local[2]):

    * resources ``paimon_catalog``, ``pyspark`` and ``io_manager`` (a `PaimonIOManager` by `io_manager`; None:
      no ``io_manager`` resource);
    * the maintenance jobs, the compaction sensor, the expiry and orphan-removal schedules of `maintenance`;
    * with health checks: the checks-only job `table_health_checks` and the `checks_after_maintenance` sensor that
      runs it for the tables each maintenance run touched (so checks show the table as maintenance left it);
    * an observable source asset per `observe` entry (with its deps: lineage);
    * table health checks on `checked_assets` and on `maintenance.tables` (empty: every table of the warehouse
      now) plus the observed tables.
    """
    maintenance = maintenance or MaintenancePolicy()
    try:
        check_spark_master(spark_master)
    except ValueError as exc:
        raise LakehouseConfigError(f"spark_master: {exc}") from None
    warehouse = resolve_warehouse(warehouse)
    options = dict(options or {})
    catalog = open_catalog(warehouse, options)
    defined = [table_spec(key, dict(a.metadata_by_key.get(key, {})), default_database=default_database).identifier
               for a in checked_assets for key in a.keys]
    present = check_tables(catalog, maintenance, observe, defined)
    tables = list(maintenance.tables)

    observed = [paimon_observable_source(
        o.table, description=o.description, group_name=o.group_name, deps=o.deps,
        automation_condition=dg.AutomationCondition.cron_tick_passed(o.cron) if o.cron else None) for o in observe]
    expire = maintenance.expire_snapshots
    orphans = maintenance.remove_orphan_files
    checks: list[dg.AssetChecksDefinition] = []
    if maintenance.health_checks:
        checks = _health_checks([*checked_assets, *observed], [*(tables or present), *(o.table for o in observe)],
                                default_database)
    resources: dict[str, object] = {
        "paimon_catalog": PaimonCatalogResource(warehouse=warehouse, options=options),
        "pyspark": pyspark_resource(master=spark_master),
    }
    if io_manager is not None:
        resources["io_manager"] = PaimonIOManager(warehouse=warehouse, options=options, mode=io_manager.mode,
                                                  schema_mode=io_manager.schema_mode)
    return dg.Definitions(
        assets=observed,
        asset_checks=checks,
        jobs=[*MAINTENANCE_JOBS, *([table_health_checks] if checks else [])],
        sensors=[build_compaction_sensor(
            tables=tables, minimum_interval_seconds=maintenance.compaction.interval_seconds,
            default_status=_status(maintenance.compaction.enabled, dg.DefaultSensorStatus)),
            *([checks_after_maintenance] if checks else [])],
        schedules=[
            build_expire_schedule(
                cron=expire.cron, tables=tables, default_status=_status(expire.enabled, dg.DefaultScheduleStatus),
                retention=RetentionConfig(retain_min=expire.retain_min, retain_max=expire.retain_max,
                                          older_than=expire.older_than)),
            build_orphan_schedule(cron=orphans.cron, older_than=orphans.older_than, tables=tables,
                                  default_status=_status(orphans.enabled, dg.DefaultScheduleStatus)),
        ],
        resources=resources,
    )
