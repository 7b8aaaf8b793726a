"""Option keys: a key Paimon does not know is refused at create_table (and by check_option_keys, which alter_table
uses) with the closest known key suggested; keys of Paimon 0.4 to 2.0 and the key families are accepted and stored
verbatim; a table another engine created opens whatever keys it has. tests/interop/test_option_keys_java.py shows
Java 0.9 storing what we refuse."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, OptionError, UnsupportedFeatureError, write_table
from table_format.option_keys import KNOWN_KEYS
from table_format.options import check_option_keys

SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.int64()), ("s", pa.string())])


def catalog_for(warehouse: str) -> FileSystemCatalog:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    return catalog


def listing(path: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), path) for d, _, names in os.walk(path) for n in names)


TYPOS = [
    ({"buckett": "4"}, "buckett", "bucket"),
    ({"merge-engin": "first-row"}, "merge-engin", "merge-engine"),
    ({"BUCKET": "4"}, "BUCKET", "bucket"),
    ({"changelog-prodcer": "input"}, "changelog-prodcer", "changelog-producer"),
    ({"snapshot.time-retain": "1 h"}, "snapshot.time-retain", "snapshot.time-retained"),
    ({"deletion-vector.enabled": "true"}, "deletion-vector.enabled", "deletion-vectors.enabled"),
    ({"write_only": "true"}, "write_only", "write-only"),
    ({"sequence.fields": "v"}, "sequence.fields", "sequence.field"),
    ({"merge-engine": "aggregation", "fields.v.agregate-function": "sum"}, "fields.v.agregate-function",
     "fields.v.aggregate-function"),
    ({"feilds.v.aggregate-function": "sum"}, "feilds.v.aggregate-function", "fields.v.aggregate-function"),
    ({"fields.v.sequence-grop": "s"}, "fields.v.sequence-grop", "fields.v.sequence-group"),
    ({"file-index.bloom-filter.colums": "v"}, "file-index.bloom-filter.colums", "file-index.bloom-filter.columns"),
]


@pytest.mark.parametrize(("options", "key", "suggestion"), TYPOS, ids=[t[1] for t in TYPOS])
def test_typo_is_refused_at_create_with_the_closest_key(warehouse: str, options: dict[str, str], key: str,
                                                       suggestion: str) -> None:
    catalog = catalog_for(warehouse)
    before = listing(warehouse)
    with pytest.raises(OptionError) as info:
        catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1", **options})
    assert str(info.value) == f"unknown option {key!r} for table db.t; did you mean {suggestion!r}?"
    assert listing(warehouse) == before
    assert not catalog.table_exists("db.t")


@pytest.mark.parametrize(("options", "shown"), [
    ({"zzzz-qqqq": "1"}, ["'zzzz-qqqq'", "no table option of that name"]),
    ({"fields.ghost.aggregate-function": "sum"}, ["'fields.ghost.aggregate-function'", "['ghost']", "not columns"]),
    ({"fields.v,ghost.sequence-group": "s"}, ["['ghost']"]),
    ({"fields.ghost": "x"}, ["['ghost']"]),
    ({"fields.v": "x"}, ["'fields.v'", "fields.<column>."]),
])
def test_unknown_keys_and_columns_are_refused(warehouse: str, options: dict[str, str], shown: list[str]) -> None:
    catalog = catalog_for(warehouse)
    with pytest.raises(OptionError) as info:
        catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options=options)
    for text in ["db.t", *shown]:
        assert text in str(info.value), (text, str(info.value))
    assert not catalog.table_exists("db.t")


ACCEPTED = {
    "bucket": "2",
    "sequence.auto-padding": "row-kind-flag",  # Paimon <= 0.8; 0.9 stores and ignores it
    "sink.parallelism": "4",  # Flink connector option
    "write.merge-schema": "false",  # Spark connector option
    "metadata.iceberg.storage": "disabled",  # Paimon 1.0
    "deletion-vectors.bitmap64": "false",  # Paimon 1.x
    "target-file-row-num": "1000000",  # Paimon 2.0
    "fields.v.stats-mode": "full",
    "fields.s.ignore-retract": "false",
    "fields.default-aggregate-function": "last_non_null_value",
    "orc.bloom.filter.columns": "s",  # format options pass through
    "parquet.page.size": "1048576",
    "file-index.bloom-filter.columns": "s",
    "file-index.bloom-filter.s.fpp": "0.01",
    "commit.callback.com.example.Hook.param": "x",
}


def test_known_keys_of_every_paimon_version_and_key_families_are_stored_verbatim(warehouse: str) -> None:
    table = catalog_for(warehouse).create_table("db.t", SCHEMA, primary_keys=["k"], options=ACCEPTED)
    assert table.options == ACCEPTED
    saved = json.loads(Path(table.path, "schema", "schema-0").read_text(encoding="utf-8"))
    assert saved["options"] == ACCEPTED


def test_known_but_unsupported_keys_keep_their_refusal(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    with pytest.raises(UnsupportedFeatureError, match="hll_sketch"):
        catalog.create_table("db.t", SCHEMA, primary_keys=["k"],
                             options={"merge-engine": "aggregation", "fields.v.aggregate-function": "hll_sketch"})
    with pytest.raises(UnsupportedFeatureError, match="postpone bucket mode .option 'bucket' = -2."):
        catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "-2"})


def test_primary_key_and_partition_options_give_the_keys_as_in_java(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    table = catalog.create_table("db.t", SCHEMA, options={"primary-key": "k, s", "partition": "s", "bucket": "1"})
    assert table.primary_keys == ["k", "s"]
    assert table.partition_keys == ["s"]
    assert table.options == {"bucket": "1"}
    with pytest.raises(OptionError, match="'primary-key'.*both"):
        catalog.create_table("db.u", SCHEMA, primary_keys=["k"], options={"primary-key": "k"})
    with pytest.raises(OptionError, match="'partition'.*both"):
        catalog.create_table("db.u", SCHEMA, partition_keys=["s"], options={"partition": "s"})
    assert not catalog.table_exists("db.u")


def test_a_table_with_unknown_keys_from_another_engine_opens_reads_and_writes(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    write_table(table, pa.table({"k": pa.array([1], pa.int32()), "v": [10], "s": ["a"]}))
    path = Path(table.path, "schema", "schema-0")
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["options"].update({"buckett": "4", "some.engine.private-key": "x"})  # what Java would store
    path.write_text(json.dumps(saved), encoding="utf-8")
    reopened = catalog.load_table("db.t")
    assert reopened.options["buckett"] == "4"
    write_table(reopened, pa.table({"k": pa.array([2], pa.int32()), "v": [20], "s": ["b"]}))
    assert sorted(reopened.scan().to_arrow().column("k").to_pylist()) == [1, 2]


def test_check_option_keys_for_alter_names_table_and_key() -> None:
    with pytest.raises(OptionError, match=r"^unknown option 'num-sorted-run.compaction-triger' for table db.t; "
                                          r"did you mean 'num-sorted-run.compaction-trigger'\?$"):
        check_option_keys({"num-sorted-run.compaction-triger": "3"}, table="db.t", columns=["k"])
    check_option_keys({"num-sorted-run.compaction-trigger": "3", "fields.k.default-value": "0"}, table="db.t",
                      columns=["k"])


def test_known_keys_hold_facts_of_each_era() -> None:
    assert {"bucket", "merge-engine", "sequence.field", "changelog-producer"} <= KNOWN_KEYS  # 0.9
    assert {"sequence.auto-padding", "write-mode"} <= KNOWN_KEYS  # before 0.9
    assert {"metadata.iceberg.storage", "data-evolution.enabled", "postpone.default-bucket-num"} <= KNOWN_KEYS
    assert "buckett" not in KNOWN_KEYS
