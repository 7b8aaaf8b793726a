"""MaintenanceActions: the `table.maintenance` facade over one table's store (API.md, "maintenance")."""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from table_format.errors import OptionError
from table_format.io.file_io import FileStatus
from table_format.maintenance import compact as _compact
from table_format.maintenance import expire as _expire
from table_format.maintenance import orphan_clean as _orphans
from table_format.maintenance import rescale as _rescale
from table_format.maintenance.deletion import execute
from table_format.maintenance.partition_expire import PartitionExpireResult, expire_partitions
from table_format.maintenance.post_commit import PostCommitMaintenance
from table_format.maintenance.progress import ProgressCallback, ProgressTracker
from table_format.maintenance.results import CompactResult, ExpireResult, OrphanCleanResult, RescaleResult
from table_format.store.file_store import FileStore
from table_format.write.compact_task import CompactOutcome, CompactTask, picked_files


class MaintenanceActions:
    """Maintenance of one table. Destructive operations default to ``dry_run=True``.

    Each operation is also offered as a plan / run / commit seam for distributed runs (jobs.spark): the driver
    plans picklable work units, any process runs them with a pickled copy of the table, the driver commits once.
    The local operations are exactly these steps run in one process.
    """

    def __init__(self, store: FileStore, *, on_schema_change: Callable[[FileStore], None] | None = None) -> None:
        self.store = store
        self._on_schema_change = on_schema_change

    def compact(self, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None,
                progress: ProgressCallback | None = None) -> CompactResult:
        """Compact the table (or some partitions): universal compaction per bucket, or all to the max level.

        Commits one COMPACT snapshot; Java Paimon reads the result as before. Then, like a dedicated compaction job
        of Paimon (which runs with ``write-only=false``), the maintenance after a commit runs (post_commit.py).
        ``progress`` (all maintenance operations): called with a ProgressEvent as the work goes (progress.py);
        here after each bucket, counting the bucket's files and bytes.
        """
        tasks = self.plan_compaction(full=full, partitions=partitions)
        tracker = ProgressTracker(progress, "compact", files_total=sum(len(t.files) for t in tasks),
                                  bytes_total=sum(f.file_size for t in tasks for f in t.files))
        outcomes: list[CompactOutcome] = []
        try:
            for task in tasks:
                outcomes.append(self.run_compaction_task(task))
                tracker.advance(len(task.files), sum(f.file_size for f in task.files))
        except BaseException:
            self.abort_compaction(outcomes)
            raise
        return self.commit_compaction(outcomes)

    def plan_compaction(self, *, full: bool = False,
                        partitions: Sequence[Mapping[str, Any]] | None = None) -> list[CompactTask]:
        """One picklable task per (partition, bucket) of the latest snapshot; `task.files` tells its size."""
        return _compact.plan_compaction(self.store.latest(), full=full, partitions=partitions)

    def compaction_input_bytes(self, tasks: Sequence[CompactTask]) -> int:
        """The bytes the tasks would rewrite: the files each one's compaction picks (none of a bucket with nothing
        to do), read from metadata alone; e.g. to choose where to run them."""
        store = self.store.latest()
        return sum(f.file_size for task in tasks for f in picked_files(store, task))

    def run_compaction_task(self, task: CompactTask) -> CompactOutcome:
        """Compact one bucket (any process): write the new files, return the commit message; commits nothing."""
        return _compact.run_compact_task(self.store.latest(), task)  # rewritten files take the latest schema

    def abort_compaction(self, outcomes: Sequence[CompactOutcome]) -> None:
        """Delete the files of outcomes that will not be committed."""
        _compact.abort_compaction(self.store, outcomes)

    def commit_compaction(self, outcomes: Sequence[CompactOutcome]) -> CompactResult:
        """One COMPACT snapshot of all outcomes, then the maintenance after a commit (write-only = false)."""
        try:
            store = self.store.latest()
            post_commit = PostCommitMaintenance(store, commit_user=str(uuid.uuid4()), write_only=False)
        except BaseException:
            self.abort_compaction(outcomes)
            raise
        result = _compact.commit_compaction(store, outcomes)
        post_commit.run()
        return result

    def rescale(self, *, bucket: int, partitions: Sequence[Mapping[str, Any]] | None = None,
                progress: ProgressCallback | None = None) -> RescaleResult:
        """Set the table's bucket count to `bucket` and rewrite the given partitions (default all) with it.

        ``progress`` hears of each partition rewritten, counting the files (and bytes) it read.
        """
        tasks = self.plan_rescale(bucket=bucket, partitions=partitions)
        sizes = _rescale.partition_sizes(self.store, tasks) if progress is not None else {}
        tracker = ProgressTracker(progress, "rescale", files_total=sum(f for f, _ in sizes.values()),
                                  bytes_total=sum(b for _, b in sizes.values()))
        outcomes: list[_rescale.RescaleOutcome] = []
        try:
            for task in tasks:
                outcomes.append(self.run_rescale_task(task))
                tracker.advance(*sizes.get(task.partition, (0, 0)))
        except BaseException:
            self.abort_rescale(outcomes)
            raise
        return self.commit_rescale(tasks, outcomes)

    def plan_rescale(self, *, bucket: int,
                     partitions: Sequence[Mapping[str, Any]] | None = None) -> list[_rescale.RescaleTask]:
        """Commit the schema version with the new bucket count (this table adopts it), one task per partition."""
        tasks, new_store = _rescale.plan_rescale(self.store, bucket=bucket, partitions=partitions)
        if new_store is not self.store:
            self.store = new_store
            if self._on_schema_change is not None:
                self._on_schema_change(new_store)
        return tasks

    def run_rescale_task(self, task: _rescale.RescaleTask) -> _rescale.RescaleOutcome:
        """Rewrite one partition with the new bucket count (any process, after plan_rescale); commits nothing."""
        return _rescale.run_rescale_task(self.store, task)

    def abort_rescale(self, outcomes: Sequence[_rescale.RescaleOutcome]) -> None:
        """Delete the files of outcomes that will not be committed."""
        _rescale.abort_rescale(self.store, outcomes)

    def commit_rescale(self, tasks: Sequence[_rescale.RescaleTask],
                       outcomes: Sequence[_rescale.RescaleOutcome]) -> RescaleResult:
        """One OVERWRITE snapshot of the rewritten partitions, then the maintenance after a commit."""
        try:
            post_commit = PostCommitMaintenance(self.store, commit_user=str(uuid.uuid4()))
        except BaseException:
            self.abort_rescale(outcomes)
            raise
        result = _rescale.commit_rescale(self.store, tasks, outcomes)
        post_commit.run(self.store)
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
        ``progress`` hears of each file deleted (or checked, in a dry run); sizes are not known.
        """
        return _expire.expire_snapshots(self.store, retain_min=retain_min, retain_max=retain_max,
                                        older_than=older_than, max_deletes=max_deletes, dry_run=dry_run,
                                        progress=progress)

    def plan_snapshot_expiration(
        self,
        *,
        retain_min: int | None = None,
        retain_max: int | None = None,
        older_than: _dt.datetime | _dt.timedelta | None = None,
        max_deletes: int | None = None,
    ) -> _expire.ExpirePlan:
        """The snapshots that expire and the files that go with them, in deletion order; changes nothing."""
        return _expire.plan_expiration(self.store, retain_min=retain_min, retain_max=retain_max,
                                       older_than=older_than, max_deletes=max_deletes)

    def expirable_without_consumers(self) -> range:
        """The snapshot ids the table's retention options would expire now if no consumer pinned any."""
        return _expire.expirable_without_consumers(self.store)

    def delete_expired_snapshot_files(self, plan: _expire.ExpirePlan) -> list[str]:
        """Delete the plan's snapshot files, oldest first (before any other file of the plan)."""
        return _expire.delete_snapshot_files(self.store, plan)

    def delete_paths(self, paths: Sequence[str], *, dry_run: bool) -> list[str]:
        """Delete paths in order (any process); a dry run reports the existing ones. Returns what is gone."""
        return execute(self.store, paths, dry_run=dry_run)

    def finish_snapshot_expiration(self, plan: _expire.ExpirePlan, deleted: Sequence[str], *,
                                   dry_run: bool) -> ExpireResult:
        """After the plan's files are gone: empty directories (by option), the EARLIEST hint, the result."""
        return _expire.finish_expiration(self.store, plan, deleted, dry_run=dry_run)

    def remove_orphan_files(
        self, *, older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1), dry_run: bool = True,
        progress: ProgressCallback | None = None,
    ) -> OrphanCleanResult:
        """Delete files older than ``older_than`` that no snapshot, tag or changelog references, and abort the
        multipart uploads in progress under the table started before it (object stores: crashed writers').

        ``progress`` hears of each orphan file deleted (at once for a dry run), with the files' sizes.
        """
        return _orphans.remove_orphan_files(self.store, older_than=older_than, dry_run=dry_run, progress=progress)

    def plan_orphan_clean(
        self, *, older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1)
    ) -> _orphans.OrphanCleanPlan:
        """The cut-off, stray metadata files, and the directories whose files are candidates (`candidate_dirs`)."""
        return _orphans.plan_orphan_clean(self.store, older_than=older_than)

    def list_orphan_candidates(self, plan: _orphans.OrphanCleanPlan, directory: str) -> list[FileStatus]:
        """The files of one candidate directory older than the cut-off (any process)."""
        return _orphans.list_candidates(self.store, plan, directory)

    def used_file_names(self, plan: _orphans.OrphanCleanPlan) -> set[str]:
        """Every file name referenced by a snapshot, tag or changelog: read after listing the candidates."""
        return _orphans.used_file_names(self.store, plan)

    def delete_orphans(self, files: Sequence[FileStatus], *, dry_run: bool) -> list[FileStatus]:
        """Delete orphan files (any process); returns those gone (a dry run: all)."""
        return _orphans.delete_files(self.store, files, dry_run=dry_run)

    def finish_orphan_clean(self, plan: _orphans.OrphanCleanPlan, orphans: Sequence[FileStatus],
                            deleted: Sequence[FileStatus], *, dry_run: bool) -> OrphanCleanResult:
        """Remove emptied data directories; the result."""
        return _orphans.finish_orphan_clean(self.store, plan, orphans, deleted, dry_run=dry_run)
