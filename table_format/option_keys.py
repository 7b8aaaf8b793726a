"""The table option keys Apache Paimon knows, so that a typo is refused at create/alter time instead of stored.

Java Paimon stores any key it is given and silently ignores the ones it does not know, so `{"buckett": "4"}` gives
a table with the default bucket. Here a key must be one Paimon knows. The lists are facts gathered from Paimon's
option classes (CoreOptions with its fallback keys, FlinkConnectorOptions, SparkConnectorOptions, IcebergOptions,
HiveConnectorOptions, the global-index options) at releases 0.4 to 2.0, so tables configured for newer Paimon keep
their options; plus the key families Paimon builds from a column, class, index or file format name (`PATTERNS`).
Loading a table never checks its keys: another engine's table always opens.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

from table_format.errors import OptionError


def _words(text: str) -> list[str]:
    return text.split()


# known to Paimon 0.4 to 0.8 and gone by 0.9 (Java 0.9 still stores them)
_KEYS_BEFORE_0_9 = _words("""
orc.bloom.filter.columns orc.bloom.filter.fpp orc.column.encoding.direct orc.dictionary.key.threshold
sequence.auto-padding streaming-compact streaming-read-atomic write-mode
""")

# Paimon 0.9, the version this library writes
_KEYS_0_9 = _words("""
async-file-write auto-create branch bucket bucket-key cache-page-size changelog-producer
changelog-producer.compaction-interval changelog-producer.lookup-wait changelog-producer.row-deduplicate
changelog.num-retained.max changelog.num-retained.min changelog.time-retained commit.callbacks
commit.force-compact commit.force-create-snapshot commit.user-prefix compaction.early-max.file-num
compaction.max-size-amplification-percent compaction.max.file-num compaction.min.file-num
compaction.optimization-interval compaction.size-ratio consumer-id consumer.expiration-time
consumer.ignore-progress consumer.mode continuous.discovery-interval
cross-partition-upsert.bootstrap-parallelism cross-partition-upsert.index-ttl deduplicate.ignore-delete
delete-file.thread-num delete.force-produce-changelog deletion-vector.index-file.target-size
deletion-vectors.enabled dynamic-bucket.assigner-parallelism dynamic-bucket.initial-buckets
dynamic-bucket.target-row-num dynamic-partition-overwrite end-input.check-partition-expire end-input.watermark
fields.default-aggregate-function file-index.in-manifest-threshold file-index.read.enabled
file-reader-async-threshold file.block-size file.compression file.compression.per.level
file.compression.zstd-level file.format file.format.per.level first-row.ignore-delete force-lookup
full-compaction.delta-commits ignore-delete incremental-between incremental-between-scan-mode
incremental-between-timestamp local-merge-buffer-size local-sort.max-num-file-handles log.changelog-mode
log.consistency log.format log.key.format log.scan log.scan.remove-normalize log.scan.timestamp-millis
log.system log.system.partitions log.system.replication lookup-wait lookup.async lookup.async-thread-number
lookup.bootstrap-parallelism lookup.cache lookup.cache-file-retention lookup.cache-max-disk-size
lookup.cache-max-memory-size lookup.cache-spill-compression lookup.cache.bloom.filter.enabled
lookup.cache.bloom.filter.fpp lookup.dynamic-partition lookup.dynamic-partition.refresh-interval
lookup.hash-load-factor lookup.local-file-type lookup.refresh.async lookup.refresh.async.pending-snapshot-count
manifest.compression manifest.format manifest.full-compaction-threshold-size manifest.merge-min-count
manifest.target-file-size merge-engine metadata.iceberg-compatible metadata.stats-mode
metastore.partitioned-table metastore.tag-to-partition metastore.tag-to-partition.preview num-levels
num-sorted-run.compaction-trigger num-sorted-run.stop-trigger page-size parquet.enable.dictionary
partial-update.ignore-delete partial-update.remove-record-on-delete partition partition.default-name
partition.end-input-to-done partition.expiration-check-interval partition.expiration-strategy
partition.expiration-time partition.idle-time-to-done partition.mark-done-action partition.time-interval
partition.timestamp-formatter partition.timestamp-pattern path primary-key read.batch-size read.changelog
read.stream.maxBytesPerTrigger read.stream.maxFilesPerTrigger read.stream.maxRowsPerTrigger
read.stream.maxTriggerDelayMs read.stream.minRowsPerTrigger record-level.expire-time record-level.time-field
record-level.time-field-type rowkind.field scan.bounded.watermark scan.fallback-branch
scan.file-creation-time-millis scan.infer-parallelism scan.infer-parallelism.max scan.manifest.parallelism
scan.max-splits-per-task scan.mode scan.parallelism scan.plan-sort-partition scan.push-down
scan.remove-normalize scan.snapshot-id scan.split-enumerator.batch-size scan.split-enumerator.mode scan.tag-name
scan.timestamp scan.timestamp-millis scan.version scan.watermark scan.watermark.alignment.group
scan.watermark.alignment.max-drift scan.watermark.alignment.update-interval scan.watermark.emit.strategy
scan.watermark.idle-timeout sequence.field sink.clustering.by-columns sink.clustering.sample-factor
sink.clustering.sort-in-cluster sink.clustering.strategy sink.committer-cpu sink.committer-memory
sink.committer-operator-chaining sink.cross-partition.managed-memory sink.managed.writer-buffer-memory
sink.parallelism sink.savepoint.auto-tag sink.use-managed-memory-allocator sink.watermark-time-zone
snapshot.clean-empty-directories snapshot.expire.clean-empty-directories snapshot.expire.execution-mode
snapshot.expire.limit snapshot.num-retained.max snapshot.num-retained.min snapshot.time-retained
snapshot.watermark-idle-timeout sort-compaction.local-sample.magnification sort-compaction.range-strategy
sort-engine sort-spill-buffer-size sort-spill-threshold source.checkpoint-align.enabled
source.checkpoint-align.timeout source.split.open-file-cost source.split.target-size spill-compression
spill-compression.zstd-level stream-scan-mode streaming-read-mode streaming-read-overwrite
streaming-read.shuffle-bucket-with-partition streaming.read.snapshot.delay tag.automatic-completion
tag.automatic-creation tag.callbacks tag.creation-delay tag.creation-period tag.default-time-retained
tag.num-retained-max tag.period-formatter target-file-size unaware-bucket.compaction.parallelism
write-buffer-for-append write-buffer-size write-buffer-spill.max-disk-size write-buffer-spillable
write-manifest-cache write-max-writers-to-spill write-only write.compaction-skip write.merge-schema
write.merge-schema.explicit-cast zorder.var-length-contribution
""")

# added in Paimon 1.0
_KEYS_1_0 = _words("""
changelog-file.prefix changelog-producer.row-deduplicate-ignore-fields changelog.precommit-compact
commit.max-retries commit.timeout data-file.path-directory data-file.prefix data-file.thin-mode
file.suffix.include.compression lookup.cache.high-priority-pool-ratio lookup.refresh.time-periods-blacklist
manifest.delete-file-drop-stats materialized-table.definition-query materialized-table.interval-freshness
materialized-table.interval-freshness.time-unit materialized-table.logical-refresh-mode
materialized-table.refresh-handler-bytes materialized-table.refresh-handler-description
materialized-table.refresh-mode materialized-table.refresh-status metadata.iceberg.compaction.max.file-num
metadata.iceberg.compaction.min.file-num metadata.iceberg.hadoop-conf-dir metadata.iceberg.hive-client-class
metadata.iceberg.hive-conf-dir metadata.iceberg.manifest-compression metadata.iceberg.manifest-legacy-version
metadata.iceberg.storage metadata.iceberg.uri metadata.stats-dense-store object-location orc.write.batch-size
partial-update.remove-record-on-sequence-group partition.expiration-max-num
partition.idle-time-to-report-statistic partition.legacy-name sequence.field.sort-order sink.operator-uid.suffix
source.operator-uid.suffix type write.batch-size
""")

# added in Paimon 1.1
_KEYS_1_1 = _words("""
aggregation.remove-record-on-delete changelog-file.compression changelog-file.format changelog-file.stats-mode
changelog.precommit-compact.buffer-size changelog.precommit-compact.thread-num compaction.force-up-level-0
data-file.external-paths data-file.external-paths.specific-fs data-file.external-paths.strategy
dynamic-bucket.max-buckets incremental-to-auto-tag log.ignore-delete lookup-compact lookup-compact.max-interval
metadata.iceberg.database metadata.iceberg.delete-after-commit.enabled metadata.iceberg.glue.skip-archive
metadata.iceberg.previous-versions-max metadata.iceberg.table metadata.stats-mode.per.level
partition.mark-done-action.custom.class partition.mark-done-action.http.params
partition.mark-done-action.http.timeout partition.mark-done-action.http.url partition.mark-done-action.mode
partition.sink-strategy postpone.default-bucket-num precommit-compact requiredSparkConfsCheck.enabled
scan.bounded scan.partitions tag.batch.customized-name tag.create-success-file tag.creation-period-duration
""")

# added in Paimon 1.2
_KEYS_1_2 = _words("""
alter-column-null-to-not-null.disabled commit.custom-listeners commit.strict-mode.last-safe-snapshot
compaction.delete-ratio-threshold compaction.force-rewrite-all-files deletion-vectors.bitmap64
disable-explicit-type-casting metadata.iceberg.format-version metadata.iceberg.hive-skip-update-stats
metadata.iceberg.storage-location metadata.stats-keep-first-n-columns partition.expiration-batch-size
partition.mark-done.recover-from-state query-auth.enabled read.shuffle-bucket-with-partition
scan.creation-time-millis scan.dedicated-split-generation scan.max-snapshot.count sink.writer-cpu
sink.writer-memory streaming-read-append-overwrite write.use-v2-write
""")

# added in Paimon 1.3
_KEYS_1_3 = _words("""
batch-scan-mode bucket-append-ordered bucket-function.type clustering.columns
clustering.history-partition.idle-to-full-sort clustering.history-partition.limit clustering.incremental
clustering.strategy commit.max-retry-wait commit.min-retry-wait compaction.offpeak-ratio
compaction.offpeak.end.hour compaction.offpeak.start.hour compaction.total-size-threshold data-evolution.enabled
file-operation.thread-num filesystem.job-level-settings.enabled ignore-update-before index-file-in-data-file-dir
lookup.merge-buffer-size lookup.merge-records-threshold paimon.respect.minmaxsplitsize.enabled
paimon.split.openfilecost row-tracking.enabled sink.process-time-zone sink.writer-coordinator.cache-memory
sink.writer-coordinator.enabled sink.writer-coordinator.page-size sink.writer-refresh-detectors
snapshot.ignore-empty-commit upsert-key write.batch-memory
""")

# added in Paimon 1.4
_KEYS_1_4 = _words("""
add-column-before-partition blob-as-descriptor blob-descriptor-field blob-descriptor.source-table
blob-external-storage-field blob-external-storage-path blob-field blob.split-by-file-size
blob.stored-descriptor-fields blob.target-file-size btree-index.block-size btree-index.build.max-parallelism
btree-index.cache-size btree-index.compression btree-index.compression-level
btree-index.high-priority-pool-ratio btree-index.records-per-range chain-table.chain-partition-keys
chain-table.enabled clustering.incremental.mode clustering.incremental.optimize-write
commit.discard-duplicate-files compaction.file-num-limit compaction.incremental-size-threshold
consumer.changelog-only data-file.external-paths.weights deletion-vectors.modifiable
format-table.commit-hive-sync-url format-table.file.compression format-table.implementation
format-table.partition-path-only-value global-index.build.max-parallelism global-index.build.max-shard
global-index.column-update-action global-index.enabled global-index.external-path
global-index.row-count-per-shard global-index.thread-num incremental-between-tag-to-snapshot
key-value.sequence_number.enabled lookup.dynamic-partition.refresh.async lookup.refresh.full-load-threshold
lookup.remote-file.enabled lookup.remote-file.level-threshold lumina.diskann.build.ef_construction
lumina.diskann.build.neighbor_count lumina.diskann.build.thread_count lumina.diskann.search.beam_width
lumina.diskann.search.list_size lumina.distance.metric lumina.encoding.pq.m lumina.encoding.type
lumina.index.dimension lumina.index.type lumina.pretrain.sample_ratio lumina.search.parallel_number
overwrite-upgrade parquet.variant.shreddingSchema partition.timestamp-format.strict pk-clustering-override
postpone.batch-write-fixed-bucket postpone.batch-write-fixed-bucket.max-parallelism read.allow.fullScan
scan.fallback-delta-branch scan.fallback-snapshot-branch scan.ignore-corrupt-files scan.ignore-lost-files
scan.primary-branch source.split.target-size-with-column-pruning table-read.sequence-number.enabled
tag.time-expire-enabled variant.inferShreddingSchema variant.shredding.maxInferBufferRow
variant.shredding.maxSchemaDepth variant.shredding.maxSchemaWidth variant.shredding.minFieldCardinalityRatio
variant.shreddingSchema vector-field vector.file.format vector.target-file-size
visibility-callback.check-interval visibility-callback.enabled visibility-callback.timeout
""")

# added in Paimon 2.0
_KEYS_2_0 = _words("""
bitmap-index.compression bitmap-index.compression-level bitmap-index.dictionary-block-size
bitmap-index.fallback-scan-max-size blob-compaction.enabled blob-view-field blob-view.resolve.enabled
blob-write-null-on-fetch-failure blob-write-null-on-missing-file blob.copy-buffer-size
btree-index.fallback-scan-max-size chain-table.split.key-range-enabled chain-table.streaming.merge-snapshot
compaction.bucket-distribution-strategy compaction.skip-expired-partitions compaction.small-file-ratio
data-evolution.compaction.rewrite-row-ids data-evolution.merge-into.file-pruning
data-evolution.merge-into.source-persist data-evolution.reassign.skip-contiguous-row-count
data-evolution.row-id-conflict-rewrite.max-size data-evolution.row-sidecar.enabled
data-evolution.row-sidecar.max-selected-rows data-evolution.row-sidecar.max-selection-ratio
deletion-vectors.merge-on-read format-table.scan.list-parallelism full-text-index.search-mode
global-index.search-mode legacy-timestamp-mapping.enabled local-kv-db.block-size lookup.blob-as-descriptor
lookup.cache-rows lookup.continuous.discovery-interval manifest-sort.enabled manifest-sort.max-rewrite-size
manifest-sort.partition-field pk-bitmap.index.columns pk-btree.index.columns pk-full-text.index.columns
pk-vector.index.columns postpone.merge-on-read postpone.target-row-num-per-bucket
postpone.target-size-per-bucket row-tracking.partition-group-on-commit scalar-index.search-mode scan.bucket
scan.fallback-branch.read-fail-fast scan.plan-auto-tag-for-read.time-retained sequence.snapshot-ordering
sink.coordinator-commit.enabled sink.key-only-deletes.enabled sink.writer-coordinator.cache-expire-after-access
sink.writer-coordinator.cache-soft-values sink.writer-coordinator.prefetch-manifests
sorted-index.build.max-parallelism sorted-index.records-per-range target-file-row-num unaware-bucket.no-shuffle
variant.shredding.adaptive.maxInferBufferRow variant.shredding.adaptive.retentionRatio
variant.shredding.inferenceMode vector-index.search-mode vector-search.distribute.enabled
vector-search.lateral-join.batch-size vector-search.lateral-join.parallelism
write.data-evolution.update-conflict-retry.max-attempts write.data-evolution.update-conflict-retry.wait-ms
write.merge-schema.type-widening write.sequence-number-init-mode
""")

KNOWN_KEYS: frozenset[str] = frozenset(
    _KEYS_BEFORE_0_9 + _KEYS_0_9 + _KEYS_1_0 + _KEYS_1_1 + _KEYS_1_2 + _KEYS_1_3 + _KEYS_1_4 + _KEYS_2_0
)

FIELDS_PREFIX = "fields."

# fields.<col>[,<col>...].<suffix>: the per-column options (CoreOptions, PartialUpdateMergeFunction's
# sequence-group, StatsCollectorFactories' stats-mode, 2.0's map layouts and vector-index options)
FIELD_SUFFIXES: frozenset[str] = frozenset(_words("""
aggregate-function ignore-retract nested-key nested-key-null-strategy nested-sequence-field count-limit distinct
list-agg-delimiter ts-field sequence-group stats-mode default-value map.storage-layout
map.shared-shredding.max-columns map.shared-shredding.column-placement-policy
pk-vector.index.type pk-vector.index.options pk-vector.distance.metric pk-full-text.index.options
index-type distance.metric metric refine_factor refine-factor rerank_factor rerank-factor
index.dimension index.type encoding.type pretrain.sample_ratio diskann.build.ef_construction
diskann.build.neighbor_count diskann.build.thread_count diskann.search.list_size diskann.search.beam_width
encoding.pq.m search.parallel_number
"""))

_COMMON_FIELD_SUFFIXES = ("aggregate-function", "ignore-retract", "sequence-group", "default-value", "nested-key")

_FILE_INDEX_KEYS = tuple(f"file-index.{t}.columns" for t in ("bloom-filter", "bitmap", "bsi", "range-bitmap"))

# file formats receive every table option under their name (FileFormat's format options): parquet.block.size, ...
FORMAT_PREFIXES = ("parquet.", "orc.", "avro.", "csv.", "json.", "text.", "mosaic.")

# keys built from a class, index type or column name
PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"^(commit|tag)\.callback\.[^.].*\.param$"),  # <commit|tag>.callback.<class>.param
    re.compile(r"^file-index\.[^.]+\.columns$"),  # file-index.<index type>.columns
    re.compile(r"^file-index\.[^.]+\.[^.]+\.[^.].*$"),  # file-index.<index type>.<column>.<option>
    re.compile(r"^global-index\.[^.]+\.fields\.[^.]+\.[^.].*$"),  # global-index.<index>.fields.<column>.<option>
)


def check_option_keys(options: Mapping[str, str], *, table: str, columns: Sequence[str]) -> None:
    """Refuse (OptionError naming the table and the key) any key Paimon does not know, with the closest known key
    suggested, and any `fields.<col>.*` key naming a column the table lacks. Values are checked elsewhere."""
    for key in options:
        key = str(key)
        if key in KNOWN_KEYS or key.startswith(FORMAT_PREFIXES) or any(p.match(key) for p in PATTERNS):
            continue
        if key.startswith(FIELDS_PREFIX):
            _check_field_key(key, table=table, columns=columns)
            continue
        raise OptionError(f"unknown option {key!r} for table {table}; {_suggestion(key, columns)}")


def _check_field_key(key: str, *, table: str, columns: Sequence[str]) -> None:
    """fields.<cols>.<suffix>, split like Java's SchemaValidation (the columns are the second dot segment)."""
    names, _, suffix = key[len(FIELDS_PREFIX):].partition(".")
    missing = [n for n in names.split(",") if n not in columns]
    if missing:
        raise OptionError(
            f"option {key!r} for table {table} names {missing}, which are not columns (columns: {list(columns)})"
        )
    if suffix not in FIELD_SUFFIXES:
        close = difflib.get_close_matches(suffix, sorted(FIELD_SUFFIXES), n=1)
        hint = f"did you mean {FIELDS_PREFIX + names + '.' + close[0]!r}?" if close else (
            f"per-column options are fields.<column>.<{'|'.join(sorted(_COMMON_FIELD_SUFFIXES))}>"
        )
        raise OptionError(f"unknown option {key!r} for table {table}; {hint}")


def _suggestion(key: str, columns: Sequence[str]) -> str:
    lowered = {k.lower(): k for k in KNOWN_KEYS}
    if key.lower() in lowered:
        return f"did you mean {lowered[key.lower()]!r}?"
    candidates = [*sorted(KNOWN_KEYS), *_FILE_INDEX_KEYS,
                  *(f"{FIELDS_PREFIX}{c}.{s}" for c in columns for s in _COMMON_FIELD_SUFFIXES)]
    close = difflib.get_close_matches(key, candidates, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return "Paimon has no table option of that name (the known keys: table_format.option_keys.KNOWN_KEYS)"
