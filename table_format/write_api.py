"""write_table: one call = one atomic commit (append, full overwrite or partition overwrite)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from table_format.errors import SchemaConflictError, SchemaError
from table_format.table import Table
from table_format.write.commit_message import CommitMessage
from table_format.write.commit_recovery import commit_identifier_of, commit_landed
from table_format.write.input import to_arrow_table
from table_format.write.schema_merge import check_schema_mode

MERGE_ATTEMPTS = 3


def write_table(
    table: Table,
    data: Any,
    *,
    mode: str = "append",
    overwrite_partitions: Sequence[Mapping[str, Any]] | None = None,
    schema_mode: str = "strict",
) -> int | None:
    """Write `data` (pyarrow.Table, RecordBatchReader or polars.DataFrame) and commit once.

    mode="append" adds rows (primary-key tables upsert by their merge engine); mode="overwrite"
    replaces the whole table, or only the partitions in `overwrite_partitions`, or, when the table
    option `dynamic-partition-overwrite` is set to true, only the partitions the data falls in. Returns the new
    snapshot id, or None when nothing was written. On any error no snapshot is created and the
    files written so far are deleted.

    schema_mode="strict" (default) refuses input columns the table lacks. schema_mode="merge" adds them
    (nullable), widens columns whose input type is a safe widening (INT -> BIGINT, FLOAT -> DOUBLE, more DECIMAL
    digits, ...) and writes nulls for nullable table columns the input lacks. The new schema version is
    published after every data file is written, right before the snapshot: a write that fails before leaves the
    table as it was; a failure of the snapshot commit itself leaves the new schema (no data). When another
    writer changes the schema concurrently, the write is redone on top of it (a few times at most).
    """
    check_schema_mode(schema_mode, table=table.identifier)
    if schema_mode == "strict":
        return _write_once(table, data, mode, overwrite_partitions, schema_mode)
    data = to_arrow_table(data, table=table.identifier)  # read once: a retry writes it again
    for _ in range(MERGE_ATTEMPTS - 1):
        try:
            return _write_merged(table, data, mode, overwrite_partitions)
        except SchemaConflictError:
            table.refresh()  # another writer's schema: evolve from it
    return _write_merged(table, data, mode, overwrite_partitions)


def _write_merged(table: Table, data: Any, mode: str,
                  overwrite_partitions: Sequence[Mapping[str, Any]] | None) -> int | None:
    snapshot_id = _write_once(table, data, mode, overwrite_partitions, "merge")
    table.refresh()  # the schema this write published (also when it wrote no rows)
    return snapshot_id


def _write_once(table: Table, data: Any, mode: str, overwrite_partitions: Sequence[Mapping[str, Any]] | None,
                schema_mode: str) -> int | None:
    if mode not in ("append", "overwrite"):
        raise SchemaError(f"table {table.identifier!r}: mode must be 'append' or 'overwrite', not {mode!r}")
    if overwrite_partitions is not None and mode != "overwrite":
        raise SchemaError(f"table {table.identifier!r}: overwrite_partitions needs mode='overwrite'")
    writer = table.new_write(overwrite=mode == "overwrite", schema_mode=schema_mode)
    commit_user = str(uuid.uuid4())
    base_id: int | None = None
    committing = False
    try:
        writer.write(data)
        messages = writer.prepare_commit()
        base_id = table.store.snapshots.latest_id()
        committing = True
        return commit_write(table, messages, mode=mode, overwrite_partitions=overwrite_partitions,
                            commit_user=commit_user)
    except BaseException:
        # never delete the files of a commit that may have landed (an interrupted or uncertain publication)
        if not committing or not table_commit_landed(table, commit_user, after_snapshot_id=base_id):
            writer.abort()
        raise


def commit_write(
    table: Table,
    messages: Sequence[CommitMessage],
    *,
    mode: str = "append",
    overwrite_partitions: Sequence[Mapping[str, Any]] | None = None,
    commit_user: str,
    commit_identifier: int | None = None,
) -> int | None:
    """Commit the messages of any number of writers (``table.new_write(overwrite=mode == "overwrite")``) as one
    snapshot, with write_table's semantics: rows outside ``overwrite_partitions`` are refused, the table option
    ``dynamic-partition-overwrite`` narrows a full overwrite. Returns the snapshot id, or None when nothing changed.
    Raises without deleting any file: the caller decides with ``table_commit_landed`` (distributed writers too).
    ``commit_identifier``: see ``Table.commit`` (streaming writers: the batch id; ``last_commit_identifier``).
    """
    if mode not in ("append", "overwrite"):
        raise SchemaError(f"table {table.identifier!r}: mode must be 'append' or 'overwrite', not {mode!r}")
    if overwrite_partitions is not None and mode != "overwrite":
        raise SchemaError(f"table {table.identifier!r}: overwrite_partitions needs mode='overwrite'")
    overwrite = mode == "overwrite"
    if overwrite_partitions is not None:
        accept = table.partition_filter(overwrite_partitions)
        outside = [m for m in messages if not accept(m.partition)]
        if outside:
            values = table.partition_values(outside[0].partition)
            raise SchemaError(
                f"table {table.identifier!r}: rows of partition {values} are outside overwrite_partitions "
                f"{list(overwrite_partitions)}"
            )
    if overwrite and overwrite_partitions is None and _dynamic_partition_overwrite(table):
        # Paimon's dynamic partition overwrite: replace only the partitions that receive rows
        overwrite_partitions = [
            table.partition_values(p) for p in sorted({m.partition for m in messages})
        ]
        if not overwrite_partitions:
            return None
    if not messages and not overwrite:
        return None
    return table.commit(messages, overwrite=overwrite and overwrite_partitions is None,
                        overwrite_partitions=overwrite_partitions, commit_user=commit_user,
                        commit_identifier=commit_identifier)


def last_commit_identifier(table: Table, commit_user: str) -> int | None:
    """The ``commitIdentifier`` of the latest snapshot ``commit_user`` committed (None: no snapshot of that user is
    left), as Java's streaming committers read it back after a restart (FileStoreCommitImpl.filterCommitted): a
    writer that commits identifiers in increasing order skips every identifier up to this one. Newest snapshot
    first; a snapshot expired meanwhile is passed over."""
    return commit_identifier_of(table.store, commit_user)


def table_commit_landed(table: Table, commit_user: str, *, after_snapshot_id: int | None = None) -> bool:
    """True when a snapshot (newer than ``after_snapshot_id``) was committed by ``commit_user``, or when that cannot
    be told: the files of a commit that may have landed must never be deleted."""
    return commit_landed(table.store, commit_user, after_snapshot_id)


def _dynamic_partition_overwrite(table: Table) -> bool:
    """Only an explicit table option turns it on (API.md: overwrite without partitions replaces the table)."""
    return bool(table.partition_keys) and table.options.get("dynamic-partition-overwrite", "").lower() == "true"


def discard_written_files(table: Table, paths: Sequence[str]) -> None:
    """Delete files that writers wrote (``TableWrite.written_paths``) for a commit that did not land."""
    for path in paths:
        table.store.file_io.delete_quietly(path)
