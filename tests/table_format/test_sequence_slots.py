"""TableWrite(sequence_slot=(slot, slots)): writers of the same bucket in one commit number their rows in slots
of their own (the plain Spark write of jobs/spark/pk_write.py), so the merge is by number, never by tie."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, OptionError, write_table

SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.string())])


def _rows(ids, v):
    return pa.table({"id": pa.array(list(ids), pa.int64()), "v": [v] * len(ids)}, schema=SCHEMA)


def test_two_slotted_writers_of_one_bucket(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id"],
                                 options={"bucket": "1", "num-sorted-run.compaction-trigger": "1"})
    write_table(table, _rows(range(20), "old"))
    base = max(f["max_sequence_number"] for f in table.system_table("files").to_pylist()) + 1

    first = table.new_write(sequence_slot=(0, 2))
    first.write(_rows(range(10), "a0"))
    first.write(_rows(range(5), "a1"))  # the same writer, later: replaces a0 of keys 0..4
    second = table.new_write(sequence_slot=(1, 2))
    second.write(_rows(range(5, 15), "b"))
    messages = first.prepare_commit() + second.prepare_commit()
    assert all(not m.compact_before for m in messages)  # slotted writers never compact
    table.commit(messages)

    got = {r["id"]: r["v"] for r in table.scan().to_arrow().to_pylist()}
    assert [got[k] for k in range(5)] == ["a1"] * 5
    assert all(got[k] in ("a0", "b") for k in range(5, 10))
    assert [got[k] for k in range(10, 15)] == ["b"] * 5
    assert [got[k] for k in range(15, 20)] == ["old"] * 5
    new = [f for f in table.system_table("files").to_pylist() if f["min_sequence_number"] >= base]
    # first: 10 rows merged to 10 keys (numbers base + 2i), second: 10 rows (base + 2i + 1)
    assert sorted((f["min_sequence_number"] - base) % 2 for f in new) == [0, 1]
    assert max(f["max_sequence_number"] for f in new) < base + 2 * 15


def test_slot_must_be_below_slots(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    with pytest.raises(OptionError, match="slot 2"):
        table.new_write(sequence_slot=(2, 2))
