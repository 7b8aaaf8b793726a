"""Representative subsets of the interop, merge-engine and maintenance suites on an s3:// warehouse.

Java Paimon 0.9 reads what we wrote to S3 (every snapshot), after the table is downloaded to a local directory
(the oracle has no S3 client); a table Java wrote is uploaded and read by us from S3; every documented merge-engine
example gives the documented table on S3, also after a full compaction.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.append(str(Path(__file__).resolve().parent.parent / "interop"))  # the interop suite's cases and helpers
from interop_cases import (  # noqa: E402
    DB,
    SCENARIO_COLUMNS,
    Layout,
    arrow_table,
    create_our_table,
    expected_after_each_step,
    history,
    java_lines,
    java_spec,
    load,
    our_lines,
    write_steps_ours,
)
from s3_helpers import download, upload  # noqa: E402
from test_merge_engines import DOC_CASES, IDS, _create, _ours  # noqa: E402

from table_format import FileSystemCatalog, write_table  # noqa: E402
from table_format.io.factory import file_io_for_uri, path_of  # noqa: E402

pytestmark = pytest.mark.s3

LAYOUTS = [Layout("pk", ("dt",), "parquet"), Layout("pk-rowkind", (), "orc"), Layout("append-bucket", ("p",), "avro")]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_our_s3_table_read_by_java(oracle: Any, s3_warehouse: str, tmp_path: Any, layout: Layout) -> None:
    steps = history(layout)
    table = create_our_table(s3_warehouse, "t", layout)
    snapshots = write_steps_ours(table, SCENARIO_COLUMNS, steps)
    local = str(tmp_path / "downloaded")
    download(table, local)
    for sid, lines in zip(snapshots, expected_after_each_step(layout, steps), strict=True):
        assert our_lines(table, sid) == lines, f"snapshot {sid}"
        assert java_lines(oracle, local, "t", sid) == lines, f"snapshot {sid}"


def test_java_table_uploaded_to_s3_read_here(oracle: Any, s3_warehouse: str, warehouse: str) -> None:
    layout = Layout("pk", ("dt",), "orc")
    steps = history(layout)
    oracle.write_spec(java_spec(warehouse, "java", SCENARIO_COLUMNS, steps, primary_keys=list(layout.primary_keys),
                                partition_keys=list(layout.partition_keys), options=layout.options))
    file_io, root = file_io_for_uri(s3_warehouse)
    upload(os.path.join(warehouse, f"{DB}.db", "java"), file_io, f"{root}/{DB}.db/java")
    ours = load(s3_warehouse, "java")
    local = load(warehouse, "java")
    assert [s.id for s in ours.snapshots()] == [s.id for s in local.snapshots()]
    for sid in (1, local.latest_snapshot().id):
        assert our_lines(ours, sid) == java_lines(oracle, warehouse, "java", sid)
    # and we keep writing it on S3, then Java reads the result
    write_steps_ours(ours, SCENARIO_COLUMNS, steps[:1])
    again = str(os.path.join(warehouse, "again"))
    download(ours, again)
    assert java_lines(oracle, again, "java") == our_lines(ours)


@pytest.mark.parametrize("case", DOC_CASES, ids=IDS)
def test_merge_engine_examples_on_s3(s3_warehouse: str, case: Any) -> None:
    table = _create(s3_warehouse, case.name, case)
    for step, expected in zip(case.step_objects(), case.expected, strict=True):
        write_table(table, arrow_table(case.fields, step.rows))
        if expected is not None:
            assert _ours(table, case) == case.lines(expected)
    table.refresh().maintenance.compact(full=True)
    assert _ours(table, case) == case.lines(case.expected[-1])


def test_tags_rollback_expire_and_orphans_on_s3(s3_warehouse: str) -> None:
    layout = Layout("pk", ("dt",), "parquet")
    steps = history(layout)
    table = create_our_table(s3_warehouse, "t", layout)
    snapshots = write_steps_ours(table, SCENARIO_COLUMNS, steps)
    expected = expected_after_each_step(layout, steps)
    table.create_tag("first", snapshot_id=snapshots[0])
    table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    assert [s.id for s in table.snapshots()] == [snapshots[-1]]
    assert our_lines(table) == expected[-1]
    assert our_lines(FileSystemCatalog(s3_warehouse).load_table(f"{DB}.t").refresh()) == expected[-1]
    assert table.scan(tag="first").to_arrow().num_rows == len(expected[0])
    result = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert result.deleted_files == ()  # expiration left nothing behind
    table.rollback_to(tag="first")
    assert our_lines(table) == expected[0]
    assert path_of(s3_warehouse) in table.path
