"""The maintenance ops: each resolves its tables up front, then runs the operation table by table on the engine
engine.py picks (in process with table_format, or on PySpark through `jobs.spark`), and reports every table it
touched (report.py) with the engine that ran. Nothing is written before every table and option checked out."""

from collections.abc import Callable, Sequence

import dagster as dg
from dagster_pyspark import PySparkResource

from jobs import spark as spark_maintenance
from jobs.maintenance.config import (
    CompactConfig,
    EngineConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    TableSelection,
)
from jobs.maintenance.engine import (
    EngineChoice,
    Work,
    choose_engine,
    compaction_work,
    engines_summary,
    expiration_work,
    orphan_work,
    rescale_work,
    spark_master_of,
)
from jobs.maintenance.report import MaintenanceReport
from lakehouse_assets import PaimonCatalogResource
from lakehouse_assets.health import TableHealth, table_health
from table_format import Table, TableFormatError

# one table's operation: (changed, details, engine) from the table and its health before
Operation = Callable[[Table, TableHealth], tuple[bool, dict, EngineChoice]]


def resolve_tables(catalog: PaimonCatalogResource, selection: TableSelection) -> list[Table]:
    """The tables named in `selection` (default: every table of every database), all loaded before any work."""
    names = list(selection.tables) or catalog.table_identifiers()
    try:
        return [catalog.load_table(name) for name in names]
    except TableFormatError as exc:
        raise dg.Failure(description=f"maintenance not started, no table touched: {exc}") from exc


def check_partitions(tables: Sequence[Table], partitions: Sequence[dict[str, str]] | None) -> None:
    """Every partition spec must name partition columns of every selected table (checked before any work)."""
    if not partitions:
        return
    for table in tables:
        try:
            table.partition_filter(partitions)
        except TableFormatError as exc:
            raise dg.Failure(description=f"run config 'partitions' {list(partitions)} does not fit table "
                                         f"{table.identifier!r}, no table touched: {exc}") from exc


def check_retention(config: ExpireSnapshotsConfig) -> None:
    low, high = config.retention.retain_min, config.retention.retain_max
    if (low is not None and low < 1) or (low is not None and high is not None and high < low):
        raise dg.Failure(description=f"run config 'retention': retain_min ({low}) must be >= 1 and <= retain_max "
                                     f"({high}); no table touched")


def _engine(config: EngineConfig, work: Work, pyspark: PySparkResource) -> EngineChoice:
    return choose_engine(config.engine, work, threshold_bytes=config.spark_threshold_bytes,
                         threshold_files=config.spark_threshold_files, spark_master=spark_master_of(pyspark),
                         spark_on_local_master=config.spark_on_local_master)


def _run_each(context: dg.OpExecutionContext, job: str, tables: Sequence[Table], operation: Operation) -> None:
    """Run `operation` on each table in turn (each one atomic) and report it with its engine; a failure names its
    table. The op's output metadata says which engine ran for each table."""
    choices: dict[str, EngineChoice] = {}
    for done, table in enumerate(tables):
        before = table_health(table)
        try:
            changed, details, choice = operation(table, before)
        except TableFormatError as exc:
            finished = [t.identifier for t in tables[:done]]
            raise dg.Failure(description=f"{job} failed on table {table.identifier!r} (left as it was; "
                                         f"done before it: {finished}): {exc}") from exc
        choices[table.identifier] = choice
        table = table.refresh()
        report = MaintenanceReport(job=job, table=table, before=before, after=table_health(table),
                                   changed=changed, details={**choice.details(), **details})
        context.log_event(report.event(context.instance))
        context.log.info(f"{table.identifier}: {report.description}, {choice.engine} engine ({choice.reason})")
    context.add_output_metadata(engines_summary(choices))


@dg.op(description="Compact the selected tables (one task per partition and bucket, one commit per table), "
                   "small ones in process, large ones on PySpark (config 'engine')")
def compact_tables_op(context: dg.OpExecutionContext, config: CompactConfig, pyspark: PySparkResource,
                      paimon_catalog: PaimonCatalogResource) -> None:
    tables = resolve_tables(paimon_catalog, config)
    partitions = list(config.partitions) or None
    check_partitions(tables, partitions)

    def compact(table: Table, before: TableHealth) -> tuple[bool, dict, EngineChoice]:
        choice = _engine(config, compaction_work(table, full=config.full, partitions=partitions), pyspark)
        if choice.engine == "spark":
            result = spark_maintenance.compact(pyspark.spark_session, paimon_catalog.table_uri(table.identifier),
                                               full=config.full, partitions=partitions,
                                               options=paimon_catalog.options)
        else:
            result = table.maintenance.compact(full=config.full, partitions=partitions)
        return result.snapshot_id is not None, {"full": config.full, "rewritten_files": result.rewritten_files,
                                                "new_files": result.new_files,
                                                "compacted_buckets": result.compacted_buckets}, choice

    _run_each(context, "compact_tables", tables, compact)


@dg.op(description="Expire snapshots by the tables' retention options (run config may override); dry run by default")
def expire_snapshots_op(context: dg.OpExecutionContext, config: ExpireSnapshotsConfig, pyspark: PySparkResource,
                        paimon_catalog: PaimonCatalogResource) -> None:
    older_than = config.retention.older_than_delta()
    check_retention(config)
    tables = resolve_tables(paimon_catalog, config)
    retention = {"retain_min": config.retention.retain_min, "retain_max": config.retention.retain_max,
                 "older_than": older_than}

    def expire(table: Table, before: TableHealth) -> tuple[bool, dict, EngineChoice]:
        choice = _engine(config, expiration_work(table, **retention), pyspark)
        if choice.engine == "spark":
            result = spark_maintenance.expire_snapshots(
                pyspark.spark_session, paimon_catalog.table_uri(table.identifier), **retention,
                dry_run=config.dry_run, options=paimon_catalog.options)
        else:
            result = table.maintenance.expire_snapshots(**retention, dry_run=config.dry_run)
        changed = not config.dry_run and bool(result.expired_snapshots or result.deleted_files)
        return changed, {"dry_run": config.dry_run, "expired_snapshots": list(result.expired_snapshots),
                         "deleted_files": len(result.deleted_files)}, choice

    _run_each(context, "expire_snapshots", tables, expire)


@dg.op(description="Rescale one table to a new bucket count (one OVERWRITE commit), in process or on PySpark")
def rescale_table_op(context: dg.OpExecutionContext, config: RescaleConfig, pyspark: PySparkResource,
                     paimon_catalog: PaimonCatalogResource) -> None:
    if config.bucket < 1:
        raise dg.Failure(description=f"rescale_table: bucket must be a positive count, got {config.bucket}; "
                                     f"table {config.table!r} not touched")
    tables = resolve_tables(paimon_catalog, TableSelection(tables=[config.table]))
    partitions = list(config.partitions) or None
    check_partitions(tables, partitions)

    def rescale(table: Table, before: TableHealth) -> tuple[bool, dict, EngineChoice]:
        choice = _engine(config, rescale_work(table, partitions=partitions), pyspark)
        if choice.engine == "spark":
            result = spark_maintenance.rescale(pyspark.spark_session, paimon_catalog.table_uri(table.identifier),
                                               bucket=config.bucket, partitions=partitions,
                                               options=paimon_catalog.options)
        else:
            result = table.maintenance.rescale(bucket=config.bucket, partitions=partitions)
        return result.snapshot_id is not None, {"bucket": result.bucket,
                                                "rewritten_partitions": result.rewritten_partitions,
                                                "rewritten_rows": result.rewritten_rows}, choice

    _run_each(context, "rescale_table", tables, rescale)


@dg.op(description="Remove files no snapshot, tag or changelog references, older than a given age; dry run by default")
def remove_orphan_files_op(context: dg.OpExecutionContext, config: RemoveOrphanFilesConfig, pyspark: PySparkResource,
                           paimon_catalog: PaimonCatalogResource) -> None:
    older_than = config.older_than_delta()
    tables = resolve_tables(paimon_catalog, config)

    def remove(table: Table, before: TableHealth) -> tuple[bool, dict, EngineChoice]:
        choice = _engine(config, orphan_work(before.file_count), pyspark)
        if choice.engine == "spark":
            result = spark_maintenance.remove_orphan_files(
                pyspark.spark_session, paimon_catalog.table_uri(table.identifier), older_than=older_than,
                dry_run=config.dry_run, options=paimon_catalog.options)
        else:
            result = table.maintenance.remove_orphan_files(older_than=older_than, dry_run=config.dry_run)
        changed = not config.dry_run and bool(result.deleted_files or result.aborted_uploads)
        return changed, {"dry_run": config.dry_run, "orphan_files": len(result.orphan_files),
                         "deleted_files": len(result.deleted_files), "bytes_freed": result.bytes_freed,
                         "abandoned_uploads": len(result.abandoned_uploads),
                         "aborted_uploads": len(result.aborted_uploads)}, choice

    _run_each(context, "remove_orphan_files", tables, remove)
