"""Interop with pypaimon 2.1.0, both directions, every table kind of ``interop_cases``.

* us -> pypaimon: every layout's history written by us reads the same in pypaimon at every snapshot; so do the
  all-types tables (pypaimon's merge-on-read keeps TIMESTAMP(9) to microseconds only) and a 50k-row PK table.
* pypaimon -> us: every layout's history written by pypaimon (PK tables with row kinds through its
  ``rowkind.field``, append tables, partitioned, whole and partition overwrites) reads the same here, at every
  snapshot, as in pypaimon itself and as the model says (minus deletes of absent keys, which pypaimon 2.1
  mis-records, see ``without_deletes_of_absent_keys``).
* Mixed: pypaimon and we write the same PK table in turns; our writes honour pypaimon's ``rowkind.field``.

pypaimon starts in about 2 s, so each direction runs its writes and reads in one pypaimon process (module-scoped
fixtures) and the tests compare the collected results.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest
from interop_cases import (
    DB,
    SCENARIO_COLUMNS,
    Layout,
    Model,
    Step,
    all_layouts,
    all_types_fields,
    all_types_history,
    arrow_table,
    create_our_table,
    data_fields,
    expected_after_each_step,
    history,
    load,
    our_lines,
    scenario_row,
    without_deletes_of_absent_keys,
    write_steps_ours,
)
from oracle_values import canonical_lines, ours_as_oracle

from table_format import FileSystemCatalog, UnsupportedFeatureError, write_table

pytestmark = pytest.mark.interop

LAYOUTS = all_layouts()


def pypaimon_batch_result(result: Any, what: str) -> Any:
    """A pypaimon driver ``batch`` result, or an AssertionError with the driver's error."""
    assert not (isinstance(result, dict) and "error" in result), f"pypaimon {what} failed:\n{result['error'][-8000:]}"
    return result

KIND_COLUMN = "op"  # pypaimon's rowkind.field for the layouts with row kinds


def _name(layout: Layout) -> str:
    return layout.id.replace("-", "_").replace("+", "_")


def _all_types_name(file_format: str, pk: bool) -> str:
    return f"all_types_{file_format}_{'pk' if pk else 'append'}"


def pypaimon_lines(result: pa.Table, table_fields: list[Any]) -> list[str]:
    return ours_as_oracle(result, table_fields)


# ================================================================================================ us -> pypaimon


@pytest.fixture(scope="module")
def ours_read_by_pypaimon(pypaimon, tmp_path_factory) -> dict[str, Any]:
    """Every layout and the all-types tables written by us; pypaimon reads every snapshot in one process.

    A table whose writing fails keeps its exception (its test re-raises it), the others go on.
    """
    warehouse = str(tmp_path_factory.mktemp("ours-for-pypaimon") / "warehouse")
    catalog = FileSystemCatalog(warehouse)
    written: dict[str, Any] = {}
    for layout in LAYOUTS:
        steps = history(layout)
        try:
            table = create_our_table(warehouse, _name(layout), layout)
            written[_name(layout)] = (write_steps_ours(table, SCENARIO_COLUMNS, steps),
                                      expected_after_each_step(layout, steps))
        except Exception as e:  # noqa: BLE001 - re-raised by the test of this layout
            written[_name(layout)] = e
    for file_format in ("parquet", "orc", "avro"):
        for pk in (False, True):
            fields = all_types_fields(file_format)
            steps = all_types_history(file_format, pk=pk)
            layout = Layout("pk" if pk else "append-unaware", (), file_format)
            try:
                table = catalog.create_table(
                    f"{DB}.{_all_types_name(file_format, pk)}", data_fields(fields),
                    primary_keys=["id"] if pk else [], options={"bucket": "2" if pk else "-1", "file.format": file_format},
                )
                written[_all_types_name(file_format, pk)] = (write_steps_ours(table, fields, steps),
                                                             expected_after_each_step(layout, steps))
            except Exception as e:  # noqa: BLE001 - re-raised by the test of this table
                written[_all_types_name(file_format, pk)] = e
    reads = [(f"{DB}.{name}", sid) for name, w in written.items() if not isinstance(w, Exception) for sid in w[0]]
    results = dict(zip(reads, pypaimon.batch(warehouse, [{"op": "read", "identifier": i, "snapshot_id": s}
                                                         for i, s in reads]), strict=True))
    return {"warehouse": warehouse, "written": written, "results": results}


def micros_only(lines: list[str], column: str) -> list[str]:
    """The lines with TIMESTAMP(9) ``column`` cut to microseconds (the last three digits zero)."""
    rows = [json.loads(line) for line in lines]
    for row in rows:
        if row.get(column) is not None:
            row[column] = row[column][:-3] + "000"
    return canonical_lines(rows)


def _assert_pypaimon_reads_ours(state: dict[str, Any], name: str, *, merged_ts9: str | None = None) -> None:
    """``merged_ts9``: a TIMESTAMP(9) column; pypaimon 2.1's merge-on-read (a snapshot after the first of a
    PK table) keeps only its microseconds, so there it is compared at that precision."""
    warehouse = state["warehouse"]
    if isinstance(state["written"][name], Exception):
        raise state["written"][name]
    table = load(warehouse, name)
    fields = list(table.schema.fields)
    sids, expected = state["written"][name]
    for sid, lines in zip(sids, expected, strict=True):
        assert our_lines(table, sid) == lines, f"snapshot {sid}"
        result = pypaimon_batch_result(state["results"][(f"{DB}.{name}", sid)], f"read {name} snapshot {sid}")
        assert result.column_names == table.arrow_schema.names
        theirs = pypaimon_lines(result, fields)
        if merged_ts9 and sid > 1:
            assert theirs == micros_only(lines, merged_ts9), f"snapshot {sid}"
            assert theirs != lines  # the limitation is still there: drop this branch when pypaimon fixes it
        else:
            assert theirs == lines, f"snapshot {sid}"


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_pypaimon_reads_our_table(ours_read_by_pypaimon, layout):
    _assert_pypaimon_reads_ours(ours_read_by_pypaimon, _name(layout))


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
@pytest.mark.parametrize("file_format", ["parquet", "orc", "avro"])
def test_pypaimon_reads_our_all_types(ours_read_by_pypaimon, file_format, pk):
    merged_ts9 = "ts9" if pk and file_format != "avro" else None
    _assert_pypaimon_reads_ours(ours_read_by_pypaimon, _all_types_name(file_format, pk), merged_ts9=merged_ts9)


def test_pypaimon_reads_our_50k_row_pk_table(pypaimon, warehouse):
    layout = Layout("pk-rowkind", ("dt",), "parquet")
    table = create_our_table(warehouse, "big", layout)
    model = Model(layout.primary_keys, layout.partition_keys)
    steps = [
        Step([("+I", scenario_row(i, 1)) for i in range(50_000)]),
        Step([("+U", scenario_row(i, 2)) for i in range(0, 50_000, 5)]
             + [("-D", scenario_row(i, 1)) for i in range(1, 50_000, 25)]),
    ]
    for step in steps:
        model.apply(step)
        write_table(table, arrow_table(SCENARIO_COLUMNS, step.rows))
    expected = model.lines()
    assert len(expected) == 50_000 - 2_000
    assert our_lines(table) == expected
    result = pypaimon.read(warehouse, f"{DB}.big")
    assert result.num_rows == len(expected)
    assert pypaimon_lines(result, list(table.schema.fields)) == expected


# ================================================================================================ pypaimon -> us


def _pypaimon_step(layout: Layout, step: Step) -> dict[str, Any]:
    kind_column = KIND_COLUMN if layout.row_kinds else None
    out: dict[str, Any] = {"data": arrow_table(SCENARIO_COLUMNS, step.rows, kind_column=kind_column)}
    if step.overwrite is True:
        out["mode"] = "overwrite"
    elif step.overwrite:
        out["mode"] = "overwrite"
        out["overwrite_partition"] = dict(step.overwrite)
    return out


@pytest.fixture(scope="module")
def pypaimon_tables(pypaimon, tmp_path_factory) -> dict[str, Any]:
    """Every layout's history written by pypaimon (and read back by it, every snapshot), in one process."""
    warehouse = str(tmp_path_factory.mktemp("pypaimon-tables") / "warehouse")
    requests = []
    for layout in LAYOUTS:
        identifier = f"{DB}.{_name(layout)}"
        for n, step in enumerate(without_deletes_of_absent_keys(layout, history(layout)), start=1):
            requests.append({
                "op": "write", "identifier": identifier, **_pypaimon_step(layout, step),
                "primary_keys": layout.primary_keys, "partition_keys": layout.partition_keys,
                "options": layout.options, "row_kind_column": KIND_COLUMN if layout.row_kinds else None,
            })
            requests.append({"op": "read", "identifier": identifier, "snapshot_id": n})
    results = pypaimon.batch(warehouse, requests)
    return {"warehouse": warehouse, "requests": requests, "results": results}


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_we_read_pypaimon_table(pypaimon_tables, layout):
    warehouse = pypaimon_tables["warehouse"]
    identifier = f"{DB}.{_name(layout)}"
    mine = [(req, res) for req, res in zip(pypaimon_tables["requests"], pypaimon_tables["results"], strict=True)
            if req["identifier"] == identifier]
    writes = [pypaimon_batch_result(res, f"write {identifier}") for req, res in mine if req["op"] == "write"]
    reads = [pypaimon_batch_result(res, f"read {identifier}") for req, res in mine if req["op"] == "read"]
    steps = without_deletes_of_absent_keys(layout, history(layout))
    assert [w["snapshot_id"] for w in writes] == list(range(1, len(steps) + 1))

    table = load(warehouse, _name(layout))
    assert table.primary_keys == list(layout.primary_keys)
    assert table.partition_keys == list(layout.partition_keys)
    fields = list(table.schema.fields)
    expected = expected_after_each_step(layout, steps, KIND_COLUMN if layout.row_kinds else None)
    for sid, (lines, theirs) in enumerate(zip(expected, reads, strict=True), start=1):
        assert pypaimon_lines(theirs, fields) == lines, f"pypaimon itself, snapshot {sid}"
        assert our_lines(table, sid) == lines, f"snapshot {sid}"
    assert [s.id for s in table.snapshots()] == list(range(1, len(steps) + 1))
    assert table.system_table("snapshots").num_rows == len(steps)


def test_mixed_history_with_pypaimon(pypaimon, warehouse):
    """pypaimon creates and fills a PK table, we upsert and delete on top, pypaimon writes again; every snapshot
    reads the same on both sides (bucket hashing and sequence numbers agree)."""
    layout = Layout("pk", ("day", "p"), "orc")
    model = Model(layout.primary_keys, layout.partition_keys)
    r = scenario_row
    first = Step([("+I", r(i, 1)) for i in range(120)])
    model.apply(first)
    pypaimon.write(warehouse, f"{DB}.t", arrow_table(SCENARIO_COLUMNS, first.rows, kind_column=None),
                   primary_keys=layout.primary_keys, partition_keys=layout.partition_keys, options=layout.options)
    table = load(warehouse, "t")
    assert our_lines(table) == model.lines()

    ours = Step([("+U", r(i, 2)) for i in range(0, 120, 3)] + [("-D", r(i, 1)) for i in range(1, 120, 7)])
    model.apply(ours)
    assert write_table(table, arrow_table(SCENARIO_COLUMNS, ours.rows)) == 2
    expected = [None, model.lines()]
    theirs = Step([("+I", r(i, 3)) for i in range(0, 150, 5)])
    model.apply(theirs)
    pypaimon.write(warehouse, f"{DB}.t", arrow_table(SCENARIO_COLUMNS, theirs.rows, kind_column=None))
    expected.append(model.lines())
    again = Step([("+U", r(i, 4)) for i in range(0, 150, 10)] + [("-D", r(i, 3)) for i in range(5, 150, 15)])
    model.apply(again)
    assert write_table(table, arrow_table(SCENARIO_COLUMNS, again.rows)) == 4
    expected.append(model.lines())

    fields = list(table.schema.fields)
    results = pypaimon.read_many(warehouse, [(f"{DB}.t", sid) for sid in (2, 3, 4)])
    for sid, result in zip((2, 3, 4), results, strict=True):
        assert our_lines(table, sid) == expected[sid - 1], f"snapshot {sid}"
        assert pypaimon_lines(result, fields) == expected[sid - 1], f"snapshot {sid}"


def test_our_write_honours_or_refuses_pypaimon_rowkind_field(pypaimon, warehouse):
    """A table with pypaimon's ``rowkind.field``: our write must apply the row kinds of that column (as Java
    does) or refuse loudly; it must never store a ``-D`` row as an insert."""
    layout = Layout("pk-rowkind", ("dt",), "parquet")
    model = Model(layout.primary_keys, layout.partition_keys, KIND_COLUMN)
    first = Step([("+I", scenario_row(i, 1)) for i in range(10)])
    model.apply(first)
    pypaimon.write(warehouse, f"{DB}.t", arrow_table(SCENARIO_COLUMNS, first.rows, kind_column=KIND_COLUMN),
                   primary_keys=layout.primary_keys, partition_keys=layout.partition_keys, options=layout.options,
                   row_kind_column=KIND_COLUMN)
    table = load(warehouse, "t")
    assert table.options["rowkind.field"] == KIND_COLUMN
    assert our_lines(table) == model.lines()
    step = Step([("+U", scenario_row(1, 2)), ("-D", scenario_row(2, 1))])
    try:
        write_table(table, arrow_table(SCENARIO_COLUMNS, step.rows, kind_column=KIND_COLUMN))
    except UnsupportedFeatureError as e:
        assert "rowkind.field" in str(e)
        assert our_lines(table) == model.lines()
    else:
        model.apply(step)
        assert our_lines(table) == model.lines()
        assert pypaimon_lines(pypaimon.read(warehouse, f"{DB}.t"), list(table.schema.fields)) == model.lines()
