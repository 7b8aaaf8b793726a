"""The maintenance Paimon 0.9 runs after every commit: consumers, snapshots, partitions and tags expire, tags appear.

Mirrors org.apache.paimon.table.sink.TableCommitImpl#expire as AbstractFileStoreTable#newCommit wires it, plus the
Flink batch sink's BatchWriteGeneratorTagOperator:

1. ``consumer.expiration-time``: consumer files not modified for that long are deleted (ConsumerManager.expire),
   first, so that they stop protecting snapshots. This runs on write-only tables too (as in Java).
2. unless ``write-only``: snapshot expiration by the table options (ExpireSnapshotsImpl.expire: ``snapshot.
   num-retained.min`` 10, ``snapshot.num-retained.max`` unbounded, ``snapshot.time-retained`` 1 h, ``snapshot.
   expire.limit`` 10). ``snapshot.expire.execution-mode = async`` is run synchronously here (same outcome).
   As in expire.py, time-retained looks at a snapshot's successor (later Paimon's rule; 0.9 looked at the snapshot
   itself), so at the time boundary one more snapshot may be kept than 0.9 keeps.
3. unless ``write-only``: partition expiration (PartitionExpire) when ``partition.expiration-time`` is set on a
   partitioned table. Like Java, the ``partition.expiration-check-interval`` (1 h) counts from when the committer
   was built, i.e. from the start of this commit: a commit checks only when the interval is zero or has passed
   while it committed, or with ``end-input.check-partition-expire`` (every commit here is a batch commit).
4. unless ``write-only``: ``tag.automatic-creation`` = ``process-time`` / ``watermark`` (TagAutoCreation), then
   tags whose ``tagTimeRetained`` has passed are deleted (TagTimeExpire).
5. ``tag.automatic-creation = batch``: the batch-write tag of the latest snapshot (what a Flink batch job does when
   it finishes; Java's TableCommitImpl itself creates no batch tag).

Steps 1-4 stop at the first error, which is logged and reported, never raised: the commit has landed and its
snapshot id stands. Option errors are raised by the constructor, before the commit, as Java does when it builds
the committer; so are options this implementation cannot honour (decoupled changelog retention,
``changelog.num-retained.*``/``changelog.time-retained`` longer than the snapshots': UnsupportedFeatureError). Every step is safe against concurrent writers and expirers.
"""

from __future__ import annotations

import datetime as _dt
import logging
from dataclasses import dataclass, field

from table_format.errors import OptionError, UnsupportedFeatureError
from table_format.maintenance.expire import check_expire_options, expire_consumers, expire_snapshots
from table_format.maintenance.partition_expire import PartitionTimeExtractor, expire_partitions
from table_format.maintenance.tag_auto import TagAutoCreation, batch_write_tag, expire_tags_by_time
from table_format.options import PartitionExpireStrategy, TagCreationMode
from table_format.store.file_store import FileStore

__all__ = ["PostCommitMaintenance", "PostCommitResult"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PostCommitResult:
    """What the maintenance after one commit did; `error` names the failure that stopped it (None: all ran)."""

    expired_consumers: tuple[str, ...] = ()
    expired_snapshots: tuple[int, ...] = ()
    expired_partitions: tuple[dict[str, str], ...] = ()
    created_tags: tuple[str, ...] = ()
    deleted_tags: tuple[str, ...] = ()
    error: str | None = None


@dataclass
class _Progress:
    consumers: tuple[str, ...] = ()
    snapshots: tuple[int, ...] = ()
    partitions: tuple[dict[str, str], ...] = ()
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class PostCommitMaintenance:
    """Built before a commit (validates the options, starts the partition check interval), run after it."""

    def __init__(self, store: FileStore, *, commit_user: str, write_only: bool | None = None) -> None:
        """`write_only` overrides the table option (dedicated compaction runs with write-only=false, as in Java)."""
        self.store = store
        self.commit_user = commit_user
        self.write_only = store.options.write_only if write_only is None else write_only
        self._last_partition_check = _dt.datetime.now()
        try:
            self.options = store.options.post_commit()
            if not self.write_only:
                self._validate()
        except (OptionError, UnsupportedFeatureError) as e:
            if str(e).startswith("table "):
                raise
            raise type(e)(f"table {store.identifier!r}: {e}") from None

    def _validate(self) -> None:
        store, opts = self.store, self.options
        check_expire_options(store)
        if (opts.partition_expiration_time is not None and store.schema.partition_keys
                and opts.partition_expiration_strategy == PartitionExpireStrategy.VALUES_TIME):
            PartitionTimeExtractor(pattern=opts.partition_timestamp_pattern,
                                   formatter=opts.partition_timestamp_formatter)
        if opts.tag_automatic_creation in (TagCreationMode.PROCESS_TIME, TagCreationMode.WATERMARK):
            TagAutoCreation.validate(opts)

    def run(self, store: FileStore | None = None) -> PostCommitResult:
        """Run the chain on `store` (default: the one it was built with); never raises an Exception."""
        store = store or self.store
        progress = _Progress()
        try:
            self._expire(store, progress)
        except Exception as e:
            log.warning("table %r: the maintenance after the commit failed (the commit itself succeeded): %s",
                        store.identifier, e, exc_info=True)
            progress.errors.append(f"{type(e).__name__}: {e}")
        if self.options.tag_automatic_creation == TagCreationMode.BATCH:
            try:
                created, deleted = batch_write_tag(store, self.options)
                progress.created += created
                progress.deleted += deleted
            except Exception as e:
                log.warning("table %r: creating the batch-write tag after the commit failed: %s",
                            store.identifier, e, exc_info=True)
                progress.errors.append(f"{type(e).__name__}: {e}")
        return PostCommitResult(
            expired_consumers=progress.consumers,
            expired_snapshots=progress.snapshots,
            expired_partitions=progress.partitions,
            created_tags=tuple(progress.created),
            deleted_tags=tuple(progress.deleted),
            error="; ".join(progress.errors) or None,
        )

    def _expire(self, store: FileStore, progress: _Progress) -> None:
        """TableCommitImpl#expire: consumers, snapshots, partitions, tags; the first error stops it."""
        opts = self.options
        if opts.consumer_expiration_time is not None:
            progress.consumers = expire_consumers(
                store, older_than=_dt.datetime.now() - opts.consumer_expiration_time)
        if self.write_only:
            return
        progress.snapshots = expire_snapshots(store, dry_run=False).expired_snapshots
        if opts.partition_expiration_time is not None and store.schema.partition_keys:
            now = _dt.datetime.now()
            interval = opts.partition_expiration_check_interval
            if (not interval or now > self._last_partition_check + interval
                    or opts.end_input_check_partition_expire):
                result = expire_partitions(
                    store,
                    expiration_time=opts.partition_expiration_time,
                    strategy=opts.partition_expiration_strategy,
                    timestamp_pattern=opts.partition_timestamp_pattern,
                    timestamp_formatter=opts.partition_timestamp_formatter,
                    commit_user=self.commit_user,
                    now=now,
                    dry_run=False,
                )
                self._last_partition_check = now
                progress.partitions = result.expired_partitions
        if opts.tag_automatic_creation in (TagCreationMode.PROCESS_TIME, TagCreationMode.WATERMARK):
            creation = TagAutoCreation(store, opts)
            try:
                creation.run()
            finally:
                progress.created += creation.created
                progress.deleted += creation.deleted
        progress.deleted += expire_tags_by_time(store)
