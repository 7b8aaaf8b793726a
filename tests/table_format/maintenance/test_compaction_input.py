"""`table.maintenance.compaction_input_bytes(tasks)`: the bytes a compaction would rewrite, from metadata alone,
equal to what the compaction then actually reads (its COMPACT snapshot's removed files)."""

import pyarrow as pa

from table_format import FileSystemCatalog, write_table

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def make(tmp_path, name, writes, *, primary_keys=("id",), **options):
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db", exist_ok=True)
    opts = {"bucket": "1" if primary_keys else "-1", "write-only": "true", **options}
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=list(primary_keys), options=opts)
    for i in range(writes):
        write_table(table, pa.table({"id": pa.array([i, i + 1], pa.int64()), "v": [f"w{i}", f"w{i}"]}, schema=SCHEMA))
    return table.refresh()


def removed_bytes(table) -> int:
    files = table.system_table("files")
    return sum(files["file_size_in_bytes"].to_pylist())


def test_nothing_to_pick_is_zero_though_buckets_are_planned(tmp_path):
    table = make(tmp_path, "pk", 2)  # 2 sorted runs < trigger 5
    tasks = table.maintenance.plan_compaction()
    assert tasks and all(t.files for t in tasks)
    assert table.maintenance.compaction_input_bytes(tasks) == 0
    assert table.maintenance.compact().snapshot_id is None  # and indeed nothing is compacted
    full = table.maintenance.plan_compaction(full=True)
    assert table.maintenance.compaction_input_bytes(full) == removed_bytes(table)


def test_picked_bytes_are_what_the_compaction_rewrites(tmp_path):
    for name, keys in (("pk", ("id",)), ("log", ())):
        table = make(tmp_path, name, 6, primary_keys=keys)
        before = removed_bytes(table)
        expected = table.maintenance.compaction_input_bytes(table.maintenance.plan_compaction())
        assert expected == before  # every file is picked: 6 runs / 6 small files
        result = table.maintenance.compact()
        assert result.snapshot_id is not None and result.rewritten_files == 6
