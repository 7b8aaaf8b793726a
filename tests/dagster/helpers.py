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
