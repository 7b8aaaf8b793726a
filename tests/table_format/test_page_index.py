"""Key lookups by Parquet page index (data/page_index.py): the thrift codec round-trips what pyarrow writes, and
page-selective reads equal a full read then filter on every merge engine, deletion-vector tables, keys at page
boundaries, first/last/absent keys, key types with page statistics, multi-column keys, null pages, and files
without page indexes; only the pages that can hold a key are decoded."""

from __future__ import annotations

import datetime as dt
import io
import struct
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_format import FileSystemCatalog, Table, write_table
from table_format.data import file_format, page_file
from table_format.data import parquet_thrift as t
from tests.table_format.test_filtered_read import ENGINES, _build, _expected, _sorted

PAGES = {"parquet.page.row.count.limit": "4", "parquet.block.size": "4000"}  # ~60-row groups of 4-row pages


@pytest.fixture
def catalog(tmp_path: Any) -> FileSystemCatalog:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


class _Pages:
    """Counts the rows decoded by page (and the reads that fell back to whole row groups)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paged = self.fallback = self.rows = 0
        read_by_pages, decode = file_format.read_by_pages, page_file._decode_layout

        def counting_read(*args: Any, **kwargs: Any) -> Any:
            out = read_by_pages(*args, **kwargs)
            if out is None:
                self.fallback += 1
            else:
                self.paged += 1
            return out

        def counting_decode(source: Any, fi: Any, groups: Any, masks: Any, leaves: Any, *rest: Any) -> Any:
            for g, m in zip(groups, masks, strict=True):
                first = fi.offsets[(g, leaves[0])][2]
                need = np.logical_or.reduceat(m, first) if m.any() else np.zeros(len(first), dtype=bool)
                self.rows += int(np.repeat(need, np.diff(np.append(first, len(m)))).sum())
            return decode(source, fi, groups, masks, leaves, *rest)

        monkeypatch.setattr(file_format, "read_by_pages", counting_read)
        monkeypatch.setattr(page_file, "_decode_layout", counting_decode)


def _footer(data: bytes) -> bytes:
    n = struct.unpack("<i", data[-8:-4])[0]
    return data[-8 - n:-8]


def test_thrift_codec_round_trips_pyarrow_footers_and_page_indexes() -> None:
    n = 3000
    rng = np.random.default_rng(0)
    table = pa.table({"id": pa.array(np.arange(n), pa.int64()), "s": pa.array([f"v{i % 97}" for i in range(n)]),
                      "d": pa.array([Decimal(i) / 100 for i in range(n)], pa.decimal128(20, 2)),
                      "f": rng.random(n), "b": rng.random(n) < 0.5,
                      "ts": pa.array(np.arange(n) * 10**6, pa.timestamp("us")),
                      "neg": pa.array(-np.arange(n) * 10**12, pa.int64()),
                      "l": pa.array([[i, -i] for i in range(n)]),
                      "n": pa.array([None if i % 3 else i for i in range(n)], pa.int32())})
    buf = io.BytesIO()
    pq.write_table(table, buf, write_page_index=True, max_rows_per_page=100, row_group_size=1000,
                   write_page_checksum=True, use_dictionary=["s"], store_schema=True)
    data = buf.getvalue()
    footer = _footer(data)
    meta, used = t.decode_struct(footer)
    assert used == len(footer) and t.encode_struct(meta) == footer
    groups = t.get(meta, t.FMD_ROW_GROUPS)[1]
    assert len(groups) == 3
    for group in groups:
        for chunk in t.get(group, t.RG_COLUMNS)[1]:
            for at, size in ((t.CC_OFFSET_INDEX_OFFSET, t.CC_OFFSET_INDEX_LENGTH),
                             (t.CC_COLUMN_INDEX_OFFSET, t.CC_COLUMN_INDEX_LENGTH)):
                raw = data[t.get(chunk, at):t.get(chunk, at) + t.get(chunk, size)]
                decoded, used = t.decode_struct(raw)
                assert used == len(raw) and t.encode_struct(decoded) == raw
            locations = t.get(t.decode_struct(data[t.get(chunk, t.CC_OFFSET_INDEX_OFFSET):])[0],
                              t.OI_PAGE_LOCATIONS)[1]
            firsts = [t.get(p, t.PL_FIRST_ROW) for p in locations]
            assert firsts[0] == 0 and firsts == sorted(firsts)
    with pytest.raises(Exception, match="thrift"):
        t.decode_struct(footer[: len(footer) // 2])


@pytest.mark.parametrize("dv", [False, True], ids=["merge-on-read", "deletion-vectors"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_page_reads_equal_full_read_then_filter(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch,
                                                engine: str, dv: bool) -> None:
    options = {**ENGINES[engine], **PAGES}
    if dv:
        if engine == "first-row":
            pytest.skip("first-row tables do not take deletion vectors")
        options["deletion-vectors.enabled"] = "true"
    table = _build(catalog, engine.replace("-", "_"), options)
    pages = _Pages(monkeypatch)
    # page edges (4-row pages: ids 0, 3, 4, 7, 8 ... of a bucket's sorted run), first/last ids, absent ids
    ids = [0, 1, 3, 4, 7, 8, 11, 12, 57, 60, 63, 64, 100, 127, 128, 198, 199, 200, 250, -1]
    filters: list[Any] = [[("id", "=", i)] for i in ids]
    filters += [[("id", "in", ids)], [("id", "<", 9)], [("id", ">=", 190)], [("id", ">", 60), ("id", "<=", 70)],
                [("id", "=", 12), ("k2", "=", "a")], [("id", "=", 13), ("k2", "=", "b")], [("k2", "=", "c")],
                [[("id", "=", 5)], [("id", "=", 150)]]]
    for dnf in filters:
        got = table.scan(filter=dnf).to_arrow()
        assert _sorted(got).equals(_sorted(_expected(table, dnf))), dnf
    keys = pa.table({"id": pa.array(ids, pa.int64()), "k2": pa.array(np.array(["a", "b", "c"])[np.abs(ids) % 3])})
    expected = _expected(table, [[("id", "=", i), ("k2", "=", k)] for i, k in
                                 zip(keys["id"].to_pylist(), keys["k2"].to_pylist(), strict=True)])
    assert _sorted(table.lookup(keys)).equals(_sorted(expected))
    assert pages.paged > 0


def test_point_lookup_decodes_only_its_pages(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
    table = catalog.create_table("db.one", schema, primary_keys=["id"],
                                 options={"bucket": "1", "parquet.page.row.count.limit": "100"})
    write_table(table, pa.table({"id": pa.array(np.arange(10_000), pa.int64()),
                                 "v": [f"v{i}" for i in range(10_000)]}, schema=schema))
    pages = _Pages(monkeypatch)
    for key in (100, 199, 5_555, 9_999):
        assert table.scan(filter=[("id", "=", key)]).to_arrow().to_pylist() == [{"id": key, "v": f"v{key}"}]
    assert pages.paged == 4 and 0 < pages.rows <= 4 * 2 * 100  # the key column's page, then the value's page
    for key in (0, 99):  # on a row group's first page: read from the group's start up to the key, as before
        assert table.scan(filter=[("id", "=", key)]).to_arrow().to_pylist() == [{"id": key, "v": f"v{key}"}]
    assert pages.paged == 4 and pages.fallback == 2
    assert table.scan(filter=[("id", "=", 10_000)]).to_arrow().num_rows == 0


def test_key_types_with_page_statistics(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 400
    schema = pa.schema([("s", pa.string(), False), ("d", pa.decimal128(12, 3), False), ("day", pa.date32(), False),
                        ("big", pa.decimal128(30, 2), False), ("t", pa.int16(), False),
                        ("ts", pa.timestamp("us"), False), ("v", pa.int64())])
    rows = pa.table({"s": [f"k{i:05d}-é" for i in range(n)], "d": [Decimal(i * 7 - 900) / 1000 for i in range(n)],
                     "day": [dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in range(n)],
                     "big": [Decimal(10**25 + i) / 100 for i in range(n)], "t": pa.array(np.arange(n) - 200, pa.int16()),
                     "ts": [dt.datetime(2021, 1, 1) + dt.timedelta(seconds=i) for i in range(n)],
                     "v": np.arange(n)}, schema=schema)
    pages = _Pages(monkeypatch)
    for key in ("s", "d", "day", "big", "t", "ts"):
        table = catalog.create_table(f"db.k_{key}", schema, primary_keys=[key],
                                     options={"bucket": "2", "parquet.page.row.count.limit": "8"})
        write_table(table, rows)
        write_table(table, rows.slice(100, 50).set_column(6, "v", pa.array(np.zeros(50, dtype=np.int64))))
        for i in (0, 7, 8, 120, 399):
            value = rows.column(key)[i].as_py()
            got = table.scan(filter=[(key, "=", value)]).to_arrow()
            assert got.num_rows == 1 and got.column(key)[0].as_py() == value, (key, i)
            assert got.column("v")[0].as_py() == (0 if 100 <= i < 150 else i), (key, i)
            low, high = rows.column(key)[i // 2].as_py(), value
            assert _sorted_by(table.scan(filter=[(key, ">=", low), (key, "<=", high)]).to_arrow(), key) \
                == _sorted_by(_full_filter(table, [(key, ">=", low), (key, "<=", high)]), key), (key, i)
    assert pages.paged > 0


def _sorted_by(table: pa.Table, key: str) -> list[dict[str, Any]]:
    return table.sort_by(key).to_pylist()


def _full_filter(table: Table, dnf: Any) -> pa.Table:
    return _expected(table, dnf)


def test_nullable_column_with_null_pages(catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    schema = pa.schema([("c", pa.int32()), ("v", pa.int64())])
    table = catalog.create_table("db.append", schema, options={"bucket": "-1", "parquet.page.row.count.limit": "5"})
    c = [None] * 20 + list(range(40)) + [None] * 10 + [7] * 5
    write_table(table, pa.table({"c": pa.array(c, pa.int32()), "v": np.arange(len(c))}, schema=schema))
    pages = _Pages(monkeypatch)
    for dnf in ([("c", "=", 7)], [("c", "in", [0, 39, 100])], [("c", "=", -5)], [("c", "is null")]):
        assert table.scan(filter=dnf).to_arrow().sort_by("v").equals(_expected(table, dnf).sort_by("v")), dnf
    assert pages.paged > 0


def test_files_without_page_index_read_whole_groups(catalog: FileSystemCatalog,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    write = pq.write_table

    def without_index(*args: Any, **kwargs: Any) -> Any:
        return write(*args, **{**kwargs, "write_page_index": False})

    monkeypatch.setattr(file_format.pq, "write_table", without_index)
    table = _build(catalog, "old", PAGES)
    monkeypatch.undo()
    pages = _Pages(monkeypatch)
    for dnf in ([("id", "=", 12)], [("id", "in", [0, 64, 199, 300])], [("id", "<", 9)]):
        assert _sorted(table.scan(filter=dnf).to_arrow()).equals(_sorted(_expected(table, dnf))), dnf
    assert pages.fallback > 0 and pages.paged == 0
