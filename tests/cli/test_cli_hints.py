"""Messages that say what to do next: "did you mean" for tables and databases, quoting in --filter, why compact did
nothing, and the health of a database or the whole warehouse (exit code 3 when a table needs attention)."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from cli.cli_helpers import Run, age_files, tree
from lakehouse_cli.context import suggest_table
from table_format import FileSystemCatalog, write_table

TABLE_COMMANDS = [
    ["describe"], ["snapshots"], ["files"], ["partitions"], ["tags"], ["schemas"], ["health"], ["read"],
    ["compact"], ["rescale", "--bucket", "2"], ["expire-snapshots"], ["remove-orphan-files"],
    ["create-tag", "t"], ["delete-tag", "t"], ["rollback", "--snapshot", "1"],
]


@pytest.mark.parametrize("command", TABLE_COMMANDS, ids=lambda c: c[0])
def test_every_table_command_suggests_the_closest_table(run: Run, command: list[str]) -> None:
    before = tree(run.warehouse)
    result = run(command[0], "shop.ordres", *command[1:], code=1)
    assert result.stderr.startswith("Error: table 'shop.ordres' does not exist")
    assert result.stderr.rstrip().endswith("did you mean 'shop.orders'?") and result.stderr.count("\n") == 1
    assert tree(run.warehouse) == before


@pytest.mark.parametrize(("name", "hint"), [
    ("shop.Orders", "shop.orders"),   # case
    ("shpo.orders", "shop.orders"),   # the database misspelt
    ("shpo.evnts", "shop.events"),    # both
    ("orders", "shop.orders"),        # no database
])
def test_suggestions(run: Run, name: str, hint: str) -> None:
    assert f"did you mean {hint!r}?" in run("describe", name, code=1).stderr


def test_no_suggestion_when_nothing_is_close(run: Run) -> None:
    assert run("describe", "shop.nope", code=1).stderr.rstrip().endswith("/schema)")
    assert suggest_table("other.zzz", ["shop.orders", "shop.events"]) is None
    assert run("list", "shpo", code=1).stderr == "Error: database 'shpo' does not exist; did you mean 'shop'?\n"
    assert run("health", "shpo", code=1).stderr.endswith("did you mean 'shop'?\n")


@pytest.mark.parametrize(("expr", "fixed"), [
    ("dt = 2024-05-16", "dt = '2024-05-16'"),
    ("dt = 2024/05/16", "dt = '2024/05/16'"),
    ("customer = c1", "customer = 'c1'"),
    ("id > 1 and dt=2024-05-14T10:00:00", "id > 1 and dt='2024-05-14T10:00:00'"),
    ("dt in (2024-05-14, '2024-05-15')", "dt in ('2024-05-14', '2024-05-15')"),
])
def test_unquoted_filter_values_suggest_quotes(run: Run, expr: str, fixed: str) -> None:
    err = run("read", "shop.orders", "-f", expr, code=1).stderr
    assert err.startswith(f"Error: --filter {expr!r}: unquoted value ") and err.count("\n") == 1
    assert f'quote text, dates and timestamps, e.g. --filter "{fixed}"' in err
    assert run("read", "shop.orders", "-f", fixed, "--json").stdout is not None  # the suggestion parses


def test_quoted_and_numeric_filters_still_parse(run: Run) -> None:
    rows = run("read", "shop.orders", "-f", "dt = '2024-05-15' and score >= -1e3", "--json").stdout.splitlines()
    assert len(rows) == 3
    assert "expected 'and', 'or' or the end at position 8" in run("read", "shop.orders", "-f", "id = 1 x",
                                                                 code=1).stderr


def test_compact_says_why_nothing_was_compacted(run: Run) -> None:
    text = run("compact", "shop.orders").stdout
    assert text == ("shop.orders: 2 sorted run(s) in the fullest of 3 bucket(s), compaction trigger 5 "
                    "(num-sorted-run.compaction-trigger): nothing to compact; --full compacts anyway\n")
    doc = run.json("compact", "shop.orders", "-p", "dt=2024-05-15")
    assert doc["snapshot_id"] is None and "in the given partition(s)" in doc["reason"]
    assert "compacted" in run("compact", "shop.orders", "--full").stdout
    assert run("compact", "shop.orders", "--full").stdout.endswith(
        "is one sorted run on the highest level already: nothing to compact\n")
    events = run("compact", "shop.events").stdout
    assert "2 small file(s) in the fullest of 2 bucket(s), compaction.min.file-num 5" in events
    assert events.rstrip().endswith("nothing to compact; --full compacts anyway")


def test_compact_at_the_trigger_names_the_size_rules(shop: str) -> None:
    schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])
    table = FileSystemCatalog(shop).create_table("shop.kv", schema, primary_keys=["k"], options={
        "bucket": "1", "write-only": "true", "num-sorted-run.compaction-trigger": "2",
        "compaction.max-size-amplification-percent": "100000"})
    write_table(table, pa.table({"k": list(range(1000)), "v": list(range(1000))}, schema=schema))
    Run(shop)("compact", "shop.kv", "--full")
    write_table(table, pa.table({"k": [1], "v": [1]}, schema=schema))
    # 2 runs reach the trigger, but a tiny level-0 run beside a big one is no size-ratio merge (universal compaction)
    text = Run(shop)("compact", "shop.kv").stdout
    assert text == ("shop.kv: 2 sorted run(s) in the fullest of 1 bucket(s), compaction trigger 2 "
                    "(num-sorted-run.compaction-trigger); their sizes call for no merge (compaction.size-ratio, "
                    "compaction.max-size-amplification-percent): nothing to compact; --full compacts anyway\n")


def _warn_orders(warehouse: str) -> None:
    table_dir = os.path.join(warehouse, "shop.db", "orders")
    with open(os.path.join(table_dir, "dt=2024-05-14", "bucket-0", "stray.parquet"), "wb") as f:
        f.write(b"x" * 100)
    age_files(table_dir)


def test_warehouse_health_ok_exits_0(run: Run) -> None:
    doc = run.json("health")
    assert doc["status"] == "ok" and [t["table"] for t in doc["tables"]] == ["shop.events", "shop.orders"]
    assert run.json("health", "shop")["database"] == "shop"
    text = run("health").stdout
    assert f"warehouse {run.warehouse}: OK, 2 table(s), 0 need(s) attention" in text


def test_warehouse_health_needing_attention_exits_3(run: Run) -> None:
    _warn_orders(run.warehouse)
    before = tree(run.warehouse)
    doc = run.json("health", code=3)
    status = {t["table"]: t["status"] for t in doc["tables"]}
    assert doc["status"] == "warn" and status == {"shop.events": "ok", "shop.orders": "warn"}
    text = run("health", "shop", code=3).stdout
    assert "shop: WARN, 2 table(s), 1 need(s) attention" in text
    assert "shop.orders: orphan files warn: 1 file(s), 100 B unreferenced" in text
    assert run.json("health", "shop.orders", code=3)["orphans"]["count"] == 1
    assert tree(run.warehouse) == before


def test_warehouse_health_reports_an_unreadable_table(run: Run) -> None:
    snapshot_dir = os.path.join(run.warehouse, "shop.db", "events", "snapshot")
    os.remove(os.path.join(snapshot_dir, "LATEST"))
    with open(os.path.join(snapshot_dir, "snapshot-2"), "w") as f:
        f.write("{ damaged")
    doc = run.json("health", code=3)
    [events] = [t for t in doc["tables"] if t["table"] == "shop.events"]
    assert events["status"] == "error" and "snapshot-2" in events["message"]


def test_health_consumers(run: Run) -> None:
    table = FileSystemCatalog(run.warehouse).load_table("shop.orders")
    table.set_consumer("etl", next_snapshot=3)
    consumers = run.json("health", "shop.orders")["consumers"]
    assert consumers == {"status": "ok", "count": 1, "problems": [],
                         "consumers": [{"consumer_id": "etl", "next_snapshot": 3, "pins_last_read": False,
                                        "behind": 2}]}
    assert "etl next 3 (2 unread)" in run("health", "shop.orders").stdout
    # a Dagster incremental input's consumer holds the snapshot it read last; a compaction adds nothing to read
    table.set_consumer("dagster-shop.x", next_snapshot=table.latest_snapshot().id)
    table.maintenance.compact(full=True)
    assert table.refresh().latest_snapshot().commit_kind.value == "COMPACT"
    doc = run.json("health", "shop.orders")["consumers"]["consumers"]
    assert [(c["consumer_id"], c["behind"]) for c in doc] == [("dagster-shop.x", 0), ("etl", 2)]
    assert "dagster-shop.x read 4 (0 unread)" in run("health", "shop.orders").stdout
    table.delete_consumer("dagster-shop.x")
    # a consumer whose next snapshot was expired cannot resume where it stopped
    table.maintenance.expire_snapshots(retain_min=1, retain_max=1, dry_run=False)
    table.set_consumer("late", next_snapshot=1)
    report = run.json("health", "shop.orders", code=3)
    assert report["consumers"]["status"] == "warn" and report["status"] == "warn"
    assert report["consumers"]["problems"] == [
        f"late: its next snapshot 1 was expired (earliest {table.snapshots()[0].id})"]
