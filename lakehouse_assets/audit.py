"""Write-audit-publish on Paimon branches (docs/write-audit-publish.md).

An asset with definition metadata ``"publish": "audit"`` is written into the branch ``audit_<run id>`` made from
main's latest snapshot (``paimon/branch`` in the materialization's metadata). In the same run its blocking asset
checks read that branch (the IO manager loads it for a check's asset input; ``audited_table`` for checks that open
the table themselves), and the asset ``<name>_published`` made by `paimon_publish_asset` fast-forwards main to the
branch and deletes it. Dagster runs that asset only when every blocking check passed: a failed check leaves main
as it was (same snapshot id) and keeps the branch for inspection. A writer that committed to main meanwhile makes
the publication fail, naming both snapshot ids; its commit stays.
"""

from collections.abc import Mapping
from typing import Any

import dagster as dg

from lakehouse_assets.table_spec import PaimonAssetError, raw
from table_format import BranchDivergedError, FileSystemCatalog, Table, keeper_tag

PUBLISH = "publish"
AUDIT = "audit"
BRANCH = "paimon/branch"
TABLE = "paimon/table"
BASE_SNAPSHOT = "paimon/main_snapshot_id"
PUBLISHED = "paimon/published_snapshot_id"


def wants_audit(metadata: Mapping[str, Any], where: str) -> bool:
    """Whether the asset's definition metadata asks for write-audit-publish (``"publish": "audit"``)."""
    value = raw(metadata.get(PUBLISH))
    if value in (None, "direct"):
        return False
    if value != AUDIT:
        raise PaimonAssetError(f"{where}: metadata 'publish' must be 'audit' or 'direct', not {value!r}")
    return True


def audit_branch_name(run_id: str) -> str:
    """The branch one run's materialization is audited in (letters and digits only: a valid Paimon branch)."""
    return "audit_" + run_id.replace("-", "")[:12]


def open_audit_branch(table: Table, run_id: str) -> Table:
    """The run's audit branch of `table`, made from main's latest snapshot if it does not exist yet (a run writing
    several partitions writes them all into it)."""
    name = audit_branch_name(run_id)
    if name not in table.branches():
        table.create_branch(name, from_latest=True)
    return table.branch(name)


def discard_audit_branch(table: Table, run_id: str) -> None:
    """After a failed write: drop the run's audit branch if nothing was committed to it (and main's keeper tag)."""
    name = audit_branch_name(run_id)
    if name in table.branches():
        branch = table.branch(name)
        base = table.tags().get(keeper_tag(name))
        latest = branch.latest_snapshot()
        if (latest.id if latest is not None else None) == base:
            table.delete_branch(name)


def audit_metadata(main: Table, branch: Table) -> dict[str, Any]:
    """What a materialization into an audit branch records: the table, the branch, main's snapshot it started at."""
    base = main.tags().get(keeper_tag(branch.current_branch))  # None: main had no snapshot to start from
    out = {"dagster/table_name": main.identifier, TABLE: main.identifier, BRANCH: branch.current_branch}
    return out if base is None else {**out, BASE_SNAPSHOT: dg.MetadataValue.int(base)}


def _latest_materialization(instance: dg.DagsterInstance, asset_key: dg.AssetKey,
                            partition: str | None) -> dg.EventLogEntry | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition] if partition else None), limit=1
    ).records
    return records[0].event_log_entry if records else None


def _metadata_text(entry: dg.EventLogEntry, key: str) -> str | None:
    materialization = entry.asset_materialization
    value = materialization.metadata.get(key) if materialization is not None else None
    value = raw(value)
    return str(value) if value is not None else None


def pending_branch(catalog: FileSystemCatalog, instance: dg.DagsterInstance, asset_key: dg.AssetKey, *,
                   partition: str | None = None, run_id: str | None = None) -> Table | None:
    """The audit branch of the asset's latest materialization (of `partition`; made by run `run_id` if given),
    while it has not been published; None otherwise."""
    entry = _latest_materialization(instance, asset_key, partition)
    if entry is None or (run_id is not None and entry.run_id != run_id):
        return None
    branch, identifier = _metadata_text(entry, BRANCH), _metadata_text(entry, TABLE)
    if branch is None or identifier is None or not catalog.table_exists(identifier):
        return None
    table = catalog.load_table(identifier)
    return table.branch(branch) if branch in table.branches() else None


def audited_table(context: dg.AssetCheckExecutionContext, catalog: FileSystemCatalog,
                  asset_key: dg.AssetKey | None = None) -> Table:
    """For an asset check: the branch this run's materialization of the asset is audited in."""
    key = asset_key or context.check_specs[0].asset_key
    table = pending_branch(catalog, context.instance, key, run_id=context.run.run_id)
    if table is None:
        raise PaimonAssetError(f"asset {key.to_user_string()!r}: run {context.run.run_id} wrote no audit branch "
                               "(metadata 'publish': 'audit' on the asset, and materialize it in the same run)")
    return table


def audit_check_result(context: dg.AssetCheckExecutionContext, *, passed: bool, description: str = "",
                       metadata: Mapping[str, Any] | None = None, asset_key: dg.AssetKey | None = None,
                       **kwargs: Any) -> dg.AssetCheckResult:
    """An AssetCheckResult whose description and metadata name the audit branch (kept when the check fails); a check
    run without the materialization (executed alone: it read main) says so instead."""
    key = asset_key or context.check_specs[0].asset_key
    entry = _latest_materialization(context.instance, key, None)
    branch = _metadata_text(entry, BRANCH) if entry is not None else None
    table = _metadata_text(entry, TABLE) if entry is not None else None
    base = _metadata_text(entry, BASE_SNAPSHOT) if entry is not None else None
    run = context.run
    if entry is not None and branch is not None and entry.run_id not in {run.run_id, run.parent_run_id,
                                                                         run.root_run_id}:
        note = f"audited main of {table} (this run materialized nothing into an audit branch)"
        branch = None
        description = f"{description}. {note}" if description else note
    elif branch is not None:
        where = f"main of {table} stays at snapshot {base}" if base is not None else f"main of {table} stays empty"
        note = (f"audit branch {branch!r} kept for inspection ({table}$branch_{branch}); {where}" if not passed
                else f"audit branch {branch!r} passed")
        description = f"{description}. {note}" if description else note
    extra = {BRANCH: branch} if branch is not None else {}
    return dg.AssetCheckResult(passed=passed, description=description, metadata={**extra, **(metadata or {})},
                               asset_key=key, **kwargs)


def publish(table: Table, branch: str) -> int:
    """Fast-forward main to `branch` and delete it; PaimonAssetError naming both snapshot ids when main moved."""
    try:
        snapshot_id = table.fast_forward(branch)
    except BranchDivergedError as e:
        raise PaimonAssetError(f"publication of audit branch {branch!r} refused, the branch is kept: {e}") from e
    table.delete_branch(branch)
    return snapshot_id


def paimon_publish_asset(asset: dg.AssetsDefinition | dg.AssetKey, *, io_manager_key: str = "io_manager",
                         name: str | None = None, group_name: str | None = None) -> dg.AssetsDefinition:
    """The publish step of an audited asset: the asset ``<name>_published`` downstream of it, which Dagster runs
    only when all of the asset's blocking checks passed; it fast-forwards main to the audit branch and deletes it
    (in asset group `group_name`, default Dagster's default group)."""
    key = asset if isinstance(asset, dg.AssetKey) else asset.key
    partitions = None if isinstance(asset, dg.AssetKey) else asset.partitions_def
    out_key = dg.AssetKey([*key.path[:-1], name or f"{key.path[-1]}_published"])

    @dg.asset(key=out_key, deps=[key], partitions_def=partitions, required_resource_keys={io_manager_key},
              group_name=group_name, kinds={"paimon"},
              description=f"Publishes the audited materialization of {key.to_user_string()} "
                          "(fast-forwards main to its audit branch)")
    def _publish(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        catalog: FileSystemCatalog = getattr(context.resources, io_manager_key).catalog
        partition = context.partition_key if context.has_partition_key else None
        branch = pending_branch(catalog, context.instance, key, partition=partition)
        if branch is None:
            raise PaimonAssetError(f"asset {key.to_user_string()!r}: no unpublished audit branch to publish "
                                   "(materialize the asset with metadata 'publish': 'audit' first)")
        main = catalog.load_table(branch.identifier.split("$", 1)[0])
        snapshot_id = publish(main, branch.current_branch)
        context.log.info(f"published audit branch {branch.current_branch!r}: {main.identifier} at {snapshot_id}")
        return dg.MaterializeResult(metadata={TABLE: main.identifier, BRANCH: branch.current_branch,
                                              PUBLISHED: dg.MetadataValue.int(snapshot_id)})

    return _publish
