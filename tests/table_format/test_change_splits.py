"""table.change_splits / read_changes_split: the pieces of an incremental read, read apart, give table.changes."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, SnapshotNotFoundError, read_changes_split, write_table

SCHEMA = pa.schema([("dt", pa.string()), ("k", pa.int64()), ("v", pa.string())])


def _rows(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.mark.parametrize("primary_keys", [(), ("dt", "k")])
def test_splits_read_apart_equal_the_changes(warehouse, primary_keys):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    options = {"bucket": "3"} if primary_keys else {}
    table = catalog.create_table("db.t", SCHEMA, primary_keys=primary_keys, partition_keys=("dt",), options=options)
    for i in range(3):
        keys = list(range(i * 5, i * 5 + 12))
        write_table(table, pa.table({"dt": [f"d{k % 2}" for k in keys], "k": pa.array(keys, pa.int64()),
                                     "v": [f"{i}-{k}" for k in keys]}, schema=SCHEMA))
    splits = table.change_splits(1, 3)
    assert len(splits) > 2
    assert len({(s.partition, s.bucket, s.files) for s in splits}) == len(splits)
    pieces = [read_changes_split(table, pickle.loads(pickle.dumps(s)), columns=["k", "v"]) for s in splits]
    assert _rows(pa.concat_tables(pieces)) == _rows(table.changes(1, 3, columns=["k", "v"]))
    assert sum(p.num_rows for p in pieces) == (24 if not primary_keys else len(set(range(5, 22))))
    assert table.change_splits(3, 3) == []
    with pytest.raises(SnapshotNotFoundError, match="no changes between snapshots 1 and 7"):
        table.change_splits(1, 7)


@pytest.mark.parametrize("merged", [True, False])
def test_unmerged_splits_equal_the_unmerged_changes(warehouse, merged):
    """`merged=False` (every record of the range, as Paimon >= 1.1 reads it) splits per file, each record keeping its
    own row kind; read apart they give `changes(merged=False)`."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=("dt", "k"), partition_keys=("dt",),
                                 options={"bucket": "2", "write-only": "true"})
    for i in range(3):
        keys = list(range(i * 4, i * 4 + 8))
        write_table(table, pa.table({"dt": ["d0"] * len(keys), "k": pa.array(keys, pa.int64()),
                                     "v": [f"{i}-{k}" for k in keys],
                                     "_row_kind": ["-D" if i and k % 5 == 0 else "+U" for k in keys]}))
    splits = table.change_splits(1, 3, merged=merged)
    pieces = [read_changes_split(table, pickle.loads(pickle.dumps(s))) for s in splits]
    expected = table.changes(1, 3, merged=merged)
    assert _rows(pa.concat_tables(pieces)) == _rows(expected)
    if not merged:
        assert all(len(s.files) == 1 for s in splits)
        assert expected.num_rows == 16  # both later commits' records, none merged away
        assert "-D" in expected.column("_row_kind").to_pylist()
