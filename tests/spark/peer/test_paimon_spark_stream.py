"""A primary-key table streamed without ``read.changelog``: our ``readStream.format("paimon")`` emits what Paimon's
own Spark connector emits (every change record as a row without its kind: -U and -D records too), measured side by
side on the same tables (upserts, deletes, a compaction; with and without a lookup changelog producer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, Table, write_table

pytestmark = [pytest.mark.spark, pytest.mark.interop, pytest.mark.slow]  # the connector's JVM: about a minute

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
FROM_FIRST = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
Batches = list[list[tuple[Any, ...]]]


def _history(catalog: FileSystemCatalog, name: str, options: dict[str, str], *, compact: bool) -> Table:
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options=options)
    write_table(table, pa.table({"id": list(range(1, 7)), "v": [f"v{i}" for i in range(1, 7)]}, schema=SCHEMA))
    write_table(table, pa.table({"id": [2, 4, 7], "v": ["v2'", "v4'", "v7"]}, schema=SCHEMA))
    deletes = pa.table({"id": [3, 5], "v": ["v3", "v5"]}, schema=SCHEMA)
    write_table(table, deletes.append_column("_row_kind", pa.array(["-D", "-D"])))
    if compact:  # not on the lookup table: the connector's availableNow stops at a compaction without changelog
        table.maintenance.compact(full=True)
    write_table(table, pa.table({"id": [1], "v": ["v1'"]}, schema=SCHEMA))
    return table


def _ours(spark: Any, path: str, options: dict[str, str], checkpoint: Path) -> Batches:
    batches: Batches = []
    reader = spark.readStream.format("paimon")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (reader.load(path).writeStream
             .foreachBatch(lambda df, _: batches.append([tuple(map(str, r)) for r in df.collect()]))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert query.exception() is None
    return [sorted(b) for b in batches if b]


def test_primary_key_stream_emits_what_paimon_spark_emits(spark: Any, paimon_spark: Any, warehouse: str,
                                                          tmp_path: Path) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    tables = [_history(catalog, "plain", {"bucket": "2"}, compact=True),
              _history(catalog, "lookup", {"bucket": "1", "changelog-producer": "lookup"},
                       compact=False)]
    modes = [{}, FROM_FIRST, {**FROM_FIRST, "read.changelog": "true"}]
    requests = [{"path": t.path, "options": m} for t in tables for m in modes]
    theirs = paimon_spark.streams(*requests)
    for n, (request, answer) in enumerate(zip(requests, theirs, strict=True)):
        changelog = "read.changelog" in request["options"]
        # the connector puts its `rowkind` column first, ours (`_row_kind`) last
        expected = [sorted((*r[1:], r[0]) if changelog else tuple(r) for r in b) for b in answer["batches"] if b]
        assert _ours(spark, request["path"], request["options"], tmp_path / f"c{n}") == expected, request
        if request["options"] == FROM_FIRST:  # the deletes come as plain rows: id 3 twice (+I, then its -D)
            assert sum(r[0] == "3" for b in expected for r in b) == 2
