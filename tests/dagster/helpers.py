"""Small helpers shared by the Dagster tests."""

from collections.abc import Sequence
from typing import Any

import dagster as dg

from table_format import FileSystemCatalog


def run(assets: Sequence[Any], io_manager: Any, instance: dg.DagsterInstance, **kwargs: Any) -> Any:
    return dg.materialize(assets, resources={"io_manager": io_manager}, instance=instance, **kwargs)


def metadata_of(result: Any, node: str) -> dict[str, Any]:
    (materialization,) = result.asset_materializations_for_node(node)
    return {k: getattr(v, "value", v) for k, v in materialization.metadata.items()}


def rows(warehouse: str, identifier: str, *, sort: Sequence[str] = ("id",), **scan: Any) -> list[dict[str, Any]]:
    data = FileSystemCatalog(warehouse).load_table(identifier).scan(**scan).to_arrow()
    return data.sort_by([(c, "ascending") for c in sort]).to_pylist()


def snapshot_count(warehouse: str, identifier: str) -> int:
    catalog = FileSystemCatalog(warehouse)
    return len(catalog.load_table(identifier).snapshots()) if catalog.table_exists(identifier) else 0


def stale_status(instance: dg.DagsterInstance, defs: dg.Definitions, key: dg.AssetKey) -> str:
    """What the UI's "Unsynced" badge reads: Dagster's own stale-status resolver ("FRESH", "STALE", "MISSING")."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    graph = defs.get_repository_def().asset_graph
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    return resolver.get_status(key).value


def check_status(instance: dg.DagsterInstance, key: dg.AssetCheckKey) -> str | None:
    """What the UI shows for a check: its latest execution's status ("SUCCEEDED", "FAILED", ...) when that execution
    targets the asset's latest materialization, else None ("Not evaluated"), by Dagster's own records."""
    import asyncio

    from dagster._core.loader import LoadingContextForTest
    from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecord

    async def status() -> str | None:
        context = LoadingContextForTest(instance)
        record = await AssetCheckExecutionRecord.gen(context, key)
        if record is None or not await record.targets_latest_materialization(context):
            return None
        return (await record.resolve_status(context)).value

    return asyncio.run(status())
