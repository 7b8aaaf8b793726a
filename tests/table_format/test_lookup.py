"""table.lookup(keys): the latest merged row of each key, equal to a scan filtered on the same keys on every merge
engine (deletion vectors too), on partitioned, dynamic-bucket and one-column-key tables; point reads decode only up
to the last hit of a row group."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from table_format import FileSystemCatalog, write_table
from table_format.data.probe_read import probe_row_groups, read_probed
from table_format.errors import SchemaError
from tests.table_format.test_filtered_read import ENGINES, _build, _sorted


@pytest.fixture
def catalog(tmp_path: Any) -> FileSystemCatalog:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


def _keys(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.choice(260, n, replace=False)  # ids >= 200 are absent
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "k2": pa.array(np.array(["a", "b", "c"])[(ids + rng.integers(0, 2, n)) % 3])})


@pytest.mark.parametrize("dv", [False, True], ids=["merge-on-read", "deletion-vectors"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_lookup_equals_filtered_scan(catalog: FileSystemCatalog, engine: str, dv: bool) -> None:
    options = dict(ENGINES[engine])
    if dv:
        if engine == "first-row":
            pytest.skip("first-row tables do not take deletion vectors")
        options["deletion-vectors.enabled"] = "true"
    table = _build(catalog, engine.replace("-", "_"), options)
    for seed in range(3):
        keys = _keys(40, seed)
        dnf = [[("id", "=", i), ("k2", "=", k)] for i, k in zip(keys["id"].to_pylist(), keys["k2"].to_pylist(),
                                                                   strict=True)]
        expected = table.scan(filter=dnf).to_arrow()
        got = table.lookup(keys)
        assert 0 < got.num_rows < keys.num_rows
        assert _sorted(got).equals(_sorted(expected)), seed
        # duplicated keys and extra columns change nothing; a projection keeps the same rows
        assert _sorted(table.lookup(pa.concat_tables([keys, keys]).append_column(
            "x", pa.array(range(2 * keys.num_rows))))).equals(_sorted(expected))
        assert table.lookup(keys, columns=["s"]).num_rows == expected.num_rows


def test_lookup_single_key_partitioned_and_dynamic_bucket(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("dt", pa.string(), False), ("id", pa.int32(), False), ("v", pa.float64())])
    rng = np.random.default_rng(5)
    rows = pa.table({"dt": pa.array(np.array(["d1", "d2"])[rng.integers(0, 2, 3000)]),
                     "id": pa.array(rng.permutation(3000), pa.int32()), "v": rng.random(3000)}, schema=schema)
    for name, options in (("fixed", {"bucket": "3"}), ("dynamic", {"bucket": "-1"})):
        table = catalog.create_table(f"db.{name}", schema, primary_keys=["dt", "id"], partition_keys=["dt"],
                                     options={**options, "parquet.block.size": "2000"})
        write_table(table, rows)
        write_table(table, rows.slice(0, 500).set_column(2, "v", pa.array(np.zeros(500))))
        keys = rows.select(["dt", "id"]).take(rng.choice(3000, 200, replace=False))
        keys = pa.concat_tables([keys, pa.table({"dt": ["d3", "d1"], "id": pa.array([1, 5000], pa.int32())})],
                                promote_options="permissive")
        full = table.scan().to_arrow()
        expected = full.join(keys, keys=["dt", "id"], join_type="left semi")
        got = table.lookup(keys)
        assert got.num_rows == 200
        assert got.sort_by("id").to_pylist() == expected.sort_by("id").to_pylist(), name
    single = catalog.create_table("db.single", schema, primary_keys=["id"], options={"bucket": "4"})
    write_table(single, rows)
    want = [7, 2999, 3000, -1]
    for keys in (want, pa.array(want, pa.int64()), pa.table({"id": want})):
        got = single.lookup(keys, columns=["id", "v"])
        assert got.sort_by("id").to_pylist() == single.scan(
            filter=[("id", "in", want)], columns=["id", "v"]).to_arrow().sort_by("id").to_pylist()
        assert got.num_rows == 2
    assert single.lookup([]).num_rows == 0


def test_lookup_refuses_bad_input(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("k2", pa.string(), False), ("v", pa.int64())])
    table = catalog.create_table("db.t", schema, primary_keys=["id", "k2"], options={"bucket": "1"})
    with pytest.raises(SchemaError, match="lack primary-key column.*k2"):
        table.lookup(pa.table({"id": [1]}))
    with pytest.raises(SchemaError, match=r"\['id', 'k2'\]"):
        table.lookup([1, 2])
    with pytest.raises(SchemaError, match="'k2'.*does not cast"):
        table.lookup(pa.table({"id": [1], "k2": pa.array([[1]])}))
    append = catalog.create_table("db.a", schema)
    with pytest.raises(SchemaError, match="primary-key table"):
        append.lookup([1])


def test_point_read_decodes_up_to_the_last_hit(tmp_path: Any) -> None:
    n = 100_000
    path = str(tmp_path / "sorted.parquet")
    pq.write_table(pa.table({"k": np.arange(n) * 2, "s": [f"v{i}" for i in range(n)]}), path, row_group_size=40_000)
    fragment = pads.ParquetFileFormat().make_fragment(path, filesystem=pafs.LocalFileSystem())
    meta = fragment.metadata
    wanted = np.array([2 * 41_000, 2 * 41_001, 2 * 99_999])

    def probe(rows: pa.Table) -> np.ndarray:
        return np.isin(rows.column("k").to_numpy(), wanted)

    with pafs.LocalFileSystem().open_input_file(path) as f:
        last, hits = probe_row_groups(f, fragment, meta, [0, 1, 2], ["k"], probe)
        assert last == {1: 1001, 2: 19_999} and hits.tolist() == [41_000, 41_001, 99_999]
        # sorted by k: a group's keys are decoded only while later rows may still match
        decoded = []

        def keep(lo: dict[str, int], hi: dict[str, int], nulls: Any, rows: int) -> bool:
            decoded.append(lo["k"])
            return bool(((wanted >= lo["k"]) & (wanted <= hi["k"])).any())

        last_sorted, hits_sorted = probe_row_groups(f, fragment, meta, [0, 1, 2], ["k"], probe, sorted_by="k",
                                                    keep=keep)
        assert last_sorted == last and hits_sorted.tolist() == hits.tolist()
        assert len(decoded) < 25  # 100,000 rows are 25 batches: groups 0 and 1 stop early
        rows, positions = read_probed(f, fragment, meta, last, None, verify_checksums=True)
        assert rows.num_rows == len(positions) < 40_000  # group 1 up to its hit, group 2 (hit at its end) whole
        assert rows.column("k").to_numpy().tolist() == (positions * 2).tolist()
        only, at = read_probed(f, fragment, meta, last, ["s"], verify_checksums=True, only=hits)
    assert only.column("s").to_pylist() == ["v41000", "v41001", "v99999"] and at.tolist() == hits.tolist()
