"""Read-only commands: text output, JSON shapes, and that they change nothing."""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa
import pytest
from click.testing import CliRunner

from cli.cli_helpers import Run, age_files, tree
from lakehouse_cli.context import CliState
from lakehouse_cli.main import cli
from table_format import FileSystemCatalog, write_table


def test_list_text_and_json(run: Run) -> None:
    out = run("list").stdout
    assert "shop.orders" in out and "shop.events" in out and "2 table(s)" in out
    doc = run.json("list")
    assert doc["warehouse"] == run.warehouse
    [shop] = doc["databases"]
    assert shop["name"] == "shop"
    by_name = {t["name"]: t for t in shop["tables"]}
    assert set(by_name) == {"events", "orders"}
    assert by_name["orders"] == {"name": "orders", "primary_keys": ["dt", "id"], "partition_keys": ["dt"],
                                 "bucket": 2, "latest_snapshot": 4, "records": by_name["orders"]["records"]}
    assert by_name["events"]["primary_keys"] == [] and by_name["events"]["latest_snapshot"] == 2
    assert run.json("list", "shop")["databases"][0]["name"] == "shop"


def test_global_json_flag_and_env_warehouse(run: Run) -> None:
    result = CliRunner().invoke(cli, ["--json", "list"], env={"LAKEHOUSE_WAREHOUSE": run.warehouse})
    assert result.exit_code == 0, result.stderr
    assert '"databases"' in result.stdout


def test_describe(run: Run) -> None:
    doc = run.json("describe", "shop.orders")
    assert doc["table"] == "shop.orders"
    assert doc["path"] == os.path.join(run.warehouse, "shop.db", "orders")
    assert [(f["id"], f["name"], f["type"]) for f in doc["fields"]] == [
        (0, "id", "BIGINT NOT NULL"), (1, "dt", "STRING NOT NULL"), (2, "customer", "STRING"),
        (3, "amount", "DECIMAL(10, 2)"), (4, "score", "DOUBLE")]
    assert doc["fields"][2]["nullable"] is True and doc["fields"][0]["nullable"] is False
    assert doc["primary_keys"] == ["dt", "id"] and doc["partition_keys"] == ["dt"] and doc["bucket_keys"] == ["id"]
    assert (doc["bucket"], doc["bucket_mode"], doc["merge_engine"]) == (2, "fixed", "deduplicate")
    assert doc["options"] == {"bucket": "2", "snapshot.num-retained.min": "2"}
    assert doc["snapshot_count"] == 4 and doc["tags"] == {"first": 1}
    latest = doc["latest_snapshot"]
    assert latest["snapshot_id"] == 4 and latest["commit_kind"] == "APPEND"
    assert latest["commit_time"].endswith("Z")
    text = run("describe", "shop.orders").stdout
    for needle in ("BIGINT NOT NULL", "2 (fixed) on id", "deduplicate", "snapshot.num-retained.min=2", "first=1"):
        assert needle in text

    events = run.json("describe", "shop.events")
    assert (events["bucket_mode"], events["merge_engine"], events["options"]) == ("unaware", None, {})


def test_describe_hides_options_set_to_their_default(run: Run) -> None:
    catalog = FileSystemCatalog(run.warehouse)
    catalog.create_table("shop.opts", pa.schema([("a", pa.int64())]), options={
        "snapshot.time-retained": "60 min", "file.format": "PARQUET", "bucket": "-1", "target-file-size": "256mb",
        "compaction.max.file-num": "50", "snapshot.num-retained.min": "3", "tag.automatic-creation": "none"})
    assert run.json("describe", "shop.opts")["options"] == {"compaction.max.file-num": "50", "snapshot.num-retained.min": "3"}


def test_snapshots(run: Run) -> None:
    docs = run.json("snapshots", "shop.orders")
    assert [d["snapshot_id"] for d in docs] == [1, 2, 3, 4]
    assert set(docs[0]) == {"snapshot_id", "schema_id", "commit_kind", "commit_time", "commit_user",
                            "commit_identifier", "total_record_count", "delta_record_count",
                            "changelog_record_count", "watermark"}
    assert [d["delta_record_count"] for d in docs] == [3, 2, 1, 2]
    assert [d["snapshot_id"] for d in run.json("snapshots", "shop.orders", "--limit", "2")] == [3, 4]
    assert "4 snapshot(s)" in run("snapshots", "shop.orders").stdout


def test_files(run: Run) -> None:
    rows = run.json("files", "shop.orders")
    assert rows and {"partition", "bucket", "file_path", "level", "record_count", "file_size_in_bytes",
                     "creation_time", "min_key", "max_key"} <= set(rows[0])
    assert all(os.path.exists(r["file_path"]) for r in rows)
    assert sum(r["record_count"] for r in rows) == 8  # 3 + 2 + 1 + 2 records (the update/delete is 2 records)
    assert rows[0]["creation_time"].endswith("Z")
    text = run("files", "shop.orders").stdout
    assert f"{len(rows)} file(s)" in text and os.path.basename(rows[0]["file_path"]) in text


def test_partitions_and_buckets(run: Run) -> None:
    rows = run.json("partitions", "shop.events")
    assert [(r["partition"], r["record_count"], r["file_count"]) for r in rows] == [("[d1]", 1, 1), ("[d2]", 2, 2)]
    buckets = run.json("partitions", "shop.orders", "--buckets")
    assert {"partition", "bucket", "record_count", "file_count", "file_size_in_bytes"} <= set(buckets[0])
    assert "2 partition(s)" in run("partitions", "shop.events").stdout


def test_tags_and_schemas(run: Run) -> None:
    assert [(t["tag_name"], t["snapshot_id"]) for t in run.json("tags", "shop.orders")] == [("first", 1)]
    assert run.json("tags", "shop.events") == []
    [schema] = run.json("schemas", "shop.orders")
    assert schema["schema_id"] == 0 and schema["primary_keys"] == ["dt", "id"]
    assert schema["fields"][0] == {"id": 0, "name": "id", "type": "BIGINT NOT NULL"}
    assert schema["options"]["bucket"] == "2"
    assert "0:id BIGINT NOT NULL" in run("schemas", "shop.orders").stdout


def test_health_of_healthy_tables(run: Run) -> None:
    report = run.json("health", "shop.orders")
    assert report["table"] == "shop.orders"
    assert set(report) == {"table", "status", "sorted_runs", "small_files", "snapshots", "consumers", "orphans"}
    runs = report["sorted_runs"]
    assert runs["applies"] and runs["compaction_trigger"] == 5 and runs["stop_trigger"] == 8
    assert runs["max_sorted_runs"] == 2 and runs["status"] == "ok"  # 2024-05-15 got two level-0 files
    assert report["small_files"]["small_files"] == report["small_files"]["files"] > 0
    assert report["snapshots"]["count"] == 4 and report["snapshots"]["expirable_now"] == []  # all < 1 h old
    assert report["orphans"] == {"status": "ok", "older_than_seconds": 86400.0, "count": 0, "bytes": 0, "files": [],
                                 "abandoned_uploads": []}
    assert report["status"] == "ok"
    assert run.json("health", "shop.events")["sorted_runs"]["applies"] is False


def test_health_warns_and_changes_nothing(run: Run) -> None:
    table_dir = os.path.join(run.warehouse, "shop.db", "orders")
    with open(os.path.join(table_dir, "dt=2024-05-14", "bucket-0", "stray.parquet"), "wb") as f:
        f.write(b"x" * 100)
    age_files(table_dir)
    before = tree(run.warehouse)
    report = run.json("health", "shop.orders", "--small-file-size", "1b", code=3)
    assert report["orphans"]["status"] == "warn" and report["orphans"]["count"] == 1
    assert report["orphans"]["files"][0].endswith("stray.parquet")
    assert report["small_files"]["small_files"] == 0
    assert report["status"] == "warn"
    text = run("health", "shop.orders", code=3).stdout
    assert "WARN" in text and "1 file(s), 100 B unreferenced" in text
    assert tree(run.warehouse) == before


def test_health_snapshots_past_retention(run: Run) -> None:
    schema = pa.schema([("k", pa.int64())])
    # write-only: no expiration after the commits, so the snapshots outlive snapshot.time-retained
    table = FileSystemCatalog(run.warehouse).create_table("shop.aged", schema, options={
        "write-only": "true", "snapshot.time-retained": "1 s", "snapshot.num-retained.min": "1"})
    for i in range(3):
        write_table(table, pa.table({"k": [i]}, schema=schema))
    time.sleep(1.1)
    before = tree(run.warehouse)
    snapshots = run.json("health", "shop.aged", code=3)["snapshots"]
    assert snapshots["status"] == "warn" and snapshots["expirable_now"] == [1, 2]
    assert snapshots["retain_min"] == 1 and snapshots["time_retained_seconds"] == 1.0
    assert "expiration would remove 2 now" in run("health", "shop.aged", code=3).stdout
    assert tree(run.warehouse) == before
    table.set_consumer("etl", next_snapshot=1)  # it holds back what retention would expire
    consumers = run.json("health", "shop.aged", code=3)["consumers"]
    assert consumers["problems"] == [
        "etl: keeps snapshot 1 on, which retention (snapshot.num-retained.*, snapshot.time-retained) would expire now"]
    assert run.json("health", "shop.aged", code=3)["snapshots"]["expirable_now"] == []  # the consumer protects them


def test_health_consumer_of_an_old_snapshot_that_retention_keeps_anyway(run: Run) -> None:
    """An old snapshot that snapshot.num-retained.min keeps is no problem of its consumer's."""
    schema = pa.schema([("k", pa.int64())])
    table = FileSystemCatalog(run.warehouse).create_table("shop.kept", schema, options={
        "write-only": "true", "snapshot.time-retained": "1 s"})  # num-retained.min 10
    for i in range(3):
        write_table(table, pa.table({"k": [i]}, schema=schema))
    table.set_consumer("dagster-shop.x", next_snapshot=2)
    time.sleep(1.1)
    report = run.json("health", "shop.kept")
    assert report["consumers"] == {"status": "ok", "count": 1, "problems": [], "consumers": [
        {"consumer_id": "dagster-shop.x", "next_snapshot": 2, "pins_last_read": True, "behind": 1}]}


@pytest.mark.parametrize("command", ["describe", "snapshots", "files", "partitions", "tags", "schemas", "health"])
def test_inspect_commands_change_nothing(run: Run, command: str) -> None:
    before = tree(run.warehouse)
    run(command, "shop.orders")
    run(command, "shop.orders", "--json")
    assert tree(run.warehouse) == before


def test_health_sorted_runs_over_the_triggers(shop: str) -> None:
    catalog = FileSystemCatalog(shop)
    schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])
    table = catalog.create_table("shop.busy", schema, primary_keys=["k"],
                                 options={"bucket": "1", "write-only": "true", "num-sorted-run.compaction-trigger": "3"})
    for i in range(6):
        write_table(table, pa.table({"k": [i], "v": [i]}, schema=schema))
    report = Run(shop).json("health", "shop.busy", code=3)
    runs = report["sorted_runs"]
    assert (runs["compaction_trigger"], runs["stop_trigger"], runs["max_sorted_runs"]) == (3, 6, 6)
    assert runs["status"] == "critical" and runs["buckets_at_stop_trigger"] == 1
    assert runs["worst_buckets"] == [{"partition": "[]", "bucket": 0, "files": 6, "sorted_runs": 6}]
    assert report["small_files"]["status"] == "warn"  # 6 small files >= compaction.min.file-num 5
    assert report["status"] == "critical"


def test_list_reports_an_unreadable_table_and_goes_on(run: Run) -> None:
    snapshot_dir = os.path.join(run.warehouse, "shop.db", "events", "snapshot")
    os.remove(os.path.join(snapshot_dir, "LATEST"))
    with open(os.path.join(snapshot_dir, "snapshot-2"), "w") as f:
        f.write("{ damaged")
    result = run("list")
    assert "shop.orders" in result.stdout and "shop.events" not in result.stdout
    assert result.stderr.startswith("warning: shop.events cannot be read: ") and "snapshot-2" in result.stderr
    tables = {t["name"]: t for t in run.json("list")["databases"][0]["tables"]}
    assert set(tables["events"]) == {"name", "error"} and "snapshot-2" in tables["events"]["error"]
    assert tables["orders"]["latest_snapshot"] == 4


def test_a_table_without_snapshots(run: Run) -> None:
    FileSystemCatalog(run.warehouse).create_table("shop.empty", pa.schema([("a", pa.int64())]))
    doc = run.json("describe", "shop.empty")
    assert doc["latest_snapshot"] is None and doc["snapshot_count"] == 0 and doc["tags"] == {}
    assert "latest snapshot     none" in run("describe", "shop.empty").stdout
    for command in ("snapshots", "files", "partitions", "tags"):
        assert run.json(command, "shop.empty") == []
    report = run.json("health", "shop.empty")
    assert report["status"] == "ok" and report["snapshots"]["count"] == 0 and report["small_files"]["files"] == 0
    assert run("read", "shop.empty", "--json").stdout == ""
    assert "nothing to compact" in run("compact", "shop.empty").stdout
    assert "no snapshot to expire" in run("expire-snapshots", "shop.empty", "--apply").stdout
    assert "cannot create tag 't'" in run("create-tag", "shop.empty", "t", code=1).stderr


def test_file_uri_warehouse(shop: str) -> None:
    doc = Run(f"file://{shop}").json("describe", "shop.orders")
    assert doc["latest_snapshot"]["snapshot_id"] == 4
    assert CliState(warehouse=f"file://{shop}").table_uri("shop.orders") == os.path.join(shop, "shop.db", "orders")
    assert CliState(warehouse="s3://bucket/wh/").table_uri("shop.orders") == "s3://bucket/wh/shop.db/orders"


def test_progress_of_reads_and_health(run: Run) -> None:
    assert "reading shop.orders" in run("--progress", "read", "shop.orders").stderr
    assert "checking shop.orders" in run("--progress", "health", "shop.orders").stderr
    assert run("--no-progress", "read", "shop.orders").stderr == ""


def test_health_check_that_cannot_run_is_an_error_not_a_crash(run: Run) -> None:
    # options this implementation refuses (a changelog retained longer than snapshots), set behind its back
    schema_file = os.path.join(run.warehouse, "shop.db", "orders", "schema", "schema-0")
    with open(schema_file) as f:
        schema = json.load(f)
    schema["options"]["changelog.num-retained.min"] = "50"
    with open(schema_file, "w") as f:
        json.dump(schema, f)
    report = run.json("health", "shop.orders", code=3)
    assert report["snapshots"]["status"] == "error" and "changelog.num-retained.min" in report["snapshots"]["message"]
    assert report["status"] == "error" and report["orphans"]["status"] == "ok"
    assert "changelog.num-retained.min" in run("health", "shop.orders", code=3).stdout
    assert "changelog.num-retained.min" in run("expire-snapshots", "shop.orders", code=1).stderr
