"""PaimonIOManager end to end: materialize() on a temporary warehouse, read back with table_format."""

import dagster as dg
import polars as pl
import pyarrow as pa
import pytest

from lakehouse_assets import PaimonIOManager, paimon_kinds
from table_format import FileSystemCatalog
from tests.dagster.helpers import metadata_of, rows, run, snapshot_count


def test_pyarrow_asset_creates_the_table_and_reports_standard_metadata(warehouse, io_manager, instance):
    @dg.asset(key_prefix="sales", kinds=paimon_kinds("pyarrow"))
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2, 3], pa.int64()), "amount": [1.5, 2.5, 3.5]})

    result = run([orders], io_manager, instance)
    assert rows(warehouse, "sales.orders") == [{"id": 1, "amount": 1.5}, {"id": 2, "amount": 2.5},
                                              {"id": 3, "amount": 3.5}]
    meta = metadata_of(result, "sales__orders")
    table = FileSystemCatalog(warehouse).load_table("sales.orders")
    assert meta["dagster/table_name"] == "sales.orders"
    assert meta["dagster/uri"] == table.path
    assert meta["dagster/row_count"] == 3
    assert [(c.name, c.type) for c in meta["dagster/column_schema"].columns] == [("id", "BIGINT"), ("amount", "DOUBLE")]
    assert meta["paimon/snapshot_id"] == 1 and meta["paimon/commit_kind"] == "OVERWRITE"
    assert meta["paimon/files_added"] == 1 and meta["paimon/files_removed"] == 0
    assert meta["paimon/max_sorted_runs_per_bucket"] == 1 and meta["paimon/schema_id"] == 0
    assert meta["paimon/write_mode"] == "overwrite"
    assert next(iter(orders.specs)).kinds == {"paimon", "pyarrow"}

    result = run([orders], io_manager, instance)  # overwrite: same rows, files replaced
    meta = metadata_of(result, "sales__orders")
    assert meta["dagster/row_count"] == 3 and meta["paimon/commit_kind"] == "OVERWRITE"
    assert meta["paimon/files_added"] == 1 and meta["paimon/files_removed"] == 1


def test_append_mode_from_the_io_manager_the_asset_and_the_output(warehouse, instance):
    @dg.asset(key_prefix="logs")
    def events() -> pa.Table:
        return pa.table({"id": pa.array([1, 2], pa.int64())})

    @dg.asset(key_prefix="logs", metadata={"mode": "append"})
    def clicks() -> pa.Table:
        return pa.table({"id": pa.array([7], pa.int64())})

    @dg.asset(key_prefix="logs")
    def views(context: dg.AssetExecutionContext) -> dg.Output[pa.Table]:
        return dg.Output(pa.table({"id": pa.array([9], pa.int64())}), metadata={"mode": "append"})

    appending = PaimonIOManager(warehouse=warehouse, mode="append")
    overwriting = PaimonIOManager(warehouse=warehouse)
    for _ in range(2):
        run([events], appending, instance)
        run([clicks, views], overwriting, instance)
    assert [r["id"] for r in rows(warehouse, "logs.events")] == [1, 1, 2, 2]
    assert [r["id"] for r in rows(warehouse, "logs.clicks")] == [7, 7]
    assert [r["id"] for r in rows(warehouse, "logs.views")] == [9, 9]


def test_upsert_merges_by_primary_key_and_is_refused_without_one(warehouse, instance):
    batches = iter([
        pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}),
        pa.table({"id": pa.array([2, 3], pa.int64()), "v": ["B", "c"], "_row_kind": ["+U", "+I"]}),
        pa.table({"id": pa.array([1], pa.int64()), "v": ["a"], "_row_kind": ["-D"]}),
    ])

    @dg.asset(key_prefix="crm", metadata={"primary_keys": ["id"], "mode": "upsert", "table_options": {"bucket": "2"}})
    def customers() -> pa.Table:
        return next(batches)

    for _ in range(3):
        meta = metadata_of(run([customers], PaimonIOManager(warehouse=warehouse), instance), "crm__customers")
    assert rows(warehouse, "crm.customers") == [{"id": 2, "v": "B"}, {"id": 3, "v": "c"}]
    assert meta["dagster/row_count"] == 2  # merged view, not the 5 records on disk
    table = FileSystemCatalog(warehouse).load_table("crm.customers")
    assert table.primary_keys == ["id"] and table.options["bucket"] == "2"

    @dg.asset(key_prefix="crm", metadata={"mode": "upsert"})
    def notes() -> pa.Table:
        return pa.table({"id": pa.array([1], pa.int64())})

    with pytest.raises(Exception, match="mode 'upsert' needs a primary-key table"):
        run([notes], PaimonIOManager(warehouse=warehouse), instance)
    assert not FileSystemCatalog(warehouse).table_exists("crm.notes")


def test_polars_dataframe_and_lazyframe_in_and_out_with_column_projection(warehouse, io_manager, instance):
    @dg.asset(key_prefix="shop")
    def products() -> pl.LazyFrame:
        return pl.LazyFrame({"id": [1, 2, 3], "name": ["a", "b", "c"], "price": [3.0, 1.0, 2.0]})

    @dg.asset(key_prefix="shop", ins={"products": dg.AssetIn(key=["shop", "products"],
                                                              metadata={"columns": ["id", "price"]})})
    def cheap(products: pl.DataFrame) -> pl.DataFrame:
        assert products.columns == ["id", "price"]
        return products.filter(pl.col("price") < 2.5)

    @dg.asset(key_prefix="shop", ins={"cheap": dg.AssetIn(key=["shop", "cheap"])})
    def cheap_count(cheap: pl.LazyFrame) -> pa.Table:
        assert isinstance(cheap, pl.LazyFrame)
        return pa.table({"n": [cheap.select(pl.len()).collect().item()]})

    run([products, cheap, cheap_count], io_manager, instance)
    assert rows(warehouse, "shop.cheap") == [{"id": 2, "price": 1.0}, {"id": 3, "price": 2.0}]
    assert rows(warehouse, "shop.cheap_count", sort=["n"]) == [{"n": 2}]


def test_table_and_database_from_metadata_and_single_part_keys(warehouse, io_manager, instance):
    @dg.asset(metadata={"database": "raw", "table": "orders_v2"})
    def orders() -> pa.Table:
        return pa.table({"id": [1]})

    @dg.asset
    def plain() -> pa.Table:
        return pa.table({"id": [2]})

    run([orders, plain], io_manager, instance)
    assert rows(warehouse, "raw.orders_v2") == [{"id": 1}]
    assert rows(warehouse, "default.plain") == [{"id": 2}]


def test_strict_schema_refuses_a_new_column_and_writes_nothing(warehouse, io_manager, instance):
    columns = iter([{"id": [1]}, {"id": [2], "extra": ["x"]}])

    @dg.asset(key_prefix="s")
    def evolving() -> pa.Table:
        return pa.table(next(columns))

    run([evolving], io_manager, instance)
    with pytest.raises(Exception, match=r"columns \['extra'\] are not in table 's.evolving'.*strict"):
        run([evolving], io_manager, instance)
    assert snapshot_count(warehouse, "s.evolving") == 1
    assert rows(warehouse, "s.evolving") == [{"id": 1}]


def test_declared_keys_must_match_the_existing_table(warehouse, io_manager, instance):
    FileSystemCatalog(warehouse).create_database("k")
    FileSystemCatalog(warehouse).create_table("k.t", pa.schema([pa.field("id", pa.int64(), nullable=False)]),
                                              primary_keys=["id"])

    @dg.asset(key_prefix="k", metadata={"primary_keys": ["other"]})
    def t() -> pa.Table:
        return pa.table({"id": [1]})

    with pytest.raises(Exception, match=r"primary_keys \['other'\] differ from the existing table's \['id'\]"):
        run([t], io_manager, instance)
    assert snapshot_count(warehouse, "k.t") == 0


def test_unsupported_types_and_op_outputs_get_clear_errors(warehouse, io_manager, instance):
    @dg.asset
    def a_list() -> list:
        return [1, 2]

    with pytest.raises(Exception, match="cannot handle <class 'list'>"):
        run([a_list], io_manager, instance)


def test_merge_schema_mode_adds_the_new_column(warehouse, instance):
    columns = iter([{"id": [1]}, {"id": [2], "extra": ["x"]}])

    @dg.asset(key_prefix="s", metadata={"mode": "append"})
    def evolving() -> pa.Table:
        return pa.table(next(columns))

    merging = PaimonIOManager(warehouse=warehouse, schema_mode="merge")
    run([evolving], merging, instance)
    meta = metadata_of(run([evolving], merging, instance), "s__evolving")
    assert rows(warehouse, "s.evolving") == [{"id": 1, "extra": None}, {"id": 2, "extra": "x"}]
    assert meta["paimon/schema_id"] == 1
    assert [c.name for c in meta["dagster/column_schema"].columns] == ["id", "extra"]


def test_an_empty_append_commits_nothing_and_says_so(warehouse, instance):
    sizes = iter([2, 0])

    @dg.asset(key_prefix="e", metadata={"mode": "append"})
    def maybe_empty() -> pa.RecordBatchReader:
        data = pa.table({"id": pa.array(range(next(sizes)), pa.int64())})
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())

    io_manager = PaimonIOManager(warehouse=warehouse)
    run([maybe_empty], io_manager, instance)
    meta = metadata_of(run([maybe_empty], io_manager, instance), "e__maybe_empty")
    assert meta["paimon/committed"] is False and meta["paimon/snapshot_id"] == 1 and meta["dagster/row_count"] == 2
    assert snapshot_count(warehouse, "e.maybe_empty") == 1


def test_op_outputs_are_refused_with_a_clear_error(warehouse, io_manager, instance):
    @dg.op
    def make() -> pa.Table:
        return pa.table({"id": [1]})

    @dg.job(resource_defs={"io_manager": io_manager})
    def plain_job():
        make()

    with pytest.raises(Exception, match="output 'result' is not an asset"):
        plain_job.execute_in_process(instance=instance)


def test_a_refused_first_write_leaves_no_table_behind(warehouse, io_manager, instance):
    @dg.asset(key_prefix="f", metadata={"primary_keys": ["id"], "mode": "upsert"})
    def bad_kinds() -> pa.Table:
        return pa.table({"id": pa.array([1], pa.int64()), "_row_kind": ["??"]})

    with pytest.raises(Exception, match="_row_kind"):
        run([bad_kinds], io_manager, instance)
    assert not FileSystemCatalog(warehouse).table_exists("f.bad_kinds")
