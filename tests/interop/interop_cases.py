"""Shared scenarios of the interop suites (Java Paimon 0.9 and pypaimon 2.1.0).

Every value here is written in the form the paimon-oracle prints (DATE ``"2024-01-01"``, DECIMAL ``"1.50"``,
TIMESTAMP(p) with exactly p fraction digits, BYTES base64, MAP as sorted ``[k, v]`` pairs), because the oracle
also accepts that form as input. So one row list is at once: the oracle spec's rows (Java writes), the source of
the Arrow tables we and pypaimon write (``arrow_table``), and, through ``Model``, the expected read result as
sorted canonical JSON lines (``oracle_values.canonical_lines``).

* ``Layout``: a table kind (append bucket -1 / append with ``bucket-key`` / primary key deduplicate, with or
  without row kinds), its partition columns (STRING ``dt``, INT ``p``, DATE ``day``) and file format.
* ``history(layout)``: several commits: inserts, updates (``-U``/``+U`` or plain upserts), deletes, an
  overwrite of one partition (of the whole table when unpartitioned), a whole-table overwrite and more writes.
* ``Model``: the table contents after each step, by Paimon's semantics (deduplicate keeps the last record of a
  key, ``-U``/``-D`` remove it; overwrite drops the matching partitions first).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pyarrow as pa
from oracle_values import canonical_lines, oracle_lines, ours_as_oracle

from table_format import FileSystemCatalog, Table, write_table
from table_format.arrow_types import to_arrow_type
from table_format.types import (
    ArrayType,
    BinaryType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    TimestampType,
    TimeType,
    VarBinaryType,
    parse_type,
)

DB = "db"
ROW_KIND = "_row_kind"  # our write API's row-kind column

# ----------------------------------------------------------------------------------------------- layouts

SCENARIO_COLUMNS: list[tuple[str, str]] = [
    ("id", "INT"),
    ("dt", "STRING"),
    ("p", "INT"),
    ("day", "DATE"),
    ("name", "STRING"),
    ("amount", "DECIMAL(10, 2)"),
    ("score", "DOUBLE"),
    ("ts", "TIMESTAMP(6)"),
]

KINDS = ("append-unaware", "append-bucket", "pk", "pk-rowkind")
PARTITIONINGS: tuple[tuple[str, ...], ...] = ((), ("dt",), ("p",), ("day",), ("dt", "p"), ("day", "p"))
FORMATS = ("parquet", "orc", "avro")


@dataclass(frozen=True)
class Layout:
    kind: str
    partition_keys: tuple[str, ...]
    file_format: str

    @property
    def has_pk(self) -> bool:
        return self.kind.startswith("pk")

    @property
    def row_kinds(self) -> bool:
        return self.kind == "pk-rowkind"

    @property
    def primary_keys(self) -> tuple[str, ...]:
        return (*self.partition_keys, "id") if self.has_pk else ()

    @property
    def bucket(self) -> int:
        return {"append-unaware": -1, "append-bucket": 3, "pk": 2, "pk-rowkind": 4}[self.kind]

    @property
    def options(self) -> dict[str, str]:
        opts = {"bucket": str(self.bucket), "file.format": self.file_format}
        if self.kind == "append-bucket":
            opts["bucket-key"] = "id"
        if self.kind == "append-unaware":  # lets Java's final compaction really pack files
            opts.update({"compaction.min.file-num": "2", "compaction.max.file-num": "2"})
        if self.partition_keys:
            # Java and pypaimon default to dynamic partition overwrite (INSERT OVERWRITE without a partition
            # replaces only the partitions it writes); our mode="overwrite" replaces the whole table
            opts["dynamic-partition-overwrite"] = "false"
        return opts

    @property
    def id(self) -> str:
        return f"{self.kind}-{'+'.join(self.partition_keys) or 'unpartitioned'}-{self.file_format}"


def all_layouts() -> list[Layout]:
    """Every kind x every partitioning; formats rotate so that each kind meets each format twice."""
    return [
        Layout(kind, parts, FORMATS[(k + i) % len(FORMATS)])
        for k, kind in enumerate(KINDS)
        for i, parts in enumerate(PARTITIONINGS)
    ]


# ----------------------------------------------------------------------------------------------- history


@dataclass
class Step:
    rows: list[tuple[str, dict[str, Any]]]  # (row kind, values in oracle form)
    overwrite: bool | dict[str, Any] = False  # True = whole table, dict = one partition (values in oracle form)


_DTS = ("2024-01-01", "2024-01-02")
_DAYS = ("2024-02-29", "1969-12-31")


def scenario_row(i: int, version: int, *, null_partition: bool = False) -> dict[str, Any]:
    """Values of key ``i`` at ``version``; partition columns depend on the key only."""
    amount = Decimal(i * 100 + version * 7) / 100 * (-1 if i % 4 == 3 else 1)
    return {
        "id": i,
        "dt": None if null_partition else _DTS[i % 2],
        "p": None if null_partition else i % 3 - 1,
        "day": None if null_partition else _DAYS[(i // 2) % 2],
        "name": None if (i + version) % 5 == 0 else f"name-{i}-v{version}" + ("-long" * (i % 3)),
        "amount": f"{amount:.2f}",
        "score": None if (i * version) % 7 == 3 else i * 1.5 + version,
        "ts": (dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i * 3600 + version, microseconds=i * 7))
        .isoformat(timespec="microseconds"),
    }


def _partition_of(layout: Layout, row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in layout.partition_keys}


def history(layout: Layout) -> list[Step]:
    """Six commits covering inserts, updates, deletes, duplicate keys in one commit and both overwrites."""
    pk, rk = layout.has_pk, layout.row_kinds
    r = scenario_row
    steps = [Step([("+I", r(i, 1)) for i in range(1, 13)])]
    if not pk and layout.partition_keys:
        steps[0].rows.append(("+I", r(11, 1, null_partition=True)))  # __DEFAULT_PARTITION__
    if rk:
        rows = [("-U", r(i, 1)) for i in (1, 2, 3)] + [("+U", r(i, 2)) for i in (1, 2, 3)]
        rows += [("-D", r(4, 1)), ("-D", r(5, 1))]
        rows += [("+U", r(6, 2)), ("+U", r(6, 3))]  # the same key twice in one commit: the last wins
    else:
        rows = [("+I", r(i, 2)) for i in (1, 2, 3)] + [("+I", r(6, 2)), ("+I", r(6, 3))]
    rows += [("+I", r(i, 2)) for i in (13, 14, 15)]
    steps.append(Step(rows))
    if layout.partition_keys:
        target = _partition_of(layout, r(1, 1))
        ids = [i for i in range(1, 16) if _partition_of(layout, r(i, 1)) == target]
        steps.append(Step([("+I", r(i, 3)) for i in ids[::2]], overwrite=target))
    else:
        steps.append(Step([("+I", r(i, 3)) for i in range(1, 7)], overwrite=True))
    if rk:
        steps.append(Step([("+U", r(2, 4)), ("-D", r(3, 3)), ("-D", r(99, 1)), ("+I", r(16, 4))]))
    else:
        steps.append(Step([("+I", r(2, 4)), ("+I", r(16, 4))]))
    steps.append(Step([("+I", r(i, 5)) for i in range(20, 25)], overwrite=True))
    if rk:
        steps.append(Step([("+U", r(20, 6)), ("-D", r(21, 5)), ("+I", r(25, 6))]))
    else:
        steps.append(Step([("+I", r(20, 6)), ("+I", r(25, 6))]))
    return steps


def without_deletes_of_absent_keys(layout: Layout, steps: Sequence[Step]) -> list[Step]:
    """The history minus ``-D``/``-U`` records of keys the table does not hold at that point.

    pypaimon 2.1 writes ``_DELETE_ROW_COUNT`` = 0 for files that hold ``-D`` records, so a file of only such
    records is "raw convertible" and its deletes show up as rows (in pypaimon's reads, ours and Java's alike).
    """
    model = Model(layout.primary_keys, layout.partition_keys)
    out = []
    for step in steps:
        if step.overwrite is True:
            present: set[tuple[Any, ...]] = set()
        else:
            present = {tuple(r[k] for k in layout.primary_keys) for r in model.rows
                       if not step.overwrite or any(r[c] != v for c, v in step.overwrite.items())}
        rows = []
        for kind, values in step.rows:
            key = tuple(values[k] for k in layout.primary_keys)
            if kind in ("-D", "-U") and key not in present:
                continue
            rows.append((kind, values))
            if kind in ("+I", "+U"):
                present.add(key)
            else:
                present.discard(key)
        kept = Step(rows, step.overwrite)
        model.apply(kept)
        out.append(kept)
    return out


# ----------------------------------------------------------------------------------------------- model


@dataclass
class Model:
    """Expected contents: a list of rows (append tables) or the last record per key (deduplicate)."""

    primary_keys: Sequence[str] = ()
    partition_keys: Sequence[str] = ()
    kind_column: str | None = None  # pypaimon's rowkind.field: the winning record's kind is a real column
    _rows: dict[Any, dict[str, Any]] = field(default_factory=dict)  # by key (append tables: arrival number)
    _arrivals: int = 0

    @property
    def rows(self) -> list[dict[str, Any]]:
        return list(self._rows.values())

    def apply(self, step: Step) -> None:
        if step.overwrite is True:
            self._rows = {}
        elif step.overwrite:
            spec = step.overwrite
            self._rows = {k: row for k, row in self._rows.items() if any(row[c] != v for c, v in spec.items())}
        for kind, values in step.rows:
            row = dict(values)
            if self.kind_column:
                row[self.kind_column] = kind
            if not self.primary_keys:
                assert kind == "+I", kind
                self._arrivals += 1
                self._rows[self._arrivals] = row
                continue
            key = tuple(row[k] for k in self.primary_keys)
            self._rows.pop(key, None)
            if kind in ("+I", "+U"):
                self._rows[key] = row

    def lines(self) -> list[str]:
        return canonical_lines(self.rows)


def expected_after_each_step(layout: Layout, steps: Sequence[Step], kind_column: str | None = None) -> list[list[str]]:
    model = Model(layout.primary_keys, layout.partition_keys, kind_column)
    out = []
    for step in steps:
        model.apply(step)
        out.append(model.lines())
    return out


# ----------------------------------------------------------------------------------------------- Java side


def java_spec(
    warehouse: str,
    table: str,
    fields: Sequence[tuple[str, Any]],
    steps: Sequence[Step],
    *,
    primary_keys: Sequence[str] = (),
    partition_keys: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    if_exists: str = "error",
    compact: bool = False,
) -> dict[str, Any]:
    """An oracle ``write`` spec: one batch commit per step (rows ``[kind, v1, v2, ...]`` in field order)."""
    names = [n for n, _ in fields]
    batches = []
    for step in steps:
        batch: dict[str, Any] = {"rows": [[kind, *(values.get(n) for n in names)] for kind, values in step.rows]}
        if step.overwrite is True:
            batch["overwrite"] = True
        elif step.overwrite:
            batch["overwrite"] = {k: str(v) for k, v in step.overwrite.items()}
        batches.append(batch)
    return {
        "warehouse": warehouse,
        "database": DB,
        "table": table,
        "if_exists": if_exists,
        "schema": {
            "fields": [{"name": n, "type": t} for n, t in fields],
            "primary_keys": list(primary_keys),
            "partition_keys": list(partition_keys),
            "options": dict(options or {}),
        },
        "batches": batches,
        "compact": compact,
    }


def layout_spec(warehouse: str, table: str, layout: Layout, steps: Sequence[Step], *, compact: bool) -> dict[str, Any]:
    return java_spec(
        warehouse, table, SCENARIO_COLUMNS, steps, primary_keys=layout.primary_keys,
        partition_keys=layout.partition_keys, options=layout.options, compact=compact,
    )


def java_lines(oracle: Any, warehouse: str, table: str, snapshot_id: int | None = None) -> list[str]:
    flags = [] if snapshot_id is None else ["--snapshot", str(snapshot_id)]
    return oracle_lines(oracle.read(warehouse, DB, table, *flags))


def java_system_table(oracle: Any, warehouse: str, table: str, name: str) -> list[dict[str, Any]]:
    text = oracle.call(["sys", warehouse, DB, table, name])
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ----------------------------------------------------------------------------------------------- our side


def data_fields(fields: Sequence[tuple[str, Any]]) -> list[DataField]:
    """Our DataFields for (name, Paimon type JSON) pairs (ids are reassigned by create_table)."""
    return [DataField(i, name, parse_type(t)) for i, (name, t) in enumerate(fields)]


def create_our_table(warehouse: str, table: str, layout: Layout) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database(DB, exist_ok=True)
    return catalog.create_table(
        f"{DB}.{table}", data_fields(SCENARIO_COLUMNS), primary_keys=layout.primary_keys,
        partition_keys=layout.partition_keys, options=layout.options,
    )


def _arrow_value(value: Any, t: DataType) -> Any:
    if value is None:
        return None
    if isinstance(t, DecimalType):
        return Decimal(value)
    if isinstance(t, (VarBinaryType, BinaryType)):
        return base64.b64decode(value)
    if isinstance(t, DateType):
        return dt.date.fromisoformat(value)
    if isinstance(t, TimeType):
        return dt.time.fromisoformat(value)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if t.precision > 6:
            raise AssertionError("TIMESTAMP(7..9) columns are built by _arrow_column")
        parsed = dt.datetime.fromisoformat(value)
        return parsed.replace(tzinfo=dt.timezone.utc) if isinstance(t, LocalZonedTimestampType) else parsed
    if isinstance(t, ArrayType):
        return [_arrow_value(v, t.element) for v in value]
    if isinstance(t, MapType):
        pairs = value.items() if isinstance(value, dict) else value
        return [(_arrow_value(k, t.key), _arrow_value(v, t.value)) for k, v in pairs]
    if isinstance(t, RowType):
        if isinstance(value, list):
            value = dict(zip(t.field_names, value, strict=True))
        return {f.name: _arrow_value(value.get(f.name), f.type) for f in t.fields}
    return value


def _epoch_nanos(text: str) -> int:
    base, _, frac = text.partition(".")
    seconds = int((dt.datetime.fromisoformat(base) - dt.datetime(1970, 1, 1)).total_seconds())
    return seconds * 1_000_000_000 + int(frac.ljust(9, "0"))


def _arrow_column(values: list[Any], t: DataType) -> pa.Array:
    arrow_type = to_arrow_type(t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and t.precision > 6:
        nanos = pa.array([None if v is None else _epoch_nanos(v) for v in values], pa.int64())
        return nanos.cast(arrow_type)
    return pa.array([_arrow_value(v, t) for v in values], arrow_type)


def arrow_table(
    fields: Sequence[tuple[str, Any]],
    rows: Sequence[tuple[str, Mapping[str, Any]]],
    *,
    kind_column: str | None = ROW_KIND,
) -> pa.Table:
    """Arrow rows for our ``write_table`` (``kind_column`` = ``_row_kind``) or pypaimon (its rowkind field)."""
    columns: dict[str, pa.Array] = {}
    for name, type_json in fields:
        columns[name] = _arrow_column([values.get(name) for _, values in rows], parse_type(type_json))
    if kind_column is not None:
        columns[kind_column] = pa.array([kind for kind, _ in rows], pa.string())
    return pa.table(columns)


def our_partition_spec(fields: Sequence[tuple[str, Any]], spec: Mapping[str, Any]) -> dict[str, Any]:
    types = dict(fields)
    return {k: _arrow_value(v, parse_type(types[k])) for k, v in spec.items()}


def write_steps_ours(table: Table, fields: Sequence[tuple[str, Any]], steps: Sequence[Step]) -> list[int]:
    """One ``write_table`` commit per step; returns the snapshot ids."""
    ids = []
    for step in steps:
        data = arrow_table(fields, step.rows)
        if step.overwrite is True:
            sid = write_table(table, data, mode="overwrite")
        elif step.overwrite:
            sid = write_table(table, data, mode="overwrite",
                              overwrite_partitions=[our_partition_spec(fields, step.overwrite)])
        else:
            sid = write_table(table, data)
        assert sid is not None
        ids.append(sid)
    return ids


def our_lines(table: Table, snapshot_id: int | None = None) -> list[str]:
    return ours_as_oracle(table.scan(snapshot_id=snapshot_id).to_arrow(), list(table.schema.fields))


def load(warehouse: str, table: str) -> Table:
    return FileSystemCatalog(warehouse).load_table(f"{DB}.{table}")


# ----------------------------------------------------------------------------------------------- system tables

# columns of the `files` system table whose values both sides must agree on (file_path: Java 0.9 prints the
# file name only; creation_time is a wall-clock reading)
FILES_COLUMNS = (
    "partition", "bucket", "file_format", "schema_id", "level", "record_count", "file_size_in_bytes",
    "min_key", "max_key", "min_sequence_number", "max_sequence_number", "null_value_counts", "min_value_stats",
    "max_value_stats",
)
SNAPSHOTS_COLUMNS = (
    "snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "base_manifest_list",
    "delta_manifest_list", "changelog_manifest_list", "total_record_count", "delta_record_count",
    "changelog_record_count", "watermark",
)


_STATS_COLUMNS = ("null_value_counts", "min_value_stats", "max_value_stats")


def files_rows(rows: Sequence[Mapping[str, Any]], *, skip_stats_of: Sequence[str] = ()) -> list[str]:
    """Comparable ``files`` rows. ``skip_stats_of``: columns whose min/max are left out (TIMESTAMP(9): Java keeps
    nanoseconds in the stats, our BinaryRow values are datetimes, i.e. microseconds)."""
    out = []
    for r in rows:
        row = {c: r[c] for c in FILES_COLUMNS}
        row["file"] = os.path.basename(r["file_path"])
        for c in _STATS_COLUMNS:
            for name in skip_stats_of:
                if row[c] is not None:
                    row[c] = re.sub(rf"(, )?\b{re.escape(name)}=[^,}}]*", "", row[c])
        out.append(json.dumps(row, sort_keys=True))
    return sorted(out)


def snapshots_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({c: r[c] for c in SNAPSHOTS_COLUMNS} for r in rows), key=lambda r: r["snapshot_id"])


# ----------------------------------------------------------------------------------------------- all types

# (name, Paimon type JSON); TIMESTAMP(9) only where the format stores it (Avro data files cannot in 0.9)
ALL_TYPES_FIELDS: list[tuple[str, Any]] = [
    ("id", "INT NOT NULL"),
    ("b", "BOOLEAN"),
    ("ti", "TINYINT"),
    ("si", "SMALLINT"),
    ("i", "INT"),
    ("bi", "BIGINT"),
    ("f", "FLOAT"),
    ("d", "DOUBLE"),
    ("dec", "DECIMAL(10, 2)"),
    ("dec38", "DECIMAL(38, 10)"),
    ("s", "STRING"),
    ("vc", "VARCHAR(20)"),
    ("c", "CHAR(5)"),
    ("by", "BYTES"),
    ("dt", "DATE"),
    ("tm", "TIME(3)"),
    ("ts3", "TIMESTAMP(3)"),
    ("ts6", "TIMESTAMP(6)"),
    ("ts9", "TIMESTAMP(9)"),
    ("ltz", "TIMESTAMP(6) WITH LOCAL TIME ZONE"),
    ("arr", {"type": "ARRAY", "element": "INT"}),
    ("sarr", {"type": "ARRAY", "element": "STRING"}),
    ("m", {"type": "MAP", "key": "STRING", "value": "BIGINT"}),
    ("r", {"type": "ROW", "fields": [{"id": 0, "name": "x", "type": "INT"}, {"id": 1, "name": "y", "type": "STRING"}]}),
]

_ALL_TYPES_VALUES: list[list[Any]] = [
    [1, True, -128, -32768, -2147483648, -9223372036854775808, 1.5, -2.25, "12345678.90",
     "1234567890123456789012345678.0123456789", "hello, world", "varchar", "abc", "AAEC/w==", "2024-02-29",
     "23:59:59.999", "2024-01-01T00:00:00.123", "2024-01-01T00:00:00.123456", "2024-01-01T00:00:00.123456789",
     "2024-05-01T12:00:00.000001", [1, None, 3], ["x", "", None], [["a", 1], ["b", None]], {"x": 1, "y": "why"}],
    [2, False, 127, 32767, 2147483647, 9223372036854775807, -0.5, 1e300, "-0.01", "-0.0000000001", "",
     "a twenty-char string", "abcde", "", "1970-01-01", "00:00:00.000", "1969-12-31T23:59:58.999",
     "1900-01-01T00:00:00.000000", "2262-04-11T23:47:16.854775807", "1970-01-01T00:00:00.000000", [], [],
     [], {"x": None, "y": "only-y"}],
    [3] + [None] * 23,
    [4, True, 0, 0, 0, 0, 0.0, 0.0, "0.00", "0.0000000000", "non-ascii: é ü 漢字", "x", "x", "AA==",
     "1969-12-31", "12:34:56.789", "2038-01-19T03:14:08.000", "2024-06-30T23:59:59.999999",
     "2000-01-01T00:00:00.000000001", "1969-12-31T23:59:58.500000", [2147483647], ["only"],
     [["k", -1]], {"x": -1, "y": None}],
]


def all_types_fields(file_format: str) -> list[tuple[str, Any]]:
    return [(n, t) for n, t in ALL_TYPES_FIELDS if not (file_format == "avro" and n == "ts9")]


def all_types_rows(file_format: str, *, version: int = 1) -> list[dict[str, Any]]:
    names = [n for n, _ in ALL_TYPES_FIELDS]
    rows = [dict(zip(names, values, strict=True)) for values in _ALL_TYPES_VALUES]
    for row in rows:
        if file_format == "avro":
            row.pop("ts9")
        if version > 1 and row["s"] is not None:
            row["s"] = f"{row['s']} v{version}"
            row["i"] = version
    return rows


def all_types_history(file_format: str, *, pk: bool) -> list[Step]:
    """Two commits: four rows; then key 1 updated, key 3 deleted (PK) or appended again (append)."""
    first = all_types_rows(file_format)
    second = all_types_rows(file_format, version=2)
    if pk:
        return [Step([("+I", r) for r in first]),
                Step([("-U", first[0]), ("+U", second[0]), ("-D", first[2]), ("+I", second[3])])]
    return [Step([("+I", r) for r in first]), Step([("+I", second[0]), ("+I", second[2]), ("+I", second[3])])]
