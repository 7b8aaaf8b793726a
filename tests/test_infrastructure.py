"""Smoke tests of the test infrastructure: the Java oracle and the pypaimon peer work from the fixtures."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

pytestmark = pytest.mark.interop


def test_oracle_writes_and_reads_a_sample(oracle, warehouse):
    samples = oracle.home / "samples"
    with open(samples / "01_pk_dedup_bucket2.json", encoding="utf-8") as f:
        spec = json.load(f)
    spec["warehouse"] = warehouse

    result = oracle.write_spec(spec)

    assert result["table_path"].startswith(warehouse)
    assert os.path.isdir(os.path.join(warehouse, "db.db", "pk_dedup_bucket2", "snapshot"))
    with open(samples / "expected" / "pk_dedup_bucket2.jsonl", encoding="utf-8") as f:
        expected = [json.loads(line) for line in f if line.strip()]
    assert oracle.read(warehouse, "db", "pk_dedup_bucket2") == expected


def test_oracle_error_carries_the_java_stack_trace(oracle, warehouse):
    with pytest.raises(oracle.Error) as info:
        oracle.read(warehouse, "db", "no_such_table")
    assert info.value.rc != 0
    assert "no_such_table" in "\n".join(getattr(info.value, "__notes__", []))


def test_pypaimon_round_trips_a_pk_table_with_row_kinds(pypaimon, warehouse):
    first = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": ["a", "b", "c"],
            "price": pa.array([1.5, 2.5, None], pa.float64()),
            "op": ["+I", "+I", "+I"],
        }
    )
    assert pypaimon.write(
        warehouse, "db.t", first, primary_keys=["id"], options={"bucket": "2"}, row_kind_column="op"
    ) == {"snapshot_id": 1}
    second = pa.table(
        {
            "id": pa.array([2, 3], pa.int64()),
            "name": ["b2", "c"],
            "price": pa.array([2.75, None], pa.float64()),
            "op": ["+U", "-D"],
        }
    )
    assert pypaimon.write(warehouse, "db.t", second, row_kind_column="op") == {"snapshot_id": 2}

    latest = pypaimon.read(warehouse, "db.t").sort_by("id")
    assert latest.column_names == ["id", "name", "price", "op"]
    assert latest.to_pylist() == [
        {"id": 1, "name": "a", "price": 1.5, "op": "+I"},
        {"id": 2, "name": "b2", "price": 2.75, "op": "+U"},
    ]
    assert pypaimon.read(warehouse, "db.t", snapshot_id=1).num_rows == 3

    third = pa.table({"id": pa.array([9], pa.int64()), "name": ["z"], "price": pa.array([0.0]), "op": ["+I"]})
    assert pypaimon.write(warehouse, "db.t", third, mode="overwrite") == {"snapshot_id": 3}
    assert pypaimon.read(warehouse, "db.t")["id"].to_pylist() == [9]


def test_oracle_reads_a_table_written_by_pypaimon(oracle, pypaimon, warehouse):
    data = pa.table({"k": pa.array([1, 2], pa.int32()), "dt": ["d1", "d2"], "v": ["x", None]})
    pypaimon.write(warehouse, "db.p", data, primary_keys=["k", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    assert oracle.read(warehouse, "db", "p") == [
        {"k": 1, "dt": "d1", "v": "x"},
        {"k": 2, "dt": "d2", "v": None},
    ]
