"""The maintenance after every commit (Paimon 0.9's TableCommitImpl#expire): snapshot, consumer, partition and tag
expiration and automatic tags, driven by table options; write-only tables skip it; its failures never fail the
commit; bad options fail before anything is committed.

Snapshot times are made deterministic where it matters by a fake clock for the committer (``clock`` fixture)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import time
from typing import Any

import pyarrow as pa
import pytest
from maintenance_helpers import assert_no_orphans, assert_nothing_missing, snapshot_ids, write_consumer

import table_format.maintenance.post_commit as post_commit_module
import table_format.write.commit as commit_module
from table_format import (
    CommitConflictError,
    CommitFailedError,
    CommitKind,
    FileSystemCatalog,
    OptionError,
    Table,
    UnsupportedFeatureError,
    write_table,
)
from table_format.maintenance.partition_expire import PartitionTimeExtractor, java_partition_text
from table_format.maintenance.post_commit import PostCommitMaintenance
from table_format.maintenance.tag_auto import TagPeriodHandler
from table_format.options import TagCreationPeriod, TagPeriodFormatter
from table_format.store.schema_manager import SchemaManager

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def new_table(warehouse: str, options: dict[str, str] | None = None, *, name: str = "t", pk: bool = False,
              partitioned: bool = False, schema: pa.Schema = SCHEMA) -> Table:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    opts = {"bucket": "2", **(options or {})} if pk else {"bucket": "-1", **(options or {})}
    return cat.create_table(f"db.{name}", schema, primary_keys=("dt", "id") if pk else (),
                            partition_keys=("dt",) if partitioned else (), options=opts)


def rows(ids: list[int], dt_: str = "a") -> pa.Table:
    return pa.table({"dt": [dt_] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]},
                    schema=SCHEMA)


def write(table: Table, i: int, dt_: str = "a") -> int:
    sid = write_table(table, rows([i], dt_))
    assert sid is not None
    return sid


def ids_read(table: Table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


class Clock:
    """time.time() of the committer: the real clock unless `now` (epoch seconds) is set."""

    def __init__(self) -> None:
        self.now: float | None = None

    def time(self) -> float:
        return time.time() if self.now is None else self.now

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def at(self, *args: int) -> None:
        self.now = dt.datetime(*args).timestamp()  # naive = local time, as Paimon's LocalDateTime


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(commit_module, "time", c)
    return c


# ---- snapshots ------------------------------------------------------------------------------------------------------


def test_defaults_keep_every_young_snapshot(warehouse: str) -> None:
    table = new_table(warehouse)
    for i in range(12):
        write(table, i)
    # num-retained.min 10, but time-retained 1 h protects every snapshot younger than that
    assert snapshot_ids(table) == list(range(1, 13))


def test_num_retained_max_forces_expiry(warehouse: str) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"})
    for i in range(7):
        write(table, i)
        assert snapshot_ids(table) == list(range(max(1, i - 1), i + 2))
    assert ids_read(table) == list(range(7))
    assert_nothing_missing(table)
    assert_no_orphans(table)


def test_time_retained_and_num_retained_min(warehouse: str) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "2", "snapshot.time-retained": "1 ms"})
    for i in range(6):
        write(table, i)
        time.sleep(0.01)  # every snapshot but the latest is older than 1 ms when the next commit expires
    assert snapshot_ids(table) == [5, 6]
    assert ids_read(table) == list(range(6))
    assert_no_orphans(table)


def test_time_retained_protects_young_snapshots(warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "1", "snapshot.time-retained": "1 h"})
    for i in range(4):
        write(table, i)
    assert snapshot_ids(table) == [1, 2, 3, 4]
    # two hours later every snapshot is old: only num-retained.min keeps the latest
    import table_format.maintenance.expire as expire_module

    later = Clock()
    later.now = time.time() + 7200
    monkeypatch.setattr(expire_module, "time", later)
    write(table, 4)
    assert snapshot_ids(table) == [5]
    assert ids_read(table) == list(range(5))


def test_expire_limit_and_dedicated_compaction(warehouse: str) -> None:
    """A write-only table expires nothing on commit; a compaction (write-only=false, as Paimon's dedicated compact
    job) does, at most snapshot.expire.limit snapshots per commit."""
    table = new_table(warehouse, {"write-only": "true", "snapshot.num-retained.min": "1",
                                  "snapshot.time-retained": "1 ms", "snapshot.expire.limit": "2"}, pk=True)
    for i in range(6):
        write(table, i)
    time.sleep(0.01)
    assert snapshot_ids(table) == [1, 2, 3, 4, 5, 6]
    result = table.maintenance.compact(full=True)
    assert result.snapshot_id == 7
    assert snapshot_ids(table) == [3, 4, 5, 6, 7]
    time.sleep(0.01)
    assert table.maintenance.compact(full=True).snapshot_id is None  # nothing to compact, expiration still runs
    assert snapshot_ids(table) == [5, 6, 7]
    assert ids_read(table) == list(range(6))
    assert_no_orphans(table)


def test_write_only_skips_expiration(warehouse: str) -> None:
    table = new_table(warehouse, {"write-only": "true", "snapshot.num-retained.min": "1",
                                  "snapshot.num-retained.max": "1"})
    for i in range(4):
        write(table, i)
    assert snapshot_ids(table) == [1, 2, 3, 4]


def test_a_failing_expiration_does_not_fail_the_commit(warehouse: str, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"})
    write(table, 0)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise OSError("disk on fire")

    monkeypatch.setattr(post_commit_module, "expire_snapshots", broken)
    with caplog.at_level(logging.WARNING, logger="table_format.maintenance.post_commit"):
        assert write(table, 1) == 2
    assert "disk on fire" in caplog.text
    assert snapshot_ids(table) == [1, 2]  # nothing expired, the commit stands
    assert ids_read(table) == [0, 1]
    monkeypatch.undo()
    assert write(table, 2) == 3
    assert snapshot_ids(table) == [3]


def test_result_of_one_run(warehouse: str) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"})
    for i in range(3):
        write(table, i)
    result = PostCommitMaintenance(table.store, commit_user="u").run()
    assert result.error is None and result.expired_snapshots == ()
    assert snapshot_ids(table) == [2, 3]


def test_concurrent_writers_with_expiration(warehouse: str) -> None:
    table = new_table(warehouse, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"})
    errors: list[BaseException] = []

    def worker(w: int) -> None:
        t = FileSystemCatalog(warehouse).load_table("db.t")
        for i in range(5):
            for _ in range(50):
                try:
                    write_table(t, rows([w * 100 + i]))
                    break
                except (CommitConflictError, CommitFailedError):  # nothing landed, try again
                    time.sleep(0.01)
                except Exception as e:
                    errors.append(e)
                    return
    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert ids_read(table) == sorted(w * 100 + i for w in range(4) for i in range(5))
    ids = snapshot_ids(table)
    assert ids[-1] >= 20 and len(ids) <= 2 + 4  # racing expirers may each keep their own view for a moment
    write(table, 999)
    assert len(snapshot_ids(table)) == 2
    assert_nothing_missing(table)
    assert_no_orphans(table)


def test_decoupled_changelog_options_are_refused_before_the_commit(warehouse: str) -> None:
    with pytest.raises(UnsupportedFeatureError, match="changelog.num-retained.min"):
        new_table(warehouse, {"changelog.num-retained.min": "20"}, name="refused")
    table = table_with_raw_options(warehouse, {"changelog.num-retained.min": "20"})
    with pytest.raises(UnsupportedFeatureError, match="changelog.num-retained.min"):
        write_table(table, rows([1]))
    assert snapshot_ids(table) == []


# ---- consumers ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("write_only", ["false", "true"])
def test_consumer_expiration(warehouse: str, write_only: str) -> None:
    """consumer.expiration-time also applies to write-only tables (Java passes it to the committer regardless)."""
    table = new_table(warehouse, {"consumer.expiration-time": "1 h", "write-only": write_only})
    write(table, 0)
    write_consumer(table, "old", 1)
    write_consumer(table, "young", 1)
    old = time.time() - 7200
    os.utime(os.path.join(table.path, "consumer", "consumer-old"), (old, old))
    write(table, 1)
    assert sorted(os.listdir(os.path.join(table.path, "consumer"))) == ["consumer-young"]


def test_expired_consumer_stops_protecting_snapshots(warehouse: str) -> None:
    table = new_table(warehouse, {"consumer.expiration-time": "1 h", "snapshot.num-retained.min": "1",
                                  "snapshot.num-retained.max": "1"})
    write(table, 0)
    write_consumer(table, "reader", 1)
    write(table, 1)
    assert snapshot_ids(table) == [1, 2]  # the consumer still reads snapshot 1
    old = time.time() - 7200
    os.utime(os.path.join(table.path, "consumer", "consumer-reader"), (old, old))
    write(table, 2)
    assert snapshot_ids(table) == [3]


# ---- partitions ---------------------------------------------------------------------------------------------------


def test_partition_expiration_by_value(warehouse: str) -> None:
    table = new_table(warehouse, {"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0"},
                      partitioned=True)
    write(table, 1, "2999-01-01")
    sid = write(table, 2, "2020-01-01")
    assert sid == 2
    latest = table.latest_snapshot()
    assert latest is not None and latest.id == 3 and latest.commit_kind == CommitKind.OVERWRITE
    assert ids_read(table) == [1]
    assert table.scan().to_arrow().column("dt").to_pylist() == ["2999-01-01"]
    assert_no_orphans(table)


def test_partition_check_interval_counts_from_the_commit(warehouse: str) -> None:
    """Java builds the committer (and starts the interval) per batch commit: with the default 1 h interval a batch
    commit never checks, unless end-input.check-partition-expire."""
    table = new_table(warehouse, {"partition.expiration-time": "1 d"}, partitioned=True)
    write(table, 1, "2020-01-01")
    assert snapshot_ids(table) == [1] and ids_read(table) == [1]
    other = new_table(warehouse, {"partition.expiration-time": "1 d", "end-input.check-partition-expire": "true"},
                      partitioned=True, name="u")
    write(other, 1, "2020-01-01")
    assert snapshot_ids(other) == [1, 2] and ids_read(other) == []


def test_partition_expiration_with_pattern_and_formatter(warehouse: str) -> None:
    schema = pa.schema([("year", pa.string()), ("month", pa.string()), ("id", pa.int64())])
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    table = cat.create_table("db.t", schema, partition_keys=("year", "month"), options={
        "bucket": "-1", "partition.expiration-time": "1 d", "partition.expiration-check-interval": "0",
        "partition.timestamp-pattern": "$year$month01", "partition.timestamp-formatter": "yyyyMMdd"})
    data = pa.table({"year": ["2020", "2999", "x"], "month": ["03", "01", "y"], "id": [1, 2, 3]}, schema=schema)
    write_table(table, data)
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [2, 3]  # 'x','y' has no time: kept


def test_partition_expiration_skips_nulls_and_unparsable_values(warehouse: str) -> None:
    table = new_table(warehouse, {"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0"},
                      partitioned=True)
    data = pa.table({"dt": [None, "garbage", "2020-01-01 10:00:00"], "id": [1, 2, 3], "v": ["a", "b", "c"]},
                    schema=SCHEMA)
    write_table(table, data)
    assert ids_read(table) == [1, 2]


def test_partition_expiration_write_only_skips(warehouse: str) -> None:
    table = new_table(warehouse, {"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0",
                                  "write-only": "true"}, partitioned=True)
    write(table, 1, "2020-01-01")
    assert ids_read(table) == [1]


def test_expire_partitions_action_and_update_time(warehouse: str) -> None:
    table = new_table(warehouse, {"partition.expiration-strategy": "update-time"}, partitioned=True)
    write(table, 1, "a")
    write(table, 2, "b")
    time.sleep(0.01)
    dry = table.maintenance.expire_partitions(expiration_time=dt.timedelta(hours=1))
    assert dry.expired_partitions == () and dry.dry_run
    dry = table.maintenance.expire_partitions(expiration_time=dt.timedelta(0))
    assert dry.expired_partitions == ({"dt": "a"}, {"dt": "b"}) and snapshot_ids(table) == [1, 2]
    done = table.maintenance.expire_partitions(expiration_time=dt.timedelta(0), dry_run=False)
    assert done.snapshot_id == 3 and ids_read(table) == []
    with pytest.raises(OptionError, match="partition.expiration-time"):
        new_table(warehouse, partitioned=True, name="u").maintenance.expire_partitions()


def test_partition_time_extractor() -> None:
    default = PartitionTimeExtractor(pattern=None, formatter=None)
    assert default.extract(["dt"], ["2024-1-5"]) == dt.datetime(2024, 1, 5)
    assert default.extract(["dt"], ["2024-01-05 7:08:09.5"]) == dt.datetime(2024, 1, 5, 7, 8, 9, 500000)
    assert default.extract(["dt"], ["2024-13-01"]) == dt.datetime(2025, 1, 1)  # lenient, as Java's
    pattern = PartitionTimeExtractor(pattern="$year-$month-$day $hour:00:00", formatter=None)
    assert pattern.extract(["year", "month", "day", "hour"], ["2024", "02", "03", "04"]) == dt.datetime(2024, 2, 3, 4)
    fmt = PartitionTimeExtractor(pattern=None, formatter="yyyy/MM/dd'T'HH")
    assert fmt.extract(["dt"], ["2024/02/03T04"]) == dt.datetime(2024, 2, 3, 4)
    with pytest.raises(ValueError):
        fmt.extract(["dt"], ["2024-02-03"])
    with pytest.raises(UnsupportedFeatureError):
        PartitionTimeExtractor(pattern=None, formatter="EEE, d MMM yyyy")
    assert java_partition_text(dt.date(1970, 1, 11)) == "10"
    assert java_partition_text(dt.datetime(2024, 1, 2, 3, 4)) == "2024-01-02T03:04"
    assert java_partition_text(True) == "true"


# ---- tags -----------------------------------------------------------------------------------------------------------


def test_tag_period_handler_names() -> None:
    daily = TagPeriodHandler(TagCreationPeriod.DAILY, TagPeriodFormatter.WITH_DASHES)
    t = dt.datetime(2023, 7, 18, 11, 30)
    assert daily.time_to_tag(daily.normalize_to_previous_tag(t)) == "2023-07-17"
    assert daily.is_auto_tag("2023-07-18") and daily.is_auto_tag("2023-07-18 11")  # Java splits at the space
    assert not daily.is_auto_tag("batch-write-2023-07-18") and not daily.is_auto_tag("v1")
    hourly = TagPeriodHandler(TagCreationPeriod.HOURLY, TagPeriodFormatter.WITH_DASHES)
    assert hourly.time_to_tag(hourly.normalize_to_previous_tag(t)) == "2023-07-18 10"
    assert not hourly.is_auto_tag("2023-07-18")
    assert hourly.tag_to_time("2023-07-18 24") == dt.datetime(2023, 7, 19)  # lenient
    plain = TagPeriodHandler(TagCreationPeriod.HOURLY, TagPeriodFormatter.WITHOUT_DASHES)
    assert plain.time_to_tag(t) == "20230718 11" and plain.tag_to_time("20230718 11") == dt.datetime(2023, 7, 18, 11)
    two = TagPeriodHandler(TagCreationPeriod.TWO_HOURS, TagPeriodFormatter.WITHOUT_DASHES)
    assert two.time_to_tag(two.normalize_to_previous_tag(t)) == "2023-07-18 08"  # always with dashes


def test_process_time_tags_daily(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"tag.automatic-creation": "process-time", "tag.num-retained-max": "2"})
    clock.at(2023, 7, 18, 10)
    write(table, 1)
    assert table.tags() == {"2023-07-17": 1}  # no auto tag yet: the first snapshot is tagged at once
    clock.at(2023, 7, 18, 23, 59)
    write(table, 2)
    assert table.tags() == {"2023-07-17": 1}
    clock.at(2023, 7, 19, 0, 10)
    write(table, 3)
    assert table.tags() == {"2023-07-17": 1, "2023-07-18": 3}
    table.create_tag("manual", snapshot_id=1)
    clock.at(2023, 7, 21, 9)
    write(table, 4)
    # gaps are not filled; num-retained-max 2 deletes the oldest auto-created tag, never a manual one
    assert table.tags() == {"manual": 1, "2023-07-18": 3, "2023-07-20": 4}
    assert [r["v"] for r in table.scan(tag="2023-07-18").to_arrow().to_pylist()] == ["v1", "v2", "v3"]


def test_process_time_tags_hourly_with_delay_and_completion(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
                                  "tag.creation-delay": "10 min", "tag.automatic-completion": "true",
                                  "tag.period-formatter": "without_dashes"})
    clock.at(2023, 7, 18, 10, 30)
    write(table, 1)
    clock.at(2023, 7, 18, 11, 5)  # within the delay: no tag for 10:00 yet
    write(table, 2)
    clock.at(2023, 7, 18, 13, 20)  # completion names the next expected period, one per snapshot
    write(table, 3)
    clock.at(2023, 7, 18, 13, 25)
    write(table, 4)
    assert table.tags() == {"20230718 09": 1, "20230718 10": 3, "20230718 11": 4}


def test_process_time_tags_skip_expired_snapshots(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"write-only": "true"})
    for i in range(3):
        clock.at(2023, 7, 18 + i, 12)
        write(table, i)
    other = FileSystemCatalog(warehouse).load_table("db.t")
    table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    assert snapshot_ids(other) == [3]
    tagging = new_table(warehouse, {"tag.automatic-creation": "process-time"}, name="u")
    clock.at(2023, 7, 20, 12)
    write(tagging, 0)
    assert tagging.tags() == {"2023-07-19": 1}


def test_watermark_tags_need_watermarks(warehouse: str) -> None:
    """Batch commits carry no watermark (Java's batch commit writes null), so watermark mode never tags them."""
    table = new_table(warehouse, {"tag.automatic-creation": "watermark"})
    write(table, 1)
    assert table.tags() == {}


def test_tag_time_retained_expires_tags(warehouse: str) -> None:
    table = new_table(warehouse)
    write(table, 1)
    table.create_tag("short", time_retained=dt.timedelta(milliseconds=1))
    table.create_tag("long", time_retained=dt.timedelta(hours=1))
    table.create_tag("forever")
    time.sleep(0.01)
    write(table, 2)
    assert table.tags() == {"forever": 1, "long": 1}


def test_default_time_retained_applies_to_auto_tags(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"tag.automatic-creation": "process-time", "tag.default-time-retained": "1 h"})
    clock.at(2023, 7, 18, 10)
    write(table, 1)
    with open(os.path.join(table.path, "tag", "tag-2023-07-17")) as f:
        text = f.read()
    assert '"tagTimeRetained" : 3600' in text and '"tagCreateTime"' in text


def test_batch_tags(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"tag.automatic-creation": "batch", "tag.num-retained-max": "2"})
    clock.at(2023, 7, 18, 10)
    write(table, 1)
    assert table.tags() == {"batch-write-2023-07-18": 1}
    clock.at(2023, 7, 18, 20)
    write(table, 2)
    assert table.tags() == {"batch-write-2023-07-18": 2}  # replaced by the tag of the latest snapshot
    table.create_tag("manual", snapshot_id=1)
    clock.at(2023, 7, 19, 1)
    write(table, 3)
    # all tags count: the oldest (by snapshot) go
    assert table.tags() == {"batch-write-2023-07-18": 2, "batch-write-2023-07-19": 3}


def test_batch_tags_on_write_only_tables(warehouse: str) -> None:
    """The batch-write tag comes from the Flink batch sink, which does not look at write-only."""
    table = new_table(warehouse, {"tag.automatic-creation": "batch", "write-only": "true"})
    write(table, 1)
    assert list(table.tags().values()) == [1]


def test_no_auto_tags_on_write_only_tables(warehouse: str, clock: Clock) -> None:
    table = new_table(warehouse, {"tag.automatic-creation": "process-time", "write-only": "true"})
    clock.at(2023, 7, 18, 10)
    write(table, 1)
    assert table.tags() == {}


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"tag.automatic-creation": "process-time", "tag.creation-delay": "1 d"}, "tag.creation-delay"),
        ({"tag.automatic-creation": "sometimes"}, "tag.automatic-creation"),
        ({"tag.creation-period": "weekly"}, "tag.creation-period"),
        ({"snapshot.expire.execution-mode": "later"}, "snapshot.expire.execution-mode"),
        ({"partition.expiration-time": "soon"}, "partition.expiration-time"),
        ({"tag.automatic-creation": "watermark", "sink.watermark-time-zone": "Mars/Olympus"},
         "sink.watermark-time-zone"),
    ],
)
def test_bad_options_fail_before_the_commit(warehouse: str, options: dict[str, str], match: str) -> None:
    with pytest.raises(OptionError, match=match):  # refused at create ...
        new_table(warehouse, options, name="refused")
    assert "refused" not in FileSystemCatalog(warehouse).list_tables("db")
    table = table_with_raw_options(warehouse, options)  # ... and at commit, on a table another engine created
    with pytest.raises(OptionError, match=match):
        write_table(table, rows([1]))
    assert snapshot_ids(table) == []


def table_with_raw_options(warehouse: str, options: dict[str, str]) -> Table:
    """A table whose schema holds `options` unchecked (as another engine may have written it)."""
    table = new_table(warehouse)
    manager = SchemaManager(table.store.file_io, table.store.paths)
    assert manager.commit(table.schema.with_options({**table.schema.options, **options}, new_id=1))
    return FileSystemCatalog(warehouse).load_table(table.identifier)


def test_async_execution_mode_runs_synchronously(warehouse: str) -> None:
    table = new_table(warehouse, {"snapshot.expire.execution-mode": "async", "snapshot.num-retained.min": "1",
                                  "snapshot.num-retained.max": "1"})
    write(table, 1)
    write(table, 2)
    assert snapshot_ids(table) == [2]
