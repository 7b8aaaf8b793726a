"""Tables written outside Dagster (Flink, Spark, Java jobs): observations report each new snapshot as a data version.

``paimon_observable_source("db.table")`` is an observable source asset whose data version is the table's latest
snapshot id, with the table's metadata. Downstream assets with ``AutomationCondition.eager()`` (or
``on_cron``) run when a new snapshot is observed; give the source an automation condition such as
``AutomationCondition.cron_tick_passed("*/5 * * * *")`` (or launch its observation from a schedule) so that the
automation sensor observes it.
"""

from collections.abc import Iterator, Sequence

import dagster as dg

from lakehouse_assets.metadata import STORAGE_KIND, table_metadata
from lakehouse_assets.resources import PaimonCatalogResource

CATALOG_RESOURCE_KEY = "paimon_catalog"


def paimon_observable_source(
    identifier: str,
    *,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    description: str | None = None,
    group_name: str | None = None,
    automation_condition: dg.AutomationCondition | None = None,
    resource_key: str = CATALOG_RESOURCE_KEY,
) -> dg.AssetsDefinition:
    """An observable source asset for table `identifier` (``database.table``; default key ``[database, table]``).

    Needs a `PaimonCatalogResource` under `resource_key`. A table that does not exist yet is observed without a
    data version (metadata ``paimon/exists`` False), so nothing downstream runs until it appears.
    """
    database, _, table_name = identifier.partition(".")
    asset_key = dg.AssetKey.from_coercible(key) if key is not None else dg.AssetKey([database, table_name])
    spec = dg.AssetSpec(
        asset_key,
        description=description or f"Paimon table {identifier}, written outside Dagster",
        group_name=group_name,
        kinds={STORAGE_KIND},
        metadata={"dagster/table_name": identifier},
        automation_condition=automation_condition,
    )

    @dg.multi_observable_source_asset(specs=[spec], name=f"observe_{asset_key.to_python_identifier()}",
                                      required_resource_keys={resource_key})
    def _observe(context: dg.AssetExecutionContext) -> Iterator[dg.ObserveResult]:
        catalog: PaimonCatalogResource = getattr(context.resources, resource_key)
        yield observe_table(catalog, identifier, asset_key)

    return _observe


def observe_table(catalog: PaimonCatalogResource, identifier: str, asset_key: dg.AssetKey) -> dg.ObserveResult:
    """The observation of one table: data version = latest snapshot id, plus the table metadata."""
    if not catalog.catalog().table_exists(identifier):
        return dg.ObserveResult(asset_key=asset_key, metadata={"paimon/exists": False})
    table = catalog.load_table(identifier)
    snapshot = table.latest_snapshot()
    metadata = table_metadata(table)
    metadata["paimon/exists"] = True
    if snapshot is None:
        return dg.ObserveResult(asset_key=asset_key, metadata=metadata)
    return dg.ObserveResult(asset_key=asset_key, data_version=dg.DataVersion(str(snapshot.id)), metadata=metadata)
