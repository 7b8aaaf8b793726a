"""The `dg` component PaimonLakehouse and paimon_lakehouse_definitions, in process: a defs.yaml resolved as `dg`
resolves it, the definitions it yields (jobs, sensor, schedules, observations, checks, resources) used on real
tables, and every bad field refused with its name. The `dg` command line itself: tests/dagster/test_dg_project.py.
"""

import datetime as dt
import os
import re
import textwrap

import dagster as dg
import pyarrow as pa
import pytest
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import serialize_value

from lakehouse_assets import PaimonCatalogResource
from lakehouse_definitions import (
    LakehouseConfigError,
    MaintenancePolicy,
    ObservedTable,
    PaimonLakehouse,
    paimon_lakehouse_definitions,
)
from table_format import FileSystemCatalog, write_table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("amount", pa.float64())])

YAML = """
type: lakehouse_definitions.PaimonLakehouse
attributes:
  warehouse: {warehouse}
  spark_master: local[1]
  observe:
    - table: raw.clicks
      deps: [raw.sessions]
      cron: "*/5 * * * *"
  maintenance:
    tables: [raw.clicks]
    compaction: {{enabled: false, interval_seconds: 120}}
    expire_snapshots: {{cron: "30 1 * * *", retain_min: 1, retain_max: 2}}
    remove_orphan_files: {{enabled: false, cron: "0 4 * * 6", older_than: "2 d"}}
"""


def component(text: str) -> PaimonLakehouse:
    return PaimonLakehouse.resolve_from_yaml(textwrap.dedent(text).split("attributes:\n", 1)[1])


def build(text: str) -> dg.Definitions:
    return component(text).build_defs(dg.ComponentTree.for_test().load_context)


@pytest.fixture
def clicks(warehouse: str):
    """raw.clicks, written outside Dagster: 4 snapshots."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("raw")
    table = catalog.create_table("raw.clicks", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    for i in range(4):
        write_table(table, pa.table({"id": [i], "amount": [i * 1.5]}, schema=SCHEMA))
    return catalog.load_table("raw.clicks")


def test_yaml_yields_jobs_sensor_schedules_observations_and_checks(warehouse, clicks, instance):
    defs = build(YAML.format(warehouse=warehouse))
    assert {j.name for j in defs.jobs} >= {"compact_tables", "expire_snapshots", "rescale_table", "remove_orphan_files"}
    sensor = defs.resolve_sensor_def("compaction_sensor")
    assert sensor.minimum_interval_seconds == 120
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED
    expire = defs.resolve_schedule_def("nightly_expire_snapshots")
    orphans = defs.resolve_schedule_def("remove_orphan_files_schedule")
    assert (expire.cron_schedule, expire.default_status) == ("30 1 * * *", dg.DefaultScheduleStatus.RUNNING)
    assert (orphans.cron_schedule, orphans.default_status) == ("0 4 * * 6", dg.DefaultScheduleStatus.STOPPED)

    graph = defs.resolve_asset_graph()
    key = dg.AssetKey(["raw", "clicks"])
    assert graph.get(key).parent_keys == {dg.AssetKey(["raw", "sessions"])}  # lineage of the observed table
    assert graph.get(key).is_observable
    assert {c.name for c in graph.asset_check_keys if c.asset_key == key} >= {"small_files", "schema_as_declared"}

    # the expiry schedule with the policy's retention (retain_max 2 of 4 snapshots): due, with that retention
    context = dg.build_schedule_context(instance=instance, resources={"paimon_catalog": defs.resources["paimon_catalog"]},
                                        scheduled_execution_time=dt.datetime(2026, 5, 1, 1, 30, tzinfo=dt.timezone.utc))
    request = expire(context)
    config = request.run_config["ops"]["expire_snapshots_op"]["config"]
    assert config["tables"] == ["raw.clicks"] and config["dry_run"] is False
    assert config["retention"] == {"retain_min": 1, "retain_max": 2}

    # the observation: data version = the table's latest snapshot
    job = defs.resolve_implicit_global_asset_job_def()
    assert job.get_subset(asset_selection={key}).execute_in_process(instance=instance).success
    observation = instance.fetch_observations(key, limit=1).records[0].asset_observation
    assert observation.data_version == str(clicks.latest_snapshot().id) == "4"


def test_io_manager_writes_the_projects_assets(warehouse, instance):
    @dg.asset(key=["shop", "orders"], metadata={"primary_keys": ["id"]})
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2], pa.int64()), "amount": [3.5, 4.0]})

    text = YAML.format(warehouse=warehouse).replace("tables: [raw.clicks]", "tables: []")
    defs = dg.Definitions.merge(dg.Definitions(assets=[orders]), build(text))
    assert dg.materialize([orders], resources=defs.resources, instance=instance).success
    assert FileSystemCatalog(warehouse).load_table("shop.orders").scan().to_arrow().num_rows == 2
    # a table the warehouse holds at load time gets its health checks (here on the project's own asset)
    checks = build(text).resolve_asset_graph().asset_check_keys
    assert dg.AssetCheckKey(dg.AssetKey(["shop", "orders"]), "small_files") in checks


def test_python_builder_equals_the_component(warehouse, clicks):
    python = paimon_lakehouse_definitions(
        warehouse=warehouse, spark_master="local[1]",
        observe=[ObservedTable(table="raw.clicks", deps=["raw.sessions"], cron="*/5 * * * *")],
        maintenance=MaintenancePolicy.model_validate({
            "tables": ["raw.clicks"], "compaction": {"enabled": False, "interval_seconds": 120},
            "expire_snapshots": {"cron": "30 1 * * *", "retain_min": 1, "retain_max": 2},
            "remove_orphan_files": {"enabled": False, "cron": "0 4 * * 6", "older_than": "2 d"}}))
    yaml = build(YAML.format(warehouse=warehouse))
    for d in (python, yaml):
        assert dg.Definitions.validate_loadable(d) is None
    assert {s.name: s.cron_schedule for s in python.schedules} == {s.name: s.cron_schedule for s in yaml.schedules}
    assert python.resolve_asset_graph().asset_check_keys == yaml.resolve_asset_graph().asset_check_keys
    assert python.resolve_asset_graph().get_all_asset_keys() == yaml.resolve_asset_graph().get_all_asset_keys()


def test_secret_options_stay_environment_variables(warehouse, monkeypatch):
    monkeypatch.setenv("H23B_S3_SECRET", "do-not-show-me")
    text = """
    type: lakehouse_definitions.PaimonLakehouse
    attributes:
      warehouse: s3://bucket/wh
      options:
        s3.endpoint: http://127.0.0.1:1
        s3.secret-key: "{{ env.H23B_S3_SECRET }}"
    """
    lakehouse = component(text)
    assert lakehouse.options["s3.secret-key"] == dg.EnvVar("H23B_S3_SECRET")
    assert isinstance(lakehouse.options["s3.secret-key"], dg.EnvVar)
    assert "do-not-show-me" not in repr(lakehouse)
    # what the UI shows of the resource (the repository snapshot): the variable's name, not its value
    defs = dg.Definitions(resources={"paimon_catalog": PaimonCatalogResource(warehouse="s3://bucket/wh",
                                                                             options=lakehouse.options)})
    snapshot = serialize_value(RepositorySnap.from_def(defs.get_repository_def()))
    assert "H23B_S3_SECRET" in snapshot and "do-not-show-me" not in snapshot
    literal = text.replace('"{{ env.H23B_S3_SECRET }}"', "plain-secret")
    with pytest.raises(Exception, match=r"options.s3.secret-key: a secret must come from an environment variable"):
        component(literal)


BAD = {
    "unknown field": ("  maintenance:\n", "  maintenance:\n    colour: blue\n", "colour"),
    "bad cron": ('cron: "30 1 * * *"', 'cron: "61 1 * * *"', "maintenance.expire_snapshots.cron: '61 1 * * *' is not a cron"),
    "bad observe cron": ('cron: "*/5 * * * *"', 'cron: "every 5"', "observe.cron: 'every 5' is not a cron"),
    "bad duration": ('older_than: "2 d"', 'older_than: "two days"', "maintenance.remove_orphan_files.older_than"),
    "bad table name": ("tables: [raw.clicks]", "tables: [clicks]", "maintenance.tables[0]"),
    "unknown table": ("tables: [raw.clicks]", "tables: [raw.clickz]", "maintenance.tables[0]: table 'raw.clickz'"),
    "unknown option": ("  spark_master: local[1]\n", "  spark_master: local[1]\n  options: {s3.endpoit: x}\n",
                       "options: unknown catalog option 's3.endpoit'; did you mean 's3.endpoint'?"),
    "bad spark master": ("spark_master: local[1]", "spark_master: local(1)", "spark_master: 'local(1)'"),
    "bad retention": ("retain_min: 1", "retain_min: 0", "maintenance.expire_snapshots.retain_min: must be >= 1"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_field_is_named(warehouse, clicks, case):
    old, new, message = BAD[case]
    text = YAML.format(warehouse=warehouse)
    assert old in text
    with pytest.raises(Exception, match=re.escape(message)):
        build(text.replace(old, new, 1))
    if case == "unknown table":
        with pytest.raises(LakehouseConfigError):
            build(text.replace(old, new, 1))


def test_relative_warehouse_is_under_the_project_root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    defs = build("type: x\nattributes:\n  warehouse: lake\n")
    assert defs.resources["paimon_catalog"].warehouse == os.path.join(str(tmp_path), "lake")
    assert defs.resources["io_manager"].warehouse == os.path.join(str(tmp_path), "lake")
    assert "io_manager" not in build("type: x\nattributes:\n  warehouse: lake\n  io_manager: null\n").resources
