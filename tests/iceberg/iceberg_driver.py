"""Reads Iceberg tables with PyIceberg 0.12 and DuckDB 1.5.5 (+ its iceberg/avro extensions, loaded by path,
offline) in their own venv. One JSON request per stdin line, one JSON answer per stdout line.

request: {"reader": "pyiceberg" | "duckdb", "metadata": "<path of vN.metadata.json or the table location>",
          "snapshot_id": N | null, "filter": "<PyIceberg row filter>" | null}
answer:  {"rows": [...sorted...], "files": <data files planned, PyIceberg only>} or {"error": "..."}
"""

import glob
import json
import os
import sys


def _duckdb():
    import duckdb

    con = duckdb.connect()
    site = os.path.dirname(os.path.dirname(duckdb.__file__))
    for name in ("avro", "iceberg"):
        path = glob.glob(f"{site}/duckdb_extension_{name}/extensions/**/*.duckdb_extension", recursive=True)[0]
        con.execute(f"LOAD '{path}'")
    return con


def _rows(table) -> list:
    rows = table.to_pylist()
    return sorted((json.loads(json.dumps(r, default=str)) for r in rows), key=lambda r: json.dumps(r, sort_keys=True))


def answer(request: dict, con) -> dict:
    if request["reader"] == "pyiceberg":
        from pyiceberg.table import StaticTable

        table = StaticTable.from_metadata(request["metadata"], properties=request.get("properties") or {})
        kwargs = {}
        if request.get("snapshot_id") is not None:
            kwargs["snapshot_id"] = request["snapshot_id"]
        if request.get("filter"):
            kwargs["row_filter"] = request["filter"]
        scan = table.scan(**kwargs)
        return {"rows": _rows(scan.to_arrow()), "files": len(list(scan.plan_files())),
                "snapshots": [s.snapshot_id for s in table.snapshots()],
                "refs": {name: ref.snapshot_id for name, ref in table.metadata.refs.items()}}
    sql = f"SELECT * FROM iceberg_scan('{request['metadata']}'"
    if request.get("snapshot_id") is not None:
        sql += f", snapshot_from_id={int(request['snapshot_id'])}"
    sql += ")"
    return {"rows": _rows(con.execute(sql).fetch_arrow_table())}


def main() -> None:
    con = _duckdb()
    for line in sys.stdin:
        try:
            out = answer(json.loads(line), con)
        except Exception as e:  # reported to the test, which fails with it
            out = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
