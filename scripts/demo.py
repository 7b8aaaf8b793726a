"""The main job for now: build tables of every kind in a local warehouse (every merge engine, append tables,
a changelog), change them, read them back (merged view, filters, time travel, incremental changes, system
tables), maintain them (compaction, tags, expiration, orphan files, rescale) and print what happened.

    bash scripts/demo.sh [WAREHOUSE]      (default ./warehouse)
"""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from table_format import FileSystemCatalog, write_table  # noqa: E402


def show(title: str, table: pa.Table) -> None:
    print(f"\n== {title}")
    with pl.Config(tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, tbl_rows=50, fmt_str_lengths=40):
        print(pl.from_arrow(table))


def main() -> None:
    warehouse = Path(sys.argv[1] if len(sys.argv) > 1 else "warehouse").resolve()
    shutil.rmtree(warehouse / "demo.db", ignore_errors=True)
    catalog = FileSystemCatalog(str(warehouse))
    catalog.create_database("demo", exist_ok=True)
    print(f"warehouse: {warehouse}")

    # 1. a partitioned primary-key table with 2 fixed buckets (deduplicate merge engine)
    orders_schema = pa.schema([
        ("order_id", pa.int64()), ("dt", pa.string()), ("customer", pa.string()),
        ("amount", pa.decimal128(10, 2)), ("updated", pa.timestamp("us")),
    ])
    orders = catalog.create_table("demo.orders", orders_schema, primary_keys=["dt", "order_id"],
                                  partition_keys=["dt"], options={"bucket": "2"})
    t0 = dt.datetime(2024, 5, 14, 9)
    first = pa.table({
        "order_id": [1, 2, 3, 4], "dt": ["2024-05-14", "2024-05-14", "2024-05-15", "2024-05-15"],
        "customer": ["ada", "bob", "cy", "dee"],
        "amount": [Decimal("10.00"), Decimal("20.50"), Decimal("7.25"), Decimal("99.99")],
        "updated": [t0] * 4,
    }, schema=orders_schema)
    s1 = write_table(orders, first)
    changes = pa.table({
        "order_id": [2, 4, 5], "dt": ["2024-05-14", "2024-05-15", "2024-05-15"], "customer": ["bob", "dee", "eve"],
        "amount": [Decimal("25.00"), Decimal("99.99"), Decimal("5.00")], "updated": [t0 + dt.timedelta(hours=1)] * 3,
        "_row_kind": ["+U", "-D", "+I"],
    })
    s2 = write_table(orders, changes.cast(orders_schema.append(pa.field("_row_kind", pa.string()))))
    print(f"orders: snapshot {s1} (insert 4), snapshot {s2} (update 1, delete 1, insert 1)")
    show("orders, latest (merged view)", orders.scan().to_arrow().sort_by("order_id"))
    show(f"orders, time travel to snapshot {s1}", orders.scan(snapshot_id=s1).to_arrow().sort_by("order_id"))
    show("orders where dt = '2024-05-15' and amount > 6",
         orders.scan(filter=[("dt", "=", "2024-05-15"), ("amount", ">", 6)]).to_arrow())

    # 2. an append table without buckets, then a partition overwrite
    events_schema = pa.schema([("ts", pa.timestamp("ms")), ("kind", pa.string()), ("day", pa.date32())])
    events = catalog.create_table("demo.events", events_schema, partition_keys=["day"])
    d1, d2 = dt.date(2024, 5, 14), dt.date(2024, 5, 15)
    write_table(events, pa.table({"ts": [t0, t0], "kind": ["click", "view"], "day": [d1, d2]}, schema=events_schema))
    write_table(events, pa.table({"ts": [t0], "kind": ["buy"], "day": [d2]}, schema=events_schema))
    write_table(events, pa.table({"ts": [t0], "kind": ["replayed"], "day": [d2]}, schema=events_schema),
                mode="overwrite", overwrite_partitions=[{"day": d2}])
    show("events after overwriting day 2024-05-15", events.scan().to_arrow().sort_by("kind"))

    # 3. an append table with fixed buckets on a bucket key, written in two phases (as Spark executors do)
    metrics_schema = pa.schema([("host", pa.string()), ("value", pa.float64())])
    metrics = catalog.create_table("demo.metrics", metrics_schema, options={"bucket": "3", "bucket-key": "host"})
    messages = []
    for part in range(3):  # three "executors"
        w = metrics.new_write()
        w.write(pa.table({"host": [f"h{part}", f"h{part + 3}"], "value": [part * 1.5, part * 2.5]}))
        messages.extend(w.prepare_commit())
    sid = metrics.commit(messages)
    print(f"\nmetrics: {len(messages)} commit messages from 3 writers -> one snapshot {sid}")

    # 4. the other merge engines on one stream of product updates
    stats_schema = pa.schema([("sku", pa.string()), ("price", pa.float64()), ("sold", pa.int64()),
                              ("name", pa.string())])
    engines = {
        "stats_partial": {"merge-engine": "partial-update"},
        "stats_agg": {"merge-engine": "aggregation", "fields.price.aggregate-function": "max",
                      "fields.sold.aggregate-function": "sum"},
        "stats_first": {"merge-engine": "first-row"},
    }
    stream = [
        pa.table({"sku": ["a", "b"], "price": [2.0, 5.0], "sold": [1, 3], "name": ["apple", None]}, schema=stats_schema),
        pa.table({"sku": ["a", "b"], "price": [None, 4.0], "sold": [2, 1], "name": [None, "bread"]}, schema=stats_schema),
    ]
    for name, options in engines.items():
        t = catalog.create_table(f"demo.{name}", stats_schema, primary_keys=["sku"], options={"bucket": "1", **options})
        for batch in stream:
            write_table(t, batch)
        show(f"{name} ({options['merge-engine']}) after two writes", t.scan().to_arrow().sort_by("sku"))

    # 5. a changelog: the lookup producer writes -U/+U pairs that an incremental read returns
    feed = catalog.create_table("demo.feed", stats_schema, primary_keys=["sku"],
                                options={"bucket": "1", "changelog-producer": "lookup"})
    write_table(feed, stream[0])
    after_first = feed.latest_snapshot().id  # a lookup table commits APPEND + COMPACT (with the changelog) per write
    write_table(feed, stream[1])
    show(f"feed.changes({after_first}, latest): the changelog of the second write (as Java's audit_log)",
         feed.changes(after_first))

    # 6. maintenance: compaction, a tag, expiration, orphan removal, rescale
    for i in range(6):  # small upserts: many sorted runs
        write_table(orders, pa.table({"order_id": [10 + i], "dt": ["2024-05-16"], "customer": [f"c{i}"],
                                      "amount": [Decimal(i)], "updated": [t0]}, schema=orders_schema))
    compacted = orders.maintenance.compact(full=True)
    print(f"\ncompaction: snapshot {compacted.snapshot_id}, {compacted.rewritten_files} files merged into "
          f"{compacted.new_files}, {compacted.upgraded_files} upgraded in place")
    orders.create_tag("before-expire")
    expired = orders.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    print(f"expiration: snapshots {list(expired.expired_snapshots)} expired, {len(expired.deleted_files)} files "
          "deleted (the tag keeps its snapshot's files)")
    orphans = orders.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=True)
    print(f"orphan files: {len(orphans.orphan_files)}")
    rescaled = orders.maintenance.rescale(bucket=4, partitions=[{"dt": "2024-05-16"}])
    print(f"rescale: partition dt=2024-05-16 now in {rescaled.bucket} buckets ({rescaled.rewritten_rows} rows "
          f"rewritten, snapshot {rescaled.snapshot_id})")
    show("orders tags", orders.system_table("tags").select(["tag_name", "snapshot_id"]))
    show("orders after maintenance (merged view)", orders.scan().to_arrow().sort_by("order_id"))

    for name in ("orders", "events", "metrics"):
        t = catalog.load_table(f"demo.{name}")
        show(f"demo.{name}$snapshots", t.system_table("snapshots").select(
            ["snapshot_id", "commit_kind", "total_record_count", "delta_record_count"]))
        show(f"demo.{name}$buckets", t.system_table("buckets"))
    print(f"\ntables: {catalog.list_tables('demo')}; Java Paimon and pypaimon read them as they are.")


if __name__ == "__main__":
    main()
