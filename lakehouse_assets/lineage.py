"""``dagster/column_lineage`` of a Paimon asset: declared on the asset, or computed from a Spark DataFrame's plan.

Declared: definition metadata ``dagster/column_lineage`` (a `dg.TableColumnLineage`) or, shorter,
``column_lineage={"total": ["shop.orders.amount", "shop.payments.paid"]}`` (``database.table.column``). Computed:
`SparkHandler.column_sources` names the table paths each output column reads; a table path
``<warehouse>/<db>.db/<table>`` is the asset ``[db, table]`` (the IO manager's key mapping).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from lakehouse_assets.table_spec import PaimonAssetError, raw

LINEAGE = "dagster/column_lineage"
SHORT = "column_lineage"


def asset_key_of_path(path: str) -> dg.AssetKey | None:
    """``.../<db>.db/<table>`` -> ``[db, table]``; None for a path outside that layout."""
    parts = path.rstrip("/").split("/")
    if len(parts) < 2 or not parts[-2].endswith(".db") or len(parts[-2]) <= 3:
        return None
    return dg.AssetKey([parts[-2][:-3], parts[-1]])


def lineage_of_sources(sources: Mapping[str, Sequence[tuple[str, str]]] | None) -> dg.TableColumnLineage | None:
    """Output column -> (table path, column) pairs as Dagster's column lineage (None when nothing is known)."""
    deps: dict[str, list[dg.TableColumnDep]] = {}
    for column, pairs in (sources or {}).items():
        found = [(asset_key_of_path(path), name) for path, name in pairs]
        known = [dg.TableColumnDep(asset_key=key, column_name=name) for key, name in found if key is not None]
        if known:
            deps[column] = known
    return dg.TableColumnLineage(deps_by_column=deps) if deps else None


def declared_lineage(metadata: Mapping[str, Any], where: str) -> dg.TableColumnLineage | None:
    """The lineage an asset declares in its definition metadata, if any."""
    declared = raw(metadata.get(LINEAGE))
    if isinstance(declared, dg.TableColumnLineage):
        return declared
    short = raw(metadata.get(SHORT))
    if short is None:
        return None
    if not isinstance(short, Mapping):
        raise PaimonAssetError(f"{where}: metadata 'column_lineage' must map columns to 'db.table.column' lists")
    deps: dict[str, list[dg.TableColumnDep]] = {}
    for column, sources in short.items():
        for source in [sources] if isinstance(sources, str) else sources:
            database, table, name = (str(source).split(".", 2) + ["", ""])[:3]
            if not (database and table and name):
                raise PaimonAssetError(f"{where}: metadata 'column_lineage' of column {column!r}: {source!r} is not "
                                       "'database.table.column'")
            deps.setdefault(str(column), []).append(
                dg.TableColumnDep(asset_key=dg.AssetKey([database, table]), column_name=name))
    return dg.TableColumnLineage(deps_by_column=deps)
