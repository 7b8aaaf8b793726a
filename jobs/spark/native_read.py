"""read_table(): a Paimon table as a Spark DataFrame whose files that need nothing of Paimon are read by Spark itself.

Spark 4.3 hands a Python data source's Arrow batches to the query as rows (its PythonPartitionReaderFactory has no
columnar reader): turning them into rows costs the JVM more CPU than Spark's whole Parquet scan of the same rows
(benchmarks/bench_spark.py, docs/spark.md). Paimon's own connector reads a split that needs no merge with a plain
format reader; so does ``read_table``: it plans the snapshot on the driver, and every data file that

* needs no merge: an append table's file, or a primary-key file of a split without overlapping keys (``raw
  convertible``) that holds no retraction (``delete_row_count`` 0),
* has no deletion vector, is Parquet at a local path (``file://``) without glob characters, and
* holds the read columns under the same field id, name and type (or lacks both the id and the name: Spark then
  reads nulls, as Paimon does for a column added later),

is read with ``spark.read.parquet`` (vectorized, filters pushed into row groups). The other files go through
``format("paimon")`` pinned to the same snapshot, which skips exactly those files (option ``NATIVE_FILES_SKIPPED``):
one DataFrame, their union. A read whose columns include a type Spark's Parquet reader does not map one to one
(TIME, TIMESTAMP(7..9), ARRAY, MAP, MULTISET, ROW), an incremental read and ``read.changelog`` stay wholly on
``format("paimon")``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from pyspark.sql import DataFrame, SparkSession

from jobs.spark.read_options import read_options
from jobs.spark.stream_options import wants_changelog
from jobs.spark.types import spark_schema
from table_format import DataSplit
from table_format import types as pt
from table_format.store.file_store import FileStore

NATIVE_FILES_SKIPPED = "lakehouse.native-files-skipped"  # format("paimon") option (read_options.py): skip them
_GLOB_CHARACTERS = frozenset("*?[]{}\\")
_NATIVE_TYPES = (pt.BooleanType, pt.TinyIntType, pt.SmallIntType, pt.IntType, pt.BigIntType, pt.FloatType,
                 pt.DoubleType, pt.DateType, pt.DecimalType, pt.CharType, pt.VarCharType, pt.BinaryType,
                 pt.VarBinaryType)
_SPARK_MAX_TIMESTAMP_PRECISION = 6  # micros; Paimon writes TIMESTAMP(7..9) as INT96


FileKey = tuple[bytes, int, str]  # (partition, bucket, file name)


@dataclasses.dataclass(frozen=True)
class NativePlan:
    """The files Spark's Parquet reader reads (``paths``, and ``keys`` naming them) and the splits left to
    ``format("paimon")``."""

    paths: tuple[str, ...]
    keys: frozenset[FileKey]
    rest: tuple[DataSplit, ...]


def read_table(spark: SparkSession, table_path: str, *, options: Mapping[str, str] | None = None) -> DataFrame:
    """The table (``format("paimon")``'s options: ``columns``, ``snapshot-id``, ``tag``, ``branch``, ``s3.*``, ...)
    as one DataFrame of a pinned snapshot: files that need no merge through Spark's own Parquet reader, the rest
    through ``format("paimon")``. Same rows and columns as ``spark.read.format("paimon").options(...).load(...)``;
    the columns are nullable on the native side, so the union's are too."""
    given = {k.lower(): v for k, v in (options or {}).items()}  # Spark's data source options ignore case
    opts = read_options({**given, "path": table_path})

    def data_source(read: Mapping[str, str]) -> DataFrame:
        return spark.read.format("paimon").options(**read).load(table_path)

    if opts.incremental is not None or wants_changelog(given):  # rows with their kinds: the data source's
        return data_source(given)
    table = opts.open_table()
    scan = table.scan(columns=opts.columns, snapshot_id=opts.snapshot_id, tag=opts.tag)
    snapshot = scan.snapshot
    # a latest read whose snapshot predates the table's schema reads the current schema; "snapshot-id" would time
    # travel to the older one: such a read stays on the data source (rare: a schema change not yet written to)
    if snapshot is None or snapshot.schema_id != scan.store.schema.id:
        return data_source(given)
    plan = native_plan(scan.plan(), scan.store, scan.arrow_schema.names)
    if not plan.paths:
        return data_source(given)
    schema = spark_schema(scan.arrow_schema, table=table.identifier)
    native = (spark.read.schema(schema).option("datetimeRebaseMode", "CORRECTED")
              .option("int96RebaseMode", "CORRECTED").parquet(*plan.paths))
    if not plan.rest:
        return native
    pinned = {k: v for k, v in given.items() if k not in ("tag", "snapshot-id")}
    pinned.update({"snapshot-id": str(snapshot.id), NATIVE_FILES_SKIPPED: "true"})
    return native.unionByName(data_source(pinned).select(*schema.names))


def native_plan(splits: Sequence[DataSplit], store: FileStore, columns: Sequence[str]) -> NativePlan:
    """Which files of ``splits`` (an unfiltered plan) Spark's Parquet reader reads as they are (module docstring),
    for a read of ``columns`` with ``store``'s schema; the same answer on the driver and in the data source."""
    fields = [store.schema.field(name) for name in columns]
    if not store.file_io.local or not all(_native_type(f.type) for f in fields):
        return NativePlan((), frozenset(), tuple(splits))
    compatible: dict[int, bool] = {}
    paths: list[str] = []
    keys: set[FileKey] = set()
    for split in splits:
        for index, file in enumerate(split.files):
            if file.schema_id not in compatible:
                compatible[file.schema_id] = _same_columns(store, file.schema_id, fields)
            path = store.data_file_path(split.partition, split.bucket, file.file_name, file.external_path)
            if _native_file(store, split, index) and compatible[file.schema_id] and _plain_local(path):
                paths.append("file://" + path)
                keys.add((split.partition, split.bucket, file.file_name))
    return NativePlan(tuple(paths), frozenset(keys), tuple(without_files(splits, keys)))


def without_files(splits: Sequence[DataSplit], keys: frozenset[FileKey] | set[FileKey]) -> list[DataSplit]:
    """``splits`` without the files ``keys`` names (a file is only ever skipped from a split that needs no merge:
    a subset of a raw-convertible split is raw convertible too)."""
    out = []
    for split in splits:
        kept = [i for i, f in enumerate(split.files) if (split.partition, split.bucket, f.file_name) not in keys]
        if len(kept) == len(split.files):
            out.append(split)
        elif kept:
            dvs = split.deletion_files
            out.append(dataclasses.replace(split, files=tuple(split.files[i] for i in kept),
                                           deletion_files=tuple(dvs[i] for i in kept) if dvs else None))
    return out


def _native_type(data_type: pt.DataType) -> bool:
    if isinstance(data_type, pt.TimestampType | pt.LocalZonedTimestampType):
        return data_type.precision <= _SPARK_MAX_TIMESTAMP_PRECISION
    return isinstance(data_type, _NATIVE_TYPES)


def _native_file(store: FileStore, split: DataSplit, index: int) -> bool:
    file = split.files[index]
    if split.deletion_files and split.deletion_files[index] is not None:
        return False
    if file.write_cols is not None or not file.file_name.endswith(".parquet"):
        return False
    if not store.has_primary_key:
        return True
    return split.raw_convertible and file.delete_row_count == 0


def _same_columns(store: FileStore, schema_id: int, fields: Sequence[pt.DataField]) -> bool:
    """Spark matches Parquet columns by name: every read column must be in the file's schema under the same id,
    name and type (nullability aside), or be absent from it by id and by name."""
    written = store.schema_by_id(schema_id)
    by_id = {f.id: f for f in written.fields}
    names = {f.name for f in written.fields}
    for field in fields:
        old = by_id.get(field.id)
        if old is None:
            if field.name in names:
                return False
        elif old.name != field.name or old.type.copy(nullable=True) != field.type.copy(nullable=True):
            return False
    return True


def _plain_local(path: str) -> bool:
    return path.startswith("/") and not any(c in _GLOB_CHARACTERS for c in path)
