"""Tables written outside Dagster (Flink, Spark, Java jobs): observations report each new snapshot as a data version.

``paimon_observable_source("db.table")`` is an observable source asset whose data version is the table's latest
snapshot id, with the table's metadata. Downstream assets with ``AutomationCondition.eager()`` (or
``on_cron``) run when a new snapshot is observed; give the source an automation condition such as
``AutomationCondition.cron_tick_passed("*/5 * * * *")`` (or launch its observation from a schedule) so that the
automation sensor observes it.

For many tables, ``paimon_external_assets(identifiers)`` declares them as external assets and
``paimon_external_table_sensor(identifiers)`` reports a runless materialization (data version = snapshot id) for
each table whose latest snapshot changed since its last tick; its cursor holds the snapshot ids it reported.
"""

import json
from collections.abc import Iterator, Sequence

import dagster as dg

from lakehouse_assets.metadata import SNAPSHOT_ID, STORAGE_KIND, table_metadata
from lakehouse_assets.resources import PaimonCatalogResource
from lakehouse_assets.table_spec import PaimonAssetError

CATALOG_RESOURCE_KEY = "paimon_catalog"
DATA_VERSION_TAG = "dagster/data_version"  # how an AssetObservation carries a data version


def paimon_observable_source(
    identifier: str,
    *,
    key: dg.AssetKey | str | Sequence[str] | None = None,
    description: str | None = None,
    group_name: str | None = None,
    automation_condition: dg.AutomationCondition | None = None,
    resource_key: str = CATALOG_RESOURCE_KEY,
    deps: Sequence[dg.AssetKey | str] = (),
) -> dg.AssetsDefinition:
    """An observable source asset for table `identifier` (``database.table``; default key ``[database, table]``);
    `deps`: its upstream assets or tables (``database.table`` -> ``[database, table]``), drawn as its lineage.

    Needs a `PaimonCatalogResource` under `resource_key`. A table that does not exist yet is observed without a
    data version (metadata ``paimon/exists`` False), so nothing downstream runs until it appears.
    """
    asset_key = dg.AssetKey.from_coercible(key) if key is not None else table_asset_key(identifier)
    spec = dg.AssetSpec(
        asset_key,
        description=description or f"Paimon table {identifier}, written outside Dagster",
        group_name=group_name,
        kinds={STORAGE_KIND},
        metadata={"dagster/table_name": identifier},
        automation_condition=automation_condition,
        deps=[_dep_key(d) for d in deps],
    )

    @dg.multi_observable_source_asset(specs=[spec], name=f"observe_{asset_key.to_python_identifier()}",
                                      required_resource_keys={resource_key})
    def _observe(context: dg.AssetExecutionContext) -> Iterator[dg.ObserveResult]:
        catalog: PaimonCatalogResource = getattr(context.resources, resource_key)
        yield observe_table(catalog, identifier, asset_key,
                            last_version=_last_observed_version(context.instance, asset_key))

    return _observe


def observe_table(catalog: PaimonCatalogResource, identifier: str, asset_key: dg.AssetKey, *,
                  last_version: str | None = None) -> dg.ObserveResult:
    """The observation of one table: data version = latest snapshot id, plus the table metadata.

    When the snapshot is `last_version` (the one observed last) only the snapshot id is reported: the metadata
    (an exact row count reads key columns) is computed once per snapshot.
    """
    if not catalog.catalog().table_exists(identifier):
        return dg.ObserveResult(asset_key=asset_key, metadata={"paimon/exists": False})
    table = catalog.load_table(identifier)
    snapshot = table.latest_snapshot()
    if snapshot is None:
        return dg.ObserveResult(asset_key=asset_key, metadata={"paimon/exists": True})
    version = dg.DataVersion(str(snapshot.id))
    if version.value == last_version:
        return dg.ObserveResult(asset_key=asset_key, data_version=version,
                                metadata={SNAPSHOT_ID: dg.MetadataValue.int(snapshot.id), "paimon/exists": True})
    metadata = {**table_metadata(table, snapshot_id=snapshot.id), "paimon/exists": True}
    return dg.ObserveResult(asset_key=asset_key, data_version=version, metadata=metadata)


def _last_observed_version(instance: dg.DagsterInstance, asset_key: dg.AssetKey) -> str | None:
    records = instance.fetch_observations(asset_key, limit=1).records
    observation = records[0].asset_observation if records else None
    return observation.data_version if observation is not None else None


def table_asset_key(identifier: str) -> dg.AssetKey:
    """``database.table`` -> ``AssetKey([database, table])`` (the key the IO manager maps back to the table)."""
    database, dot, table = identifier.partition(".")
    if not dot or not database or not table:
        raise PaimonAssetError(f"table identifier must be 'database.table', not {identifier!r}")
    return dg.AssetKey([database, table])


def _dep_key(dep: dg.AssetKey | str) -> dg.AssetKey:
    if isinstance(dep, dg.AssetKey):
        return dep
    return table_asset_key(dep) if "." in dep and "/" not in dep else dg.AssetKey.from_user_string(dep)


def paimon_external_assets(identifiers: Sequence[str], *, group_name: str | None = None) -> list[dg.AssetSpec]:
    """External assets for tables written outside Dagster (observed by `paimon_external_table_sensor`)."""
    return [
        dg.AssetSpec(table_asset_key(i), description=f"Paimon table {i}, written outside Dagster",
                     group_name=group_name, kinds={STORAGE_KIND}, metadata={"dagster/table_name": i})
        for i in identifiers
    ]


def paimon_external_table_sensor(
    identifiers: Sequence[str],
    *,
    name: str = "paimon_external_tables",
    minimum_interval_seconds: int = 60,
    default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
) -> dg.SensorDefinition:
    """A sensor reporting the tables `identifiers`: each new snapshot is a runless materialization of the table's
    external asset (data version = snapshot id, with the table metadata), as Dagster models assets updated
    outside it; ``eager()`` downstreams run on it.

    Needs a `PaimonCatalogResource` under the key ``paimon_catalog``.
    """
    keys = {i: table_asset_key(i) for i in identifiers}

    @dg.sensor(name=name, minimum_interval_seconds=minimum_interval_seconds, default_status=default_status,
               asset_selection=list(keys.values()))
    def _sensor(context: dg.SensorEvaluationContext, paimon_catalog: PaimonCatalogResource) -> dg.SensorResult:
        catalog = paimon_catalog
        reported: dict[str, int] = json.loads(context.cursor) if context.cursor else {}
        events = []
        for identifier, asset_key in keys.items():
            if not catalog.catalog().table_exists(identifier):
                continue
            table = catalog.load_table(identifier)
            snapshot = table.latest_snapshot()
            if snapshot is None or reported.get(identifier) == snapshot.id:
                continue
            metadata = table_metadata(table, snapshot_id=snapshot.id)
            events.append(dg.AssetMaterialization(asset_key=asset_key, metadata=metadata,
                                                  tags={DATA_VERSION_TAG: str(snapshot.id)}))
            reported[identifier] = snapshot.id
        return dg.SensorResult(asset_events=events, cursor=json.dumps(reported, sort_keys=True),
                               skip_reason=None if events else "no new snapshot")

    return _sensor
