"""Committing schema changes: one new schema/schema-N per call, checked against the table's data.

Mirrors SchemaManager.commitChanges: the changes are applied to the latest schema and published with
create-if-absent, so a concurrent alter never overwrites a schema file; when another writer published that id
first, the changes are applied again on top of its schema (and may then be refused, e.g. a column that now
exists). Before publishing, the new schema passes the checks of create_table (options, keys, merge engine)
and, stricter than Paimon, NOT NULL is refused on a column that holds nulls in the live data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow.compute as pc

from table_format.data.deletion_vector import DeletionFile, deletion_files_of
from table_format.data.file_reader import read_data_file
from table_format.errors import CommitConflictError, SchemaError
from table_format.meta.manifest import ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.schema import TableSchema, validate_column_options
from table_format.schema_evolution import SchemaChange, apply_changes, changed_to_not_null
from table_format.store.file_store import FileStore

MAX_ATTEMPTS = 10


def commit_schema_changes(store: FileStore, changes: Sequence[SchemaChange], *,
                          validate: Callable[[TableSchema], None]) -> TableSchema:
    """Apply `changes` to the latest schema and publish it as the next schema id; returns the new schema."""
    for _ in range(MAX_ATTEMPTS):
        new = prepare_schema_changes(store, changes, validate=validate)
        if store.schemas.commit(new):
            return new
    raise CommitConflictError(
        f"table {store.identifier!r}: the schema kept changing concurrently ({MAX_ATTEMPTS} attempts); retry"
    )


def prepare_schema_changes(store: FileStore, changes: Sequence[SchemaChange], *,
                           validate: Callable[[TableSchema], None]) -> TableSchema:
    """The next schema version after `changes`, fully checked but not published."""
    latest_store = store.latest()
    snapshot = latest_store.snapshots.latest()
    old = latest_store.schema
    new = apply_changes(old, changes, table=store.identifier, has_snapshots=snapshot is not None)
    where = f"table {store.identifier!r}: "
    validate(new)
    validate_column_options(new, where)
    if snapshot is not None:
        _refuse_nulls(latest_store, snapshot, old, new)
    return new


def _refuse_nulls(store: FileStore, snapshot: Snapshot, old: TableSchema, new: TableSchema) -> None:
    """NOT NULL only on columns without nulls in the live files (every row of them, superseded ones too)."""
    columns = changed_to_not_null(old, new)
    if not columns:
        return
    entries = store.manifests.live_files(snapshot)
    dvs = deletion_files_of(store, snapshot)
    old_ids = {f.id for f in old.fields}
    for name in columns:
        field = new.field(name)
        if field.id not in old_ids:
            if any(e.file.row_count for e in entries):
                raise SchemaError(f"table {store.identifier!r}: new column {name!r} cannot be NOT NULL: "
                                  "the existing rows have no value for it")
            continue
        for e in entries:
            count = _nulls(store, old, e, field.id, dvs.get((e.partition, e.bucket, e.file.file_name)))
            if count:
                raise SchemaError(
                    f"table {store.identifier!r}: column {name!r} cannot become NOT NULL: it holds {count} null "
                    f"value(s) (data file {e.file.file_name}); fill or delete them first"
                )


def _nulls(store: FileStore, current: TableSchema, entry: ManifestEntry, field_id: int,
           deletion_file: DeletionFile | None) -> int:
    """Nulls of the column `field_id` in one live file: from its stats when they say none, else read."""
    f = entry.file
    file_schema = store.schema_by_id(f.schema_id)
    by_id = {x.id: x.name for x in file_schema.fields}
    if field_id not in by_id:  # written before the column existed: every row reads null
        deleted = deletion_file.cardinality if deletion_file is not None and deletion_file.cardinality else 0
        return f.row_count - deleted
    stats_cols = list(f.value_stats_cols) if f.value_stats_cols is not None else file_schema.field_names
    name = by_id[field_id]
    if name in stats_cols:
        i = stats_cols.index(name)
        if i < len(f.value_stats.null_counts) and f.value_stats.null_counts[i] == 0:
            return 0
    column = next(x.name for x in current.fields if x.id == field_id)
    data = read_data_file(store, entry.partition, entry.bucket, f, [column], deletion_file=deletion_file)
    return int(pc.sum(pc.is_null(data.column(0))).as_py() or 0)
