"""Run pypaimon 2.1.0 (the peer implementation) for interop tests. TEST-ONLY.

This script runs inside the pypaimon venv (.cache/venv-pypaimon, pyarrow < 20), never in the project's
.venv: product code must never import pypaimon. tests/conftest.py (fixture ``pypaimon``) calls it as

    PYPAIMON_PYTHON pypaimon_driver.py REQUEST.json

REQUEST.json (one of):

    {"op": "write", "warehouse": W, "identifier": "db.t", "input": "in.arrow",
     "primary_keys": [...], "partition_keys": [...], "options": {...},
     "mode": "append" | "overwrite", "overwrite_partition": {"dt": "x"} | null,
     "row_kind_column": "op" | null}
    {"op": "read", "warehouse": W, "identifier": "db.t", "output": "out.arrow", "snapshot_id": N | null}
    {"op": "batch", "requests": [REQUEST, ...]}   # several writes/reads in one process (pypaimon's import
                                                  # alone takes ~2 s); prints {"results": [RESULT, ...]},
                                                  # {"error": traceback} for a request that failed

Data travels as Arrow IPC files (the two venvs have different pyarrow versions; IPC is stable).
``write`` creates the database and table when absent (schema from the input's Arrow schema, then
primary/partition keys and options), writes the input in one batch commit and prints
``{"snapshot_id": N}``. With ``row_kind_column`` the table gets ``rowkind.field`` = that column: a string
column of "+I"/"-U"/"+U"/"-D" that stays a real column of the table, as in Paimon.
``read`` does a batch scan (latest snapshot, or ``scan.snapshot-id``) and writes the rows to ``output``;
it prints ``{"snapshot_id": N, "num_rows": R}``.
Errors: a traceback on stderr and exit status 1.
"""

import json
import sys
import traceback

import pyarrow as pa
import pyarrow.ipc as ipc
from pypaimon import CatalogFactory, Schema
from pypaimon.catalog.catalog_exception import TableNotExistException
from pypaimon.schema.data_types import PyarrowFieldParser


def _catalog(warehouse):
    return CatalogFactory.create({"warehouse": warehouse})


def _latest_snapshot_id(table):
    snapshot = table.snapshot_manager().get_latest_snapshot()
    return None if snapshot is None else snapshot.id


def _conform(data, table):
    """Reorder/cast the input to the table's Arrow schema (e.g. PK columns are NOT NULL there)."""
    target = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)
    data = data.select(target.names)
    if data.schema.equals(target, check_metadata=False):
        return data
    return data.cast(target)


def _typed_partition(spec, table):
    """JSON partition values (e.g. DATE as "2024-01-01") as the Python values pypaimon compares with."""
    if not spec:
        return spec
    schema = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)
    return {
        k: None if v is None else pa.array([v]).cast(schema.field(k).type).to_pylist()[0] for k, v in spec.items()
    }


def write(req):
    catalog = _catalog(req["warehouse"])
    identifier = req["identifier"]
    data = ipc.open_file(req["input"]).read_all()
    row_kind_column = req.get("row_kind_column")
    database = identifier.split(".", 1)[0]
    catalog.create_database(database, True)
    try:
        table = catalog.get_table(identifier)
    except TableNotExistException:
        options = dict(req.get("options") or {})
        if row_kind_column:
            options["rowkind.field"] = row_kind_column
        schema = Schema.from_pyarrow_schema(
            data.schema,
            partition_keys=list(req.get("partition_keys") or []),
            primary_keys=list(req.get("primary_keys") or []),
            options=options,
        )
        catalog.create_table(identifier, schema, False)
        table = catalog.get_table(identifier)
    if row_kind_column and table.options.options.to_map().get("rowkind.field") != row_kind_column:
        table = table.copy({"rowkind.field": row_kind_column})

    builder = table.new_batch_write_builder()
    mode = req.get("mode", "append")
    if mode == "overwrite":
        builder = builder.overwrite(_typed_partition(req.get("overwrite_partition"), table))
    elif mode != "append":
        raise ValueError(f"mode must be 'append' or 'overwrite', got {mode!r}")
    table_write = builder.new_write()
    table_commit = builder.new_commit()
    try:
        table_write.write_arrow(_conform(data, table))
        table_commit.commit(table_write.prepare_commit())
    finally:
        table_write.close()
        table_commit.close()
    return {"snapshot_id": _latest_snapshot_id(table)}


def read(req):
    table = _catalog(req["warehouse"]).get_table(req["identifier"])
    snapshot_id = req.get("snapshot_id")
    if snapshot_id is not None:
        table = table.copy({"scan.snapshot-id": str(snapshot_id)})
    read_builder = table.new_read_builder()
    splits = read_builder.new_scan().plan().splits()
    result = read_builder.new_read().to_arrow(splits)
    if result is None:  # no splits: an empty table with the table's schema
        result = PyarrowFieldParser.from_paimon_schema(table.table_schema.fields).empty_table()
    with pa.OSFile(req["output"], "wb") as sink, ipc.new_file(sink, result.schema) as writer:
        writer.write_table(result)
    return {
        "snapshot_id": snapshot_id if snapshot_id is not None else _latest_snapshot_id(table),
        "num_rows": result.num_rows,
    }


def batch(req):
    """Each request in turn; a failing one gives {"error": traceback} and the others still run."""
    ops = {"write": write, "read": read}
    results = []
    for sub in req["requests"]:
        if sub.get("op") not in ops:
            raise ValueError(f"unknown op {sub.get('op')!r} in batch")
        try:
            results.append(ops[sub["op"]](sub))
        except Exception:  # noqa: BLE001 - reported to the caller per request
            results.append({"error": traceback.format_exc()})
    return {"results": results}


def main(argv):
    if len(argv) != 2:
        print("usage: pypaimon_driver.py REQUEST.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        req = json.load(f)
    ops = {"write": write, "read": read, "batch": batch}
    if req.get("op") not in ops:
        print(f"unknown op {req.get('op')!r}", file=sys.stderr)
        return 2
    print(json.dumps(ops[req["op"]](req)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
