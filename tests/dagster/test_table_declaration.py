"""An asset's declared table_options / primary_keys / partition_keys against an existing table: differences are an
error naming each key and the call that changes it, before anything is written; and the metadata of a run that
committed nothing does not present an older snapshot's commit as its own."""

import dagster as dg
import pyarrow as pa
import pytest

from lakehouse_assets import PaimonIOManager
from lakehouse_assets.table_spec import PaimonAssetError
from table_format import FileSystemCatalog, SchemaChange
from tests.dagster.helpers import metadata_of, run, snapshot_count

CREATED = {"bucket": "2", "target-file-size": "64 mb", "snapshot.num-retained.min": "5"}


def orders_asset(**metadata):
    @dg.asset(key_prefix="shop", metadata={"primary_keys": ["id"], **metadata})
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2], pa.int64()), "amount": [1.0, 2.0]})
    return orders


@pytest.fixture
def created(warehouse, io_manager, instance):
    """shop.orders created by a first materialization with CREATED options (one snapshot)."""
    run([orders_asset(table_options=CREATED)], io_manager, instance)
    assert snapshot_count(warehouse, "shop.orders") == 1
    return FileSystemCatalog(warehouse)


def refused(io_manager, instance, **metadata) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - the PaimonAssetError is found in the chain below
        run([orders_asset(**metadata)], io_manager, instance)
    error: BaseException | None = info.value
    while error is not None and not isinstance(error, PaimonAssetError):
        error = error.__cause__
    assert error is not None, info.value
    return str(error)


def test_a_changed_option_names_the_key_and_the_alter_table_call(warehouse, io_manager, instance, created):
    message = refused(io_manager, instance, table_options={**CREATED, "target-file-size": "32 mb"})
    assert "'target-file-size': table has '64 mb', declared '32 mb'" in message
    call = "catalog.alter_table('shop.orders', [SchemaChange.set_option('target-file-size', '32 mb')])"
    assert call in message and "nothing was written" in message
    assert snapshot_count(warehouse, "shop.orders") == 1

    created.alter_table("shop.orders", [SchemaChange.set_option("target-file-size", "32 mb")])  # the call given
    run([orders_asset(table_options={**CREATED, "target-file-size": "32 mb"})], io_manager, instance)
    assert snapshot_count(warehouse, "shop.orders") == 2


def test_bucket_points_to_rescale_and_immutable_options_say_they_cannot_change(warehouse, io_manager, instance,
                                                                                created):
    message = refused(io_manager, instance, table_options={"bucket": "8", "merge-engine": "first-row"})
    assert "'bucket': table has '2', declared '8'" in message
    assert "table.maintenance.rescale(bucket=8)" in message and "rescale_table job" in message
    assert "'merge-engine': table has None, declared 'first-row'" in message
    assert "cannot change once the table has data" in message
    assert "alter_table" not in message  # neither of them is changed by alter_table
    assert snapshot_count(warehouse, "shop.orders") == 1


def test_an_option_changed_since_creation_as_declared_is_a_warning(warehouse, io_manager, instance, created):
    created.load_table("shop.orders").maintenance.rescale(bucket=4)  # e.g. the rescale_table job
    result = run([orders_asset(table_options=CREATED)], io_manager, instance)  # still declares bucket 2
    assert result.success and snapshot_count(warehouse, "shop.orders") == 3
    logged = [e.user_message for e in instance.all_logs(result.run_id) if e.level >= 30]
    assert any("created with 'bucket' = '2' as declared and changed since to '4'" in m for m in logged)
    assert "declared '8'" in refused(io_manager, instance, table_options={"bucket": "8"})  # a new value: refused


def test_an_unknown_key_gets_did_you_mean_and_nothing_is_written(warehouse, io_manager, instance, created):
    message = refused(io_manager, instance, table_options={"buckett": "4"})
    assert "unknown option 'buckett'" in message and "did you mean 'bucket'?" in message
    assert snapshot_count(warehouse, "shop.orders") == 1


def test_equal_values_defaults_and_undeclared_options_pass(warehouse, io_manager, instance, created):
    same = {"bucket": "2", "target-file-size": "64mb",  # the same size, written differently
            "file.format": "parquet", "merge-engine": "deduplicate", "write-only": "false"}  # Paimon's defaults
    run([orders_asset(table_options=same)], io_manager, instance)
    run([orders_asset()], io_manager, instance)  # nothing declared: nothing to compare
    assert snapshot_count(warehouse, "shop.orders") == 3
    # an option table_format does not act on counts by its string: set on the table or not
    message = refused(io_manager, instance, table_options={"sink.parallelism": "4"})
    assert "'sink.parallelism': table has None, declared '4'" in message


def test_differing_keys_say_they_cannot_change(warehouse, io_manager, instance, created):
    message = refused(io_manager, instance, primary_keys=["amount"], partition_keys=["id"])
    assert "primary_keys ['amount'] differ from the existing table's ['id']" in message
    assert "partition_keys ['id'] differ from the existing table's []" in message
    assert "primary and partition keys cannot change" in message
    assert snapshot_count(warehouse, "shop.orders") == 1


def test_a_run_that_committed_nothing_reports_no_older_commit_as_its_own(warehouse, instance):
    @dg.asset(key_prefix="e", metadata={"primary_keys": ["id"], "mode": "upsert",
                                        "table_options": {"bucket": "1"}})
    def src(context: dg.AssetExecutionContext) -> pa.Table:
        return pa.table({"id": pa.array([1, 2], pa.int64())})

    @dg.asset(key_prefix="e", ins={"src": dg.AssetIn(key=["e", "src"], metadata={"incremental": True})},
              metadata={"mode": "append"})
    def changes(src: pa.Table) -> pa.Table:
        return src.select(["id"])

    io_manager = PaimonIOManager(warehouse=warehouse)
    first = metadata_of(run([src, changes], io_manager, instance), "e__changes")
    assert first["paimon/committed"] is True and first["paimon/commit_kind"] == "APPEND"
    noop = metadata_of(run([src, changes], io_manager, instance, selection=[changes]), "e__changes")  # no new changes
    assert noop["paimon/committed"] is False
    assert noop["paimon/snapshot_id"] == first["paimon/snapshot_id"]  # the table's state: as it was
    assert noop["dagster/row_count"] == 2
    for key in ("paimon/commit_kind", "paimon/files_added", "paimon/files_removed", "paimon/snapshot_time"):
        assert key not in noop
    assert snapshot_count(warehouse, "e.changes") == 1
