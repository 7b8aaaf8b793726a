"""Table: the facade users hold: metadata, scans, two-phase writes and commits.

Mirrors org.apache.paimon.table.FileStoreTable (its read/write builders folded into keyword options).
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from table_format.arrow_types import to_arrow_schema, to_arrow_type
from table_format.bucket import bucket_of, hash_rows
from table_format.errors import SchemaError, SnapshotNotFoundError
from table_format.meta.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot, tag_from_json
from table_format.options import BucketMode
from table_format.predicate import parse_filter
from table_format.scan.lookup import lookup as lookup_keys
from table_format.store.file_store import FileStore
from table_format.store.partition_spec import partition_spec_filter
from table_format.table_scan import TableScan
from table_format.write.commit_message import CommitMessage

if TYPE_CHECKING:
    from table_format.maintenance.actions import MaintenanceActions
    from table_format.maintenance.consumers import Consumer
    from table_format.maintenance.results import DeleteTagResult, RollbackResult
    from table_format.scan.changes import ChangeSplit
    from table_format.write.table_write import TableWrite


class Table:
    """A Paimon table of a catalog (or opened by path)."""

    def __init__(self, store: FileStore) -> None:
        self.store = store

    # ---- metadata ------------------------------------------------------------------------
    @property
    def identifier(self) -> str:
        return self.store.identifier

    @property
    def path(self) -> str:
        return self.store.paths.root

    @property
    def uri(self) -> str:
        """Where the table lives as a URI (``s3://bucket/wh/db.db/t`` or a local path), for `open_table` and the
        Spark data source, with ``store.file_io.catalog_options()``."""
        return self.store.file_io.uri(self.path)

    @property
    def schema(self) -> Any:
        return self.store.schema

    @property
    def primary_keys(self) -> list[str]:
        return list(self.store.schema.primary_keys)

    @property
    def partition_keys(self) -> list[str]:
        return list(self.store.schema.partition_keys)

    @property
    def options(self) -> dict[str, str]:
        return dict(self.store.schema.options)

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        return to_arrow_schema(self.store.schema.fields)

    @property
    def bucket_mode(self) -> str:
        """"fixed" (option bucket > 0), "dynamic" (bucket = -1 with a primary key) or "unaware" (append, no buckets)."""
        return self.store.bucket_mode.value

    def bucket_ids(self, data: pa.Table) -> np.ndarray:
        """The bucket of every row of ``data`` on a fixed-bucket table (the bucket-key hash Java's writers use), so
        that distributed writers can route each bucket to one task. ``data`` needs the bucket-key columns."""
        store = self.store
        if store.bucket_mode != BucketMode.FIXED:
            raise SchemaError(f"table {self.identifier!r}: bucket ids exist only for option 'bucket' > 0 "
                              f"(this table's bucket mode is {store.bucket_mode.value!r})")
        keys = list(store.schema.bucket_keys)
        missing = [k for k in keys if k not in data.column_names]
        if missing:
            raise SchemaError(f"table {self.identifier!r}: bucket-key columns {missing} are missing from the data")
        types = [store.schema.field(k).type for k in keys]
        columns = [data.column(k).cast(to_arrow_type(t)) for k, t in zip(keys, types, strict=True)]
        return bucket_of(hash_rows(columns, types), store.options.bucket).astype(np.int32)

    def snapshots(self) -> list[Snapshot]:
        return self.store.snapshots.snapshots()

    def latest_snapshot(self) -> Snapshot | None:
        return self.store.snapshots.latest()

    def __repr__(self) -> str:
        return f"Table({self.identifier!r}, path={self.path!r})"

    # ---- reading -------------------------------------------------------------------------
    def scan(self, *, filter: Any = None, columns: Sequence[str] | None = None, snapshot_id: int | None = None,
             tag: str | None = None, limit: int | None = None) -> TableScan:
        if snapshot_id is not None and tag is not None:
            raise SchemaError(f"table {self.identifier!r}: pass snapshot_id or tag, not both")
        if limit is not None and limit < 0:
            raise SchemaError(f"table {self.identifier!r}: limit must be >= 0, got {limit}")
        snapshot: Snapshot | None
        store = self.store
        if tag is not None or snapshot_id is not None:
            if tag is not None:
                snapshot = self._tag_snapshot(tag)
            else:
                try:
                    snapshot = self.store.snapshots.snapshot(snapshot_id)  # type: ignore[arg-type]
                except SnapshotNotFoundError as e:
                    raise SnapshotNotFoundError(f"table {self.identifier!r}: {e}") from None
            # time travel reads with the schema of that snapshot, as Java's TimeTravelUtil does
            store = store.with_schema(store.schema_by_id(snapshot.schema_id))
        else:
            snapshot = self.store.snapshots.latest()
            if snapshot is not None and snapshot.schema_id > store.schema.id:  # this table object is stale
                store = store.with_schema(store.schema_by_id(snapshot.schema_id))
        predicate = parse_filter(filter, store.schema, table=self.identifier)
        return TableScan(self, predicate=predicate, columns=columns, snapshot=snapshot, limit=limit, store=store)

    def lookup(self, keys: Any, *, columns: Sequence[str] | None = None, snapshot_id: int | None = None,
               tag: str | None = None) -> pa.Table:
        """The latest (merged) row of each primary key in ``keys``: a pyarrow Table with the primary-key columns,
        or an array / list of values for a one-column key. Keys the table lacks have no row; rows come in no
        particular order. The rows a scan filtered on the same keys returns, read one pass per bucket holding a
        key (the keys' buckets computed as writers do): for enrichment joins."""
        scan = self.scan(columns=columns, snapshot_id=snapshot_id, tag=tag)
        return lookup_keys(scan.store, scan.snapshot, keys, columns=columns)

    def _tag_snapshot(self, tag: str) -> Snapshot:
        path = self.store.paths.tag(tag)
        try:
            data = self.store.file_io.read_bytes(path)
        except FileNotFoundError:
            raise SnapshotNotFoundError(f"table {self.identifier!r}: tag {tag!r} does not exist") from None
        return tag_from_json(data, source=path).snapshot

    def changes(self, start_snapshot_id: int, end_snapshot_id: int | None = None, *,
                columns: Sequence[str] | None = None, merged: bool = True) -> pa.Table:
        """Rows changed after `start_snapshot_id` up to `end_snapshot_id` (default latest), with `_row_kind`.

        `merged=True`: the records of a key in the range merged, as Paimon 0.9's audit log reads them;
        `merged=False`: every record written in the range, as Paimon >= 1.1 reads them (docs/paimon-versions.md)."""
        from table_format.scan.changes import read_changes  # noqa: PLC0415 - lazy: readers skip it
        return read_changes(self.store, start_snapshot_id, end_snapshot_id, columns=columns, merged=merged)

    def change_splits(self, start_snapshot_id: int, end_snapshot_id: int | None = None, *,
                      merged: bool = True) -> list[ChangeSplit]:
        """`changes` planned as picklable splits (one (partition, bucket) each) to read apart with
        `read_changes_split`; their rows together are those of `changes` with the same `merged` (the Spark data
        source reads them in parallel)."""
        from table_format.scan.changes import plan_changes  # noqa: PLC0415 - lazy: readers skip it
        return plan_changes(self.store, start_snapshot_id, end_snapshot_id, merged=merged)

    # ---- writing -------------------------------------------------------------------------
    def new_write(self, *, overwrite: bool = False, schema_mode: str = "strict",
                  sequence_slot: tuple[int, int] | None = None) -> TableWrite:
        """A writer for a two-phase commit. `schema_mode="merge"`: input columns the table lacks are added and
        safe widenings applied; the evolved schema is published by `prepare_commit` (see write/schema_merge.py).
        `sequence_slot=(slot, slots)`: one of several writers of the same buckets in one commit (TableWrite)."""
        from table_format.write.table_write import TableWrite  # noqa: PLC0415 - lazy: readers skip it
        return TableWrite(self.store, ignore_previous_files=overwrite, schema_mode=schema_mode,
                          sequence_slot=sequence_slot)

    def commit(self, messages: Sequence[CommitMessage], *, overwrite: bool = False,
               overwrite_partitions: Sequence[Mapping[str, Any]] | None = None,
               commit_user: str | None = None, commit_identifier: int | None = None) -> int | None:
        """One atomic snapshot from the messages of any number of writers.

        ``commit_identifier``: recorded in the snapshot as ``commitIdentifier`` (default Java's batch identifier,
        Long.MAX_VALUE); a streaming writer passes its batch or checkpoint id under a stable ``commit_user``, so that
        ``last_commit_identifier`` tells which of its commits landed (Java's streaming committers).

        Raises CommitConflictError (nothing landed: rewrite on the new snapshot), CommitFailedError (nothing
        landed) or CommitOutcomeUnknownError (it may have landed: do not delete the messages' files; see
        docs/commit-protocol.md). The messages' data files are never deleted here.

        Afterwards runs what Paimon's TableCommitImpl runs after a commit (maintenance/post_commit.py: expiration of
        consumers, snapshots, partitions and tags, automatic tags, by the table options; mostly skipped on
        ``write-only`` tables). Its failures are logged, not raised: the commit has landed.
        """
        from table_format.maintenance.post_commit import PostCommitMaintenance  # noqa: PLC0415 - lazy: writes only
        from table_format.write.commit import FileStoreCommit, Overwrite  # noqa: PLC0415

        over = None
        if overwrite or overwrite_partitions is not None:
            over = Overwrite(None if overwrite_partitions is None else self.partition_filter(overwrite_partitions))
        commit_user = commit_user or str(uuid.uuid4())
        # built first, like Java's TableCommitImpl: bad maintenance options fail before anything is committed
        post_commit = PostCommitMaintenance(self.store, commit_user=commit_user)
        messages = list(messages)
        identifier = BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier
        snapshot_id = FileStoreCommit(self.store, commit_user=commit_user).commit(messages, overwrite=over,
                                                                                commit_identifier=identifier)
        if any(f.schema_id > self.store.schema.id for m in messages for f in (*m.new_files, *m.compact_after)):
            self.refresh()  # a merge-mode writer evolved the schema: this table now has it too
        post_commit.run()  # expiration and tags; logs its errors, never raises them: the commit has landed
        return snapshot_id

    def partition_values(self, partition: bytes) -> dict[str, Any]:
        """The partition key values of a partition (as in CommitMessage.partition and DataSplit.partition)."""
        return dict(zip(self.partition_keys, self.store.decode_partition(partition), strict=True))

    def partition_filter(self, specs: Sequence[Mapping[str, Any]]) -> Any:
        """A predicate on partition BinaryRows accepting any of the given (partial) partition specs."""
        return partition_spec_filter(self.store, specs, argument="overwrite_partitions")

    # ---- maintenance, tags and rollback -----------------------------------------------------
    @cached_property
    def maintenance(self) -> MaintenanceActions:
        """compact, expire_snapshots, remove_orphan_files, rescale; destructive ones default to dry runs."""
        from table_format.maintenance.actions import MaintenanceActions  # noqa: PLC0415 - lazy: readers skip it

        return MaintenanceActions(self.store, on_schema_change=self._adopt_store)

    def _adopt_store(self, store: FileStore) -> None:
        """A maintenance operation committed a new schema version: use it from now on."""
        self.store = store
        self.__dict__.pop("arrow_schema", None)

    def refresh(self) -> Table:
        """Pick up a newer schema version written by another writer (e.g. a rescale); returns self."""
        latest = self.store.schemas.latest()
        if latest is not None and latest.id != self.store.schema.id:
            self._adopt_store(FileStore(identifier=self.store.identifier, file_io=self.store.file_io,
                                        paths=self.store.paths, schema=latest))
            self.__dict__.pop("maintenance", None)
        return self

    def create_tag(self, name: str, *, snapshot_id: int | None = None,
                   time_retained: datetime.timedelta | None = None) -> int:
        """Tag a snapshot (default: the latest) so that its files outlive expiration; returns the snapshot id."""
        from table_format.maintenance.tags import create_tag  # noqa: PLC0415 - lazy: readers skip it
        return create_tag(self.store, name, snapshot_id=snapshot_id, time_retained=time_retained)

    def delete_tag(self, name: str, *, dry_run: bool = False) -> DeleteTagResult:
        """Delete a tag, and the files only it still kept alive (a dry run only reports them)."""
        from table_format.maintenance.tags import delete_tag  # noqa: PLC0415 - lazy: readers skip it
        return delete_tag(self.store, name, dry_run=dry_run)

    def tags(self) -> dict[str, int]:
        """Tag name -> snapshot id."""
        from table_format.maintenance.tags import list_tags  # noqa: PLC0415 - lazy: readers skip it
        return list_tags(self.store)

    def rollback_to(self, *, snapshot_id: int | None = None, tag: str | None = None,
                    dry_run: bool = False) -> RollbackResult:
        """Make a former snapshot (or a tag) the latest: later snapshots and tags are deleted with their files.

        A dry run reports what would be removed and changes nothing.
        """
        from table_format.maintenance.tags import rollback_to  # noqa: PLC0415 - lazy: readers skip it
        return rollback_to(self.store, snapshot_id=snapshot_id, tag=tag, dry_run=dry_run)

    # ---- consumers (Paimon's consumer/consumer-<id>: expiration keeps what a consumer has not read) -------------
    def consumers(self) -> list[Consumer]:
        """Every registered consumer, sorted by id."""
        from table_format.maintenance.consumers import list_consumers  # noqa: PLC0415 - lazy: readers skip it
        return list_consumers(self.store)

    def consumer(self, consumer_id: str) -> Consumer | None:
        """Consumer `consumer_id`, None when it is not registered (or expired by ``consumer.expiration-time``)."""
        from table_format.maintenance.consumers import read_consumer  # noqa: PLC0415 - lazy: readers skip it
        return read_consumer(self.store, consumer_id)

    def set_consumer(self, consumer_id: str, *, next_snapshot: int) -> Consumer:
        """Register or advance a consumer: snapshots from `next_snapshot` on survive snapshot expiration."""
        from table_format.maintenance.consumers import set_consumer  # noqa: PLC0415 - lazy: readers skip it
        return set_consumer(self.store, consumer_id, next_snapshot=next_snapshot)

    def delete_consumer(self, consumer_id: str) -> bool:
        """Unregister a consumer; False when it did not exist."""
        from table_format.maintenance.consumers import delete_consumer  # noqa: PLC0415 - lazy: readers skip it
        return delete_consumer(self.store, consumer_id)

    # ---- Iceberg-compatible metadata (metadata.iceberg.storage) ------------------------------------------------
    def iceberg_metadata_dir(self) -> str | None:
        """Where Iceberg readers find this table's metadata (``.../metadata``), None when the table writes none."""
        from table_format.iceberg import IcebergOptions  # noqa: PLC0415 - lazy: readers never import Iceberg

        opts = IcebergOptions.of(self.store)
        return None if opts is None else opts.metadata_dir

    def sync_iceberg(self) -> int | None:
        """Write Iceberg metadata for the latest snapshot now (every commit does it by itself; this catches up a
        table whose metadata a failed or foreign write left behind). The version written, None if up to date."""
        from table_format.iceberg import check_iceberg_writable, sync_iceberg  # noqa: PLC0415 - lazy

        check_iceberg_writable(self.store)
        return sync_iceberg(self.store)

    # ---- branches (branch/branch-<name>/: own snapshots, schemas, tags; data files shared; table_format/branches.py)
    @property
    def current_branch(self) -> str:
        """The branch this object reads and writes ('main' unless opened through `branch` or `t$branch_x`)."""
        return self.store.paths.branch

    def branch(self, name: str) -> Table:
        """Branch `name` of this table as a Table: its scans, writes, commits, maintenance and tags act on it."""
        from table_format.branches import branch_store  # noqa: PLC0415 - lazy: readers skip it
        return Table(branch_store(self.store, name))

    def branches(self) -> list[str]:
        """Names of the branches other than main, sorted."""
        from table_format.branches import list_branches  # noqa: PLC0415 - lazy: readers skip it
        return list_branches(self.store)

    def create_branch(self, name: str, *, tag: str | None = None, from_latest: bool = False) -> None:
        """A new branch: without `tag` the latest schema and no snapshot (as Java); from a tag it starts at the
        tag's snapshot; `from_latest=True` at the latest snapshot, through tag ``branch-<name>-base``."""
        from table_format.branches import create_branch  # noqa: PLC0415 - lazy: readers skip it
        create_branch(self.store, name, tag=tag, from_latest=from_latest)

    def delete_branch(self, name: str) -> None:
        from table_format.branches import delete_branch  # noqa: PLC0415 - lazy: readers skip it
        delete_branch(self.store, name)

    def fast_forward(self, name: str, *, force: bool = False) -> int:
        """This branch takes branch `name`'s state (Java's fastForward); BranchDivergedError, naming both snapshot
        ids, when this branch committed after the branch point, unless `force=True`. Returns the latest snapshot."""
        from table_format.branches import fast_forward  # noqa: PLC0415 - lazy: readers skip it
        return fast_forward(self.store, name, force=force)

    # ---- system tables -------------------------------------------------------------------
    def system_table(self, name: str) -> pa.Table:
        from table_format.system_tables import system_table  # noqa: PLC0415 - lazy: readers skip it
        return system_table(self.store, name)
