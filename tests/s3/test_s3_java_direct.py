"""Java Paimon 0.9 reading and writing our s3:// tables directly, through its own S3 FileIO (paimon-s3 0.9.0, the
``oracle_s3`` fixture), on SeaweedFS: no download, no upload. Both ways, and a history mixing both writers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.append(str(Path(__file__).resolve().parent.parent / "interop"))  # the interop suite's cases and helpers
from interop_cases import (  # noqa: E402
    SCENARIO_COLUMNS,
    Layout,
    create_our_table,
    expected_after_each_step,
    history,
    java_lines,
    java_spec,
    load,
    our_lines,
    write_steps_ours,
)

from table_format.io.s3_file_io import S3FileIO  # noqa: E402

pytestmark = pytest.mark.s3

LAYOUTS = [Layout("pk", ("dt",), "parquet"), Layout("append-bucket", ("p",), "orc")]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_java_reads_our_s3_table_directly(oracle_s3: Any, s3_warehouse: str, layout: Layout) -> None:
    steps = history(layout)
    table = create_our_table(s3_warehouse, "t", layout)
    assert isinstance(table.store.file_io, S3FileIO)
    snapshots = write_steps_ours(table, SCENARIO_COLUMNS, steps)
    for sid, lines in zip(snapshots, expected_after_each_step(layout, steps), strict=True):
        assert java_lines(oracle_s3, s3_warehouse, "t", sid) == lines == our_lines(table, sid), f"snapshot {sid}"


def test_we_read_a_table_java_wrote_to_s3_and_both_keep_writing(oracle_s3: Any, s3_warehouse: str) -> None:
    layout = Layout("pk", ("dt",), "orc")
    steps = history(layout)
    written = oracle_s3.write_spec(java_spec(
        s3_warehouse, "java", SCENARIO_COLUMNS, steps[:3], primary_keys=list(layout.primary_keys),
        partition_keys=list(layout.partition_keys), options=layout.options))
    assert written["table_path"].startswith(s3_warehouse)
    ours = load(s3_warehouse, "java")
    assert [s.id for s in ours.snapshots()] == [1, 2, 3]
    expected = expected_after_each_step(layout, steps)
    for sid in (1, 2, 3):
        assert our_lines(ours, sid) == java_lines(oracle_s3, s3_warehouse, "java", sid) == expected[sid - 1]

    write_steps_ours(ours, SCENARIO_COLUMNS, steps[3:4])  # we commit snapshot 4 on Java's table
    oracle_s3.write_spec(java_spec(  # Java appends snapshot 5 (and compacts) on top of ours
        s3_warehouse, "java", SCENARIO_COLUMNS, steps[4:5], primary_keys=list(layout.primary_keys),
        partition_keys=list(layout.partition_keys), options=layout.options, if_exists="append", compact=True))
    ours = ours.refresh()
    assert [s.id for s in ours.snapshots()][:5] == [1, 2, 3, 4, 5]
    assert ours.latest_snapshot().commit_kind.value == "COMPACT"
    assert our_lines(ours) == java_lines(oracle_s3, s3_warehouse, "java") == expected[4]
