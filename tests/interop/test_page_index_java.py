"""Key lookups in Java Paimon 0.9's Parquet files (parquet-mr's footers and page indexes, or none): our
page-selective reads (data/page_index.py) equal a full read then filter, and Java's own read of the table."""

from __future__ import annotations

import glob
import struct
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from table_format import FileSystemCatalog
from table_format.data import file_format
from table_format.data import parquet_thrift as t

pytestmark = pytest.mark.interop

ROWS = 3000


def _spec(warehouse: str) -> dict[str, Any]:
    rows = [[i, f"s{i % 37}", i * 3] for i in range(ROWS)]
    upserts = [[i, f"u{i}", -i] for i in range(0, ROWS, 7)]
    return {"warehouse": warehouse, "database": "db", "table": "t", "if_exists": "drop",
            "schema": {"fields": [{"name": "id", "type": "BIGINT NOT NULL"}, {"name": "s", "type": "STRING"},
                                  {"name": "v", "type": "BIGINT"}],
                       "primary_keys": ["id"],
                       "options": {"bucket": "2", "parquet.page.row.count.limit": "100", "parquet.page.size": "2048"}},
            "batches": [rows, upserts]}


def test_lookups_in_java_files(oracle: Any, warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    oracle.write_spec(_spec(warehouse))
    files = glob.glob(f"{warehouse}/db.db/t/bucket-*/*.parquet")
    assert files
    for path in files:  # our codec reads parquet-mr's footer as it wrote it
        data = Path(path).read_bytes()
        n = struct.unpack("<i", data[-8:-4])[0]
        footer, used = t.decode_struct(data[-8 - n:-8])
        assert used == n and t.encode_struct(footer) == data[-8 - n:-8]
        assert t.get(footer, t.FMD_NUM_ROWS) == pq.ParquetFile(path).metadata.num_rows
        chunks = [c for g in t.get(footer, t.FMD_ROW_GROUPS)[1] for c in t.get(g, t.RG_COLUMNS)[1]]
        assert all(t.CC_OFFSET_INDEX_OFFSET in c and t.CC_COLUMN_INDEX_OFFSET in c for c in chunks)  # page indexes
    table = FileSystemCatalog(warehouse).load_table("db.t")
    full = table.scan().to_arrow()
    java = {r["id"]: r for r in oracle.read(warehouse, "db", "t")}
    assert sorted(java) == sorted(full.column("id").to_pylist())
    calls = {"paged": 0, "whole": 0}
    read_by_pages = file_format.read_by_pages

    def counting(*args: Any, **kwargs: Any) -> Any:
        out = read_by_pages(*args, **kwargs)
        calls["whole" if out is None else "paged"] += 1
        return out

    monkeypatch.setattr(file_format, "read_by_pages", counting)
    for key in (0, 1, 99, 100, 101, 700, 1500, 2999, 3000, -4):
        got = table.scan(filter=[("id", "=", key)]).to_arrow().to_pylist()
        assert got == [r for r in full.to_pylist() if r["id"] == key], key
        assert [r["v"] for r in got] == ([java[key]["v"]] if key in java else []), key
    got = table.scan(filter=[("id", ">=", 250), ("id", "<", 420)]).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(250, 420))
    assert calls["paged"] > 0  # keys past a row group's first page are read by page index
