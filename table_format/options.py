"""Table options (CoreOptions): Paimon's option names and defaults, parsed once from dict[str, str].

Mirrors org.apache.paimon.CoreOptions for the options this implementation acts on. Unknown keys are
kept (Paimon ignores them too) so that tables written by Java keep their options on rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum

from table_format.errors import OptionError
from table_format.option_keys import check_option_keys as check_option_keys  # re-exported for alter_table

_SIZE_RE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")
_SIZE_UNITS = {
    "": 1, "b": 1, "bytes": 1,
    "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
    "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
}
_DURATION_RE = re.compile(r"^\s*(\d+)\s*([a-zA-Z]*)\s*$")
_DURATION_UNITS = {
    "": 1e-3, "ms": 1e-3, "milli": 1e-3, "millis": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "min": 60, "mins": 60, "minute": 60, "minutes": 60, "m": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}


def parse_memory_size(text: str, *, option: str) -> int:
    """'128 mb' -> bytes (MemorySize.parse)."""
    m = _SIZE_RE.match(text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise OptionError(f"option {option!r}: {text!r} is not a memory size (e.g. '128 mb')")
    return int(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]


def parse_duration(text: str, *, option: str) -> timedelta:
    """'1 h' / '30 min' / '5000' (ms) -> timedelta (TimeUtils.parseDuration)."""
    m = _DURATION_RE.match(text)
    if not m or m.group(2).lower() not in _DURATION_UNITS:
        raise OptionError(f"option {option!r}: {text!r} is not a duration (e.g. '1 h', '30 min')")
    return timedelta(seconds=int(m.group(1)) * _DURATION_UNITS[m.group(2).lower()])


class MergeEngine(str, Enum):
    DEDUPLICATE = "deduplicate"
    PARTIAL_UPDATE = "partial-update"
    AGGREGATION = "aggregation"
    FIRST_ROW = "first-row"


class ChangelogProducer(str, Enum):
    NONE = "none"
    INPUT = "input"
    FULL_COMPACTION = "full-compaction"
    LOOKUP = "lookup"


class BucketMode(str, Enum):
    """How rows are assigned to buckets (BucketMode)."""

    FIXED = "fixed"  # bucket > 0 (HASH_FIXED)
    DYNAMIC = "dynamic"  # bucket = -1 on a primary-key table (HASH_DYNAMIC)
    UNAWARE = "unaware"  # bucket = -1 on an append table (BUCKET_UNAWARE)


_FILE_FORMATS = ("parquet", "orc", "avro")


def _enum(cls: type[Enum], raw: str, option: str) -> Enum:
    try:
        return cls(raw.strip().lower())
    except ValueError:
        allowed = ", ".join(str(e.value) for e in cls)
        raise OptionError(f"option {option!r}: {raw!r} is not one of {allowed}") from None


def _int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        return int(str(raw).strip())
    except ValueError:
        raise OptionError(f"option {key!r}: {raw!r} is not an integer") from None


def _positive(value: int, key: str) -> int:
    if value <= 0:
        raise OptionError(f"option {key!r}: {value} must be positive")
    return value


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    low = str(raw).strip().lower()
    if low not in ("true", "false"):
        raise OptionError(f"option {key!r}: {raw!r} is not true or false")
    return low == "true"


@dataclass(frozen=True, slots=True)
class CoreOptions:
    """The parsed table options that drive reading, writing and maintenance."""

    raw: Mapping[str, str]
    bucket: int
    file_format: str
    file_compression: str
    zstd_level: int
    parquet_block_size: int  # parquet.block.size: bytes per row group (Java's default 128 MB)
    # parquet.page.row.count.limit: rows per Parquet page (parquet-mr's key and default, 20,000); a key lookup
    # decodes one page per column (data/page_index.py)
    parquet_page_rows: int
    # parquet.page.verify-checksum.enabled: verify every Parquet page's CRC32 on read (parquet-mr's key and default
    # false; ours true: flipped bytes then fail the read, never become other rows)
    parquet_verify_checksums: bool
    orc_stripe_size: int | None  # orc.stripe.size: bytes per ORC stripe (None: sized like a Parquet row group)
    manifest_compression: str
    manifest_target_file_size: int
    manifest_merge_min_count: int
    target_file_size: int
    merge_engine: MergeEngine
    changelog_producer: ChangelogProducer
    partition_default_name: str
    sequence_fields: tuple[str, ...]
    commit_max_retries: int
    commit_min_retry_wait: timedelta
    commit_max_retry_wait: timedelta
    snapshot_num_retained_min: int
    snapshot_num_retained_max: int
    snapshot_time_retained: timedelta
    snapshot_expire_limit: int
    num_sorted_run_compaction_trigger: int
    write_only: bool
    deletion_vectors_enabled: bool
    dynamic_bucket_target_row_num: int
    dynamic_bucket_max_buckets: int
    read_batch_size: int
    # sort-spill-buffer-size: bytes of decoded rows a merge of sorted runs holds at a time (lsm/key_ranges.py)
    sort_spill_buffer_size: int
    write_buffer_size: int  # write-buffer-size: rows a compaction's output buffers before writing a file

    @staticmethod
    def parse(options: Mapping[str, str], *, has_primary_key: bool) -> CoreOptions:
        o = {str(k): str(v) for k, v in options.items()}

        def size(key: str, default: str) -> int:
            return parse_memory_size(o.get(key, default), option=key)

        def duration(key: str, default: str) -> timedelta:
            return parse_duration(o.get(key, default), option=key)

        bucket = _int(o, "bucket", -1)
        if bucket == 0 or bucket < -2:
            raise OptionError(f"option 'bucket': {bucket} is invalid; use a positive count, or -1 for dynamic/unaware")
        if bucket == -2:
            raise OptionError("option 'bucket': -2 (postpone bucket) is not supported by Paimon 0.9 readers")
        file_format = o.get("file.format", "parquet").strip().lower()
        if file_format not in _FILE_FORMATS:
            raise OptionError(f"option 'file.format': {file_format!r} is not one of {', '.join(_FILE_FORMATS)}")
        seq = tuple(s.strip() for s in o.get("sequence.field", "").split(",") if s.strip())
        retained_min = _int(o, "snapshot.num-retained.min", 10)
        retained_max = _int(o, "snapshot.num-retained.max", 2147483647)
        if retained_min < 1:
            raise OptionError("option 'snapshot.num-retained.min' must be at least 1")
        if retained_max < retained_min:
            raise OptionError(
                f"option 'snapshot.num-retained.max' ({retained_max}) must be >= "
                f"'snapshot.num-retained.min' ({retained_min})"
            )
        trigger = _int(o, "num-sorted-run.compaction-trigger", 5)
        return CoreOptions(
            raw=o,
            bucket=bucket,
            file_format=file_format,
            file_compression=o.get("file.compression", "zstd").strip().lower(),
            zstd_level=_int(o, "file.compression.zstd-level", 1),
            parquet_block_size=_positive(_int(o, "parquet.block.size", 128 << 20), "parquet.block.size"),
            parquet_page_rows=_positive(_int(o, "parquet.page.row.count.limit", 20_000),
                                        "parquet.page.row.count.limit"),
            parquet_verify_checksums=_bool(o, "parquet.page.verify-checksum.enabled", True),
            orc_stripe_size=_positive(_int(o, "orc.stripe.size", 0), "orc.stripe.size")
            if "orc.stripe.size" in o else None,
            manifest_compression=o.get("manifest.compression", "zstd").strip().lower(),
            manifest_target_file_size=size("manifest.target-file-size", "8 mb"),
            manifest_merge_min_count=_int(o, "manifest.merge-min-count", 30),
            target_file_size=size("target-file-size", "128 mb" if has_primary_key else "256 mb"),
            merge_engine=_enum(MergeEngine, o.get("merge-engine", "deduplicate"), "merge-engine"),  # type: ignore[arg-type]
            changelog_producer=_enum(  # type: ignore[arg-type]
                ChangelogProducer, o.get("changelog-producer", "none"), "changelog-producer"
            ),
            partition_default_name=o.get("partition.default-name", "__DEFAULT_PARTITION__"),
            sequence_fields=seq,
            commit_max_retries=_int(o, "commit.max-retries", 10),
            commit_min_retry_wait=duration("commit.min-retry-wait", "10 ms"),
            commit_max_retry_wait=duration("commit.max-retry-wait", "10 s"),
            snapshot_num_retained_min=retained_min,
            snapshot_num_retained_max=retained_max,
            snapshot_time_retained=duration("snapshot.time-retained", "1 h"),
            snapshot_expire_limit=_int(o, "snapshot.expire.limit", 10),
            num_sorted_run_compaction_trigger=trigger,
            write_only=_bool(o, "write-only", False),
            deletion_vectors_enabled=_bool(o, "deletion-vectors.enabled", False),
            dynamic_bucket_target_row_num=_int(o, "dynamic-bucket.target-row-num", 2_000_000),
            dynamic_bucket_max_buckets=_int(o, "dynamic-bucket.max-buckets", -1),
            read_batch_size=_int(o, "read.batch-size", 65536),
            sort_spill_buffer_size=_positive(size("sort-spill-buffer-size", "64 mb"), "sort-spill-buffer-size"),
            write_buffer_size=_positive(size("write-buffer-size", "256 mb"), "write-buffer-size"),
        )

    @property
    def num_levels(self) -> int:
        """LSM levels of a primary-key table (``num-levels``, default the compaction trigger + 1)."""
        return int(self.raw.get("num-levels", str(self.num_sorted_run_compaction_trigger + 1)))

    def bucket_mode(self, *, has_primary_key: bool) -> BucketMode:
        if self.bucket > 0:
            return BucketMode.FIXED
        return BucketMode.DYNAMIC if has_primary_key else BucketMode.UNAWARE

    def post_commit(self) -> PostCommitOptions:
        """The options of the maintenance run after every commit, parsed on demand (like Java's lazy getters)."""
        return PostCommitOptions.parse(self.raw)


class ExpireExecutionMode(str, Enum):
    SYNC = "sync"
    ASYNC = "async"


class PartitionExpireStrategy(str, Enum):
    VALUES_TIME = "values-time"
    UPDATE_TIME = "update-time"


class TagCreationMode(str, Enum):
    NONE = "none"
    PROCESS_TIME = "process-time"
    WATERMARK = "watermark"
    BATCH = "batch"


class TagCreationPeriod(str, Enum):
    DAILY = "daily"
    HOURLY = "hourly"
    TWO_HOURS = "two-hours"


class TagPeriodFormatter(str, Enum):
    WITH_DASHES = "with_dashes"
    WITHOUT_DASHES = "without_dashes"


@dataclass(frozen=True, slots=True)
class PostCommitOptions:
    """Options of what Paimon 0.9 runs after each commit (TableCommitImpl.expire, TagAutoManager), with 0.9 defaults."""

    expire_execution_mode: ExpireExecutionMode  # snapshot.expire.execution-mode (sync)
    consumer_expiration_time: timedelta | None  # consumer.expiration-time
    partition_expiration_time: timedelta | None  # partition.expiration-time
    partition_expiration_check_interval: timedelta  # partition.expiration-check-interval (1 h)
    partition_expiration_strategy: PartitionExpireStrategy  # partition.expiration-strategy (values-time)
    partition_timestamp_formatter: str | None  # partition.timestamp-formatter
    partition_timestamp_pattern: str | None  # partition.timestamp-pattern
    end_input_check_partition_expire: bool  # end-input.check-partition-expire (false)
    tag_automatic_creation: TagCreationMode  # tag.automatic-creation (none)
    tag_creation_period: TagCreationPeriod  # tag.creation-period (daily)
    tag_creation_delay: timedelta  # tag.creation-delay (0)
    tag_period_formatter: TagPeriodFormatter  # tag.period-formatter (with_dashes)
    tag_num_retained_max: int | None  # tag.num-retained-max
    tag_default_time_retained: timedelta | None  # tag.default-time-retained
    tag_automatic_completion: bool  # tag.automatic-completion (false)
    sink_watermark_time_zone: str  # sink.watermark-time-zone (UTC)

    @staticmethod
    def parse(options: Mapping[str, str]) -> PostCommitOptions:
        o = {str(k): str(v) for k, v in options.items()}

        def opt_duration(key: str) -> timedelta | None:
            return parse_duration(o[key], option=key) if key in o else None

        num_retained = _int(o, "tag.num-retained-max", 0) if "tag.num-retained-max" in o else None
        return PostCommitOptions(
            expire_execution_mode=_enum(  # type: ignore[arg-type]
                ExpireExecutionMode, o.get("snapshot.expire.execution-mode", "sync"), "snapshot.expire.execution-mode"
            ),
            consumer_expiration_time=opt_duration("consumer.expiration-time"),
            partition_expiration_time=opt_duration("partition.expiration-time"),
            partition_expiration_check_interval=parse_duration(
                o.get("partition.expiration-check-interval", "1 h"), option="partition.expiration-check-interval"
            ),
            partition_expiration_strategy=_enum(  # type: ignore[arg-type]
                PartitionExpireStrategy, o.get("partition.expiration-strategy", "values-time"),
                "partition.expiration-strategy",
            ),
            partition_timestamp_formatter=o.get("partition.timestamp-formatter"),
            partition_timestamp_pattern=o.get("partition.timestamp-pattern"),
            end_input_check_partition_expire=_bool(o, "end-input.check-partition-expire", False),
            tag_automatic_creation=_enum(  # type: ignore[arg-type]
                TagCreationMode, o.get("tag.automatic-creation", "none"), "tag.automatic-creation"
            ),
            tag_creation_period=_enum(  # type: ignore[arg-type]
                TagCreationPeriod, o.get("tag.creation-period", "daily"), "tag.creation-period"
            ),
            tag_creation_delay=parse_duration(o.get("tag.creation-delay", "0 ms"), option="tag.creation-delay"),
            tag_period_formatter=_enum(  # type: ignore[arg-type]
                TagPeriodFormatter, o.get("tag.period-formatter", "with_dashes"), "tag.period-formatter"
            ),
            tag_num_retained_max=num_retained,
            tag_default_time_retained=opt_duration("tag.default-time-retained"),
            tag_automatic_completion=_bool(o, "tag.automatic-completion", False),
            sink_watermark_time_zone=o.get("sink.watermark-time-zone", "UTC"),
        )
