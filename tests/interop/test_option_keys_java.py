"""Option keys against real Java Paimon 0.9: Java is laxer (it stores unknown keys, at create and at alter, and the
table silently uses the defaults); we refuse them with the closest key suggested, and still load Java's table.

Also: every option key Java 0.9 defines is accepted here, and keys of newer Paimon versions that we accept are
stored as Java stores them (verbatim, and Java 0.9 reads the table)."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pytest
from interop_cases import DB, Step, arrow_table, java_lines, java_spec, java_system_table
from oracle_values import canonical_lines, ours_as_oracle

from table_format import FileSystemCatalog, OptionError, write_table
from table_format.options import check_option_keys

FIELDS = [("k", "INT NOT NULL"), ("v", "STRING")]
SCHEMA = pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())])


def listing(warehouse: str) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), warehouse) for d, _, names in os.walk(warehouse) for n in names)


def java_options(oracle: Any, warehouse: str, table: str) -> dict[str, str]:
    return {r["key"]: r["value"] for r in java_system_table(oracle, warehouse, table, "options")}


def test_java_stores_unknown_option_keys_and_ignores_them_we_refuse_them(warehouse: str, oracle: Any) -> None:
    options = {"bucket": "2", "buckett": "4", "merge-engin": "first-row"}
    steps = [Step([("+I", {"k": 1, "v": "a"}), ("+I", {"k": 2, "v": "b"})]), Step([("+I", {"k": 1, "v": "c"})])]
    oracle.write_spec(java_spec(warehouse, "lax", FIELDS, steps, primary_keys=["k"], options=options))
    # Java kept both typos and used the defaults: deduplicate (not first-row), so key 1 holds its last value
    assert java_options(oracle, warehouse, "lax") == options
    java = java_lines(oracle, warehouse, "lax")
    assert java == canonical_lines([{"k": 1, "v": "c"}, {"k": 2, "v": "b"}])

    # we load Java's table whatever its keys, read what Java reads, and keep writing it
    catalog = FileSystemCatalog(warehouse)
    table = catalog.load_table(f"{DB}.lax")
    assert table.options == options
    assert ours_as_oracle(table.scan().to_arrow(), list(table.schema.fields)) == java
    write_table(table, arrow_table(FIELDS, [("+I", {"k": 3, "v": "d"})]))
    assert java_lines(oracle, warehouse, "lax") == canonical_lines(
        [{"k": 1, "v": "c"}, {"k": 2, "v": "b"}, {"k": 3, "v": "d"}])

    # the same options through our create_table: refused, with the closest key, and nothing is created
    before = listing(warehouse)
    with pytest.raises(OptionError, match=rf"unknown option 'buckett' for table {DB}.ours; did you mean 'bucket'\?"):
        catalog.create_table(f"{DB}.ours", SCHEMA, primary_keys=["k"], options=options)
    with pytest.raises(OptionError, match=r"unknown option 'merge-engin' .*did you mean 'merge-engine'\?"):
        catalog.create_table(f"{DB}.ours", SCHEMA, primary_keys=["k"], options={"merge-engin": "first-row"})
    assert listing(warehouse) == before
    assert not catalog.table_exists(f"{DB}.ours")


def test_java_alter_stores_an_unknown_key_our_check_refuses_and_we_still_load(warehouse: str, oracle: Any) -> None:
    steps = [Step([("+I", {"k": 1, "v": "a"})])]
    oracle.write_spec(java_spec(warehouse, "altered", FIELDS, steps, primary_keys=["k"], options={"bucket": "1"}))
    typo = {"op": "set_option", "key": "snapshot.num-retaind.max", "value": "3"}
    assert json.loads(oracle.call(["alter", warehouse, DB, "altered", json.dumps([typo])]))["schema_id"] == 1
    assert java_options(oracle, warehouse, "altered")["snapshot.num-retaind.max"] == "3"

    table = FileSystemCatalog(warehouse).load_table(f"{DB}.altered")  # loading never checks keys
    assert table.schema.id == 1 and table.options["snapshot.num-retaind.max"] == "3"
    with pytest.raises(OptionError, match=r"'snapshot.num-retaind.max' for table db.altered; "
                                          r"did you mean 'snapshot.num-retained.max'\?"):
        check_option_keys(table.options, table="db.altered", columns=table.schema.field_names)  # alter_table's check
    write_table(table, arrow_table(FIELDS, [("+I", {"k": 2, "v": "b"})]))
    assert java_lines(oracle, warehouse, "altered") == canonical_lines([{"k": 1, "v": "a"}, {"k": 2, "v": "b"}])
    assert ours_as_oracle(table.scan().to_arrow(), list(table.schema.fields)) == java_lines(oracle, warehouse,
                                                                                           "altered")


def test_every_option_key_of_java_0_9_is_accepted(oracle: Any) -> None:
    listed = [json.loads(line) for line in oracle.call(["options"]).splitlines() if line.strip()]
    keys = {k for o in listed for k in [o["key"], *o["fallback_keys"]]}
    assert len(keys) > 150
    # '#' stands for a callback class name
    check_option_keys({k.replace("#", "com.example.Callback"): "x" for k in keys}, table="db.t", columns=["k"])


def test_keys_of_newer_paimon_are_stored_verbatim_and_java_0_9_reads_the_table(warehouse: str, oracle: Any) -> None:
    newer = {"sink.parallelism": "2", "metadata.iceberg.storage": "disabled", "write.merge-schema": "false",
             "deletion-vectors.bitmap64": "false"}
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database(DB, exist_ok=True)
    table = catalog.create_table(f"{DB}.newer", SCHEMA, primary_keys=["k"], options={"bucket": "1", **newer})
    write_table(table, arrow_table(FIELDS, [("+I", {"k": 1, "v": "a"}), ("+I", {"k": 2, "v": None})]))
    assert java_options(oracle, warehouse, "newer") == {"bucket": "1", **newer}
    assert java_lines(oracle, warehouse, "newer") == canonical_lines([{"k": 1, "v": "a"}, {"k": 2, "v": None}])
