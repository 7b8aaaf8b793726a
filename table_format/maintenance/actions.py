"""MaintenanceActions: the `table.maintenance` facade over one table's store (API.md, "maintenance")."""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from table_format.errors import OptionError
from table_format.maintenance.compact import compact
from table_format.maintenance.expire import expire_snapshots
from table_format.maintenance.orphan_clean import remove_orphan_files
from table_format.maintenance.partition_expire import PartitionExpireResult, expire_partitions
from table_format.maintenance.post_commit import PostCommitMaintenance
from table_format.maintenance.progress import ProgressCallback
from table_format.maintenance.rescale import rescale
from table_format.maintenance.results import CompactResult, ExpireResult, OrphanCleanResult, RescaleResult
from table_format.store.file_store import FileStore


class MaintenanceActions:
    """Maintenance of one table. Destructive operations default to ``dry_run=True``."""

    def __init__(self, store: FileStore, *, on_schema_change: Callable[[FileStore], None] | None = None) -> None:
        self.store = store
        self._on_schema_change = on_schema_change

    def compact(self, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None,
                progress: ProgressCallback | None = None) -> CompactResult:
        """Compact the table (or some partitions): universal compaction per bucket, or all to the max level.

        Commits one COMPACT snapshot; Java Paimon reads the result as before. Then, like a dedicated compaction job
        of Paimon (which runs with ``write-only=false``), the maintenance after a commit runs (post_commit.py).
        ``progress`` (all maintenance operations): called with a ProgressEvent as the work goes (progress.py).
        """
        post_commit = PostCommitMaintenance(self.store, commit_user=str(uuid.uuid4()), write_only=False)
        result = compact(self.store, full=full, partitions=partitions, progress=progress)
        post_commit.run()
        return result

    def rescale(self, *, bucket: int, partitions: Sequence[Mapping[str, Any]] | None = None,
                progress: ProgressCallback | None = None) -> RescaleResult:
        """Set the table's bucket count to `bucket` and rewrite the given partitions (default all) with it."""
        post_commit = PostCommitMaintenance(self.store, commit_user=str(uuid.uuid4()))
        result, new_store = rescale(self.store, bucket=bucket, partitions=partitions, progress=progress)
        if new_store is not self.store:
            self.store = new_store
            if self._on_schema_change is not None:
                self._on_schema_change(new_store)
        post_commit.run(new_store)
        return result

    def expire_partitions(
        self, *, expiration_time: _dt.timedelta | None = None, dry_run: bool = True
    ) -> PartitionExpireResult:
        """Drop the partitions older than ``expiration_time`` (default: option ``partition.expiration-time``).

        The partition time comes from the partition values (``partition.timestamp-pattern``/``-formatter``) or,
        with ``partition.expiration-strategy = update-time``, from the newest file. One OVERWRITE snapshot.
        """
        opts = self.store.options.post_commit()
        expiration = opts.partition_expiration_time if expiration_time is None else expiration_time
        if expiration is None:
            raise OptionError(
                f"table {self.store.identifier!r}: pass expiration_time or set option 'partition.expiration-time'"
            )
        return expire_partitions(
            self.store,
            expiration_time=expiration,
            strategy=opts.partition_expiration_strategy,
            timestamp_pattern=opts.partition_timestamp_pattern,
            timestamp_formatter=opts.partition_timestamp_formatter,
            dry_run=dry_run,
        )

    def expire_snapshots(
        self,
        *,
        retain_min: int | None = None,
        retain_max: int | None = None,
        older_than: _dt.datetime | _dt.timedelta | None = None,
        max_deletes: int | None = None,
        dry_run: bool = True,
        progress: ProgressCallback | None = None,
    ) -> ExpireResult:
        """Expire snapshots by the retention rules and delete the files only they used.

        None means the table option (``snapshot.num-retained.min`` 10, ``snapshot.num-retained.max`` unbounded,
        ``snapshot.time-retained`` 1 h, ``snapshot.expire.limit`` 10). ``older_than``: an instant or an age; a
        snapshot may expire once its successor is older. Tags and consumers protect what they reference.
        """
        return expire_snapshots(self.store, retain_min=retain_min, retain_max=retain_max, older_than=older_than,
                                max_deletes=max_deletes, dry_run=dry_run, progress=progress)

    def remove_orphan_files(
        self, *, older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1), dry_run: bool = True,
        progress: ProgressCallback | None = None,
    ) -> OrphanCleanResult:
        """Delete files older than ``older_than`` that no snapshot, tag or changelog references."""
        return remove_orphan_files(self.store, older_than=older_than, dry_run=dry_run, progress=progress)
