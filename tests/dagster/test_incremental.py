"""Incremental inputs: only the upstream changes since the downstream's last materialization, exactly once."""

import dagster as dg
import polars as pl
import pyarrow as pa
import pytest

from lakehouse_assets import PaimonIOManager, cursor_key
from tests.dagster.helpers import metadata_of, rows, run

BATCHES = [
    {"id": [1, 2, 3], "name": ["a", "b", "c"], "_row_kind": ["+I", "+I", "+I"]},
    {"id": [2, 4], "name": ["B", "d"], "_row_kind": ["+U", "+I"]},
    {"id": [1], "name": ["a"], "_row_kind": ["-D"]},
]


def test_changes_since_the_last_materialization_across_three_upstream_runs(warehouse, instance):
    batches = iter(BATCHES)
    fail = {"now": False}

    @dg.asset(key_prefix="inc", metadata={"primary_keys": ["id"], "mode": "upsert"})
    def customers() -> pa.Table:
        batch = next(batches)
        return pa.table({"id": pa.array(batch["id"], pa.int64()), "name": batch["name"],
                         "_row_kind": batch["_row_kind"]})

    @dg.asset(key_prefix="inc", metadata={"mode": "append"},
              ins={"customers": dg.AssetIn(key=["inc", "customers"], metadata={"incremental": True})})
    def customer_log(customers: pl.DataFrame) -> pl.DataFrame:
        if fail["now"]:
            raise RuntimeError("downstream failed after loading its input")
        return customers.rename({"_row_kind": "kind"})

    io_manager = PaimonIOManager(warehouse=warehouse)

    def downstream():
        return run([customers, customer_log], io_manager, instance, selection=[customer_log],
                   raise_on_error=not fail["now"])

    run([customers], io_manager, instance)
    first = downstream()  # nothing consumed yet: the whole table as +I
    assert metadata_of(first, "inc__customer_log")[cursor_key(dg.AssetKey(["inc", "customers"]))] == 1

    # a maintenance job reports a compaction of the downstream table: a materialization without the cursor
    instance.report_runless_asset_event(dg.AssetMaterialization(["inc", "customer_log"],
                                                                metadata={"paimon/commit_kind": "COMPACT"}))
    run([customers], io_manager, instance)
    fail["now"] = True
    assert not downstream().success  # loaded snapshot 2, then failed: the cursor must stay at 1
    fail["now"] = False

    run([customers], io_manager, instance)
    third = downstream()  # changes after 1 up to 3
    assert metadata_of(third, "inc__customer_log")[cursor_key(dg.AssetKey(["inc", "customers"]))] == 3
    fourth = downstream()  # nothing new
    assert metadata_of(fourth, "inc__customer_log")["dagster/row_count"] == 6

    got = [(r["id"], r["name"], r["kind"]) for r in rows(warehouse, "inc.customer_log", sort=["kind", "id"])]
    assert sorted(got) == sorted([
        (1, "a", "+I"), (2, "b", "+I"), (3, "c", "+I"),   # first run: the table
        (2, "B", "+U"), (4, "d", "+I"), (1, "a", "-D"),   # second and third upstream runs, read once
    ])
    assert rows(warehouse, "inc.customers") == [{"id": 2, "name": "B"}, {"id": 3, "name": "c"},
                                                {"id": 4, "name": "d"}]


def test_incremental_inputs_refuse_partitioned_downstreams(warehouse, io_manager, instance):
    @dg.asset(key_prefix="inc")
    def source() -> pa.Table:
        return pa.table({"id": [1]})

    @dg.asset(key_prefix="inc", partitions_def=dg.StaticPartitionsDefinition(["a"]),
              metadata={"partition_expr": "p"},
              ins={"source": dg.AssetIn(key=["inc", "source"], metadata={"incremental": True})})
    def per_partition(source: pa.Table) -> pa.Table:
        return source

    run([source], io_manager, instance)
    with pytest.raises(Exception, match="incremental inputs need an unpartitioned downstream asset"):
        run([source, per_partition], io_manager, instance, selection=[per_partition], partition_key="a")


def test_incremental_input_over_a_partitioned_upstream_reads_the_changes_of_every_partition(warehouse, instance):
    daily = dg.DailyPartitionsDefinition(start_date="2024-05-01")
    version = {"n": 0}

    @dg.asset(key_prefix="inc", partitions_def=daily, metadata={"partition_expr": "dt", "mode": "append"})
    def visits(context: dg.AssetExecutionContext) -> pa.Table:
        version["n"] += 1
        return pa.table({"dt": [context.partition_key], "n": [version["n"]]})

    seen: list[list[tuple[str, int, str]]] = []

    @dg.asset(key_prefix="inc", ins={"visits": dg.AssetIn(key=["inc", "visits"], metadata={"incremental": True})})
    def visit_changes(visits: pa.Table) -> pa.Table:
        seen.append(sorted(zip(visits["dt"].to_pylist(), visits["n"].to_pylist(), visits["_row_kind"].to_pylist(),
                               strict=True)))
        return pa.table({"rows": [visits.num_rows]})

    io_manager = PaimonIOManager(warehouse=warehouse)
    run([visits], io_manager, instance, partition_key="2024-05-01")
    run([visits, visit_changes], io_manager, instance, selection=[visit_changes])
    run([visits], io_manager, instance, partition_key="2024-05-02")
    run([visits], io_manager, instance, partition_key="2024-05-01")
    run([visits, visit_changes], io_manager, instance, selection=[visit_changes])
    assert seen == [[("2024-05-01", 1, "+I")], [("2024-05-01", 3, "+I"), ("2024-05-02", 2, "+I")]]


def test_overwrites_upstream_become_retractions_and_inserts(warehouse, instance):
    daily = dg.DailyPartitionsDefinition(start_date="2024-05-01")
    runs = iter([("2024-05-01", 1, "overwrite"), ("2024-05-02", 2, "append"), ("2024-05-01", 3, "overwrite")])

    @dg.asset(key_prefix="ow", partitions_def=daily, metadata={"partition_expr": "dt"})
    def days(context: dg.AssetExecutionContext) -> dg.Output[pa.Table]:
        day, n, mode = next(runs)
        assert day == context.partition_key
        return dg.Output(pa.table({"dt": [day, day], "n": [n, n * 10]}), metadata={"mode": mode})

    seen: list[list[tuple[str, int, str]]] = []

    @dg.asset(key_prefix="ow", ins={"days": dg.AssetIn(key=["ow", "days"], metadata={"incremental": True})})
    def day_changes(days: pl.DataFrame) -> pa.Table:
        seen.append(list(days.select("dt", "n", "_row_kind").iter_rows()))
        return pa.table({"rows": [days.height]})

    io_manager = PaimonIOManager(warehouse=warehouse)
    run([days], io_manager, instance, partition_key="2024-05-01")
    run([days, day_changes], io_manager, instance, selection=[day_changes])
    run([days], io_manager, instance, partition_key="2024-05-02")
    run([days], io_manager, instance, partition_key="2024-05-01")
    run([days, day_changes], io_manager, instance, selection=[day_changes])
    assert seen[0] == [("2024-05-01", 1, "+I"), ("2024-05-01", 10, "+I")]
    assert seen[1] == [("2024-05-02", 2, "+I"), ("2024-05-02", 20, "+I"),   # the append, then the overwrite:
                       ("2024-05-01", 1, "-D"), ("2024-05-01", 10, "-D"),   # old rows of the partition retracted
                       ("2024-05-01", 3, "+I"), ("2024-05-01", 30, "+I")]   # and the new ones inserted

    @dg.asset(key_prefix="ow")
    def whole() -> pa.Table:
        return pa.table({"id": pa.array(next(batches), pa.int64())})

    @dg.asset(key_prefix="ow", ins={"whole": dg.AssetIn(key=["ow", "whole"], metadata={"incremental": True})})
    def whole_changes(whole: pa.Table) -> pa.Table:
        seen.append(sorted(zip(whole["id"].to_pylist(), whole["_row_kind"].to_pylist(), strict=True)))
        return pa.table({"rows": [whole.num_rows]})

    batches = iter([[1, 2], [2, 3]])
    run([whole], io_manager, instance)
    run([whole, whole_changes], io_manager, instance, selection=[whole_changes])
    run([whole], io_manager, instance)  # the default mode: overwrite the whole table
    run([whole, whole_changes], io_manager, instance, selection=[whole_changes])
    assert seen[3] == [(1, "-D"), (2, "+I"), (2, "-D"), (3, "+I")]


def test_a_multi_asset_records_its_cursor_on_every_asset_it_materializes(warehouse, instance):
    batches = iter([[1, 2], [3]])

    @dg.asset(key_prefix="ma", metadata={"mode": "append"})
    def events() -> pa.Table:
        return pa.table({"id": pa.array(next(batches), pa.int64())})

    @dg.multi_asset(outs={"evens": dg.AssetOut(key_prefix="ma"), "odds": dg.AssetOut(key_prefix="ma")},
                    ins={"events": dg.AssetIn(key=["ma", "events"], metadata={"incremental": True})})
    def split(events: pa.Table):
        ids = events["id"].to_pylist()
        yield dg.Output(pa.table({"id": pa.array([i for i in ids if i % 2 == 0], pa.int64())}), "evens",
                        metadata={"mode": "append"})
        yield dg.Output(pa.table({"id": pa.array([i for i in ids if i % 2], pa.int64())}), "odds",
                        metadata={"mode": "append"})

    io_manager = PaimonIOManager(warehouse=warehouse)
    for _ in range(2):
        run([events], io_manager, instance)
        run([events, split], io_manager, instance, selection=[split])
    cursor = cursor_key(dg.AssetKey(["ma", "events"]))
    for name in ("evens", "odds"):
        record = instance.fetch_materializations(dg.AssetKey(["ma", name]), limit=1).records[0]
        assert record.asset_materialization.metadata[cursor].value == 2
    assert rows(warehouse, "ma.evens") == [{"id": 2}]
    assert rows(warehouse, "ma.odds") == [{"id": 1}, {"id": 3}]
