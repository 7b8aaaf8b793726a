"""Automatic tags: creation by period, expiration by count and by time, batch-write tags.

Mirrors, of Paimon 0.9, org.apache.paimon.tag.TagAutoCreation, TagPeriodHandler, TagTimeExtractor, TagTimeExpire
(run by TableCommitImpl after each commit through TagAutoManager) and the Flink sink's
BatchWriteGeneratorTagOperator (``tag.automatic-creation = batch``):

* ``process-time`` / ``watermark``: snapshots from the one after the last auto-created tag (or the earliest) on are
  visited in order; the first one whose time (commit time, or watermark in ``sink.watermark-time-zone``) minus
  ``tag.creation-delay`` reaches the end of the period after the last tag gets a tag named after the period before
  its own (daily ``2023-07-18``, hourly and two-hours ``2023-07-18 11``; ``without_dashes``: ``20230718``,
  ``20230718 11``). With no auto tag yet, the first visited snapshot is tagged at once.
  ``tag.automatic-completion`` names the tag after the next expected period instead (filling gaps one per
  snapshot). ``tag.num-retained-max`` then deletes the oldest auto-created tags (names a period handler parses).
  Snapshots without a watermark (batch commits) never create watermark tags.
* time expiration: every tag with ``tagCreateTime`` and ``tagTimeRetained`` older than that is deleted.
* ``batch``: after the commit, tag ``batch-write-<yyyy-MM-dd of the latest snapshot>`` replaces a tag of that name
  on the latest snapshot; then, with ``tag.num-retained-max``, the oldest tags (all tags, by snapshot id, tags of
  one snapshot by modification time) are deleted down to the limit. (0.9 could delete one tag too many there.)

New tags carry ``tag.default-time-retained``. Deleting a tag deletes the files only it kept alive (delete_tag).
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from dataclasses import dataclass

from table_format.errors import OptionError, SnapshotNotFoundError, TableFormatError
from table_format.maintenance.references import read_tag, tag_names, tagged_snapshots
from table_format.maintenance.tags import delete_tag, write_tag
from table_format.meta.snapshot import Snapshot, tag_from_json
from table_format.options import PostCommitOptions, TagCreationMode, TagCreationPeriod, TagPeriodFormatter
from table_format.store.file_store import FileStore

__all__ = ["BATCH_WRITE_TAG_PREFIX", "TagAutoCreation", "TagPeriodHandler", "batch_write_tag", "expire_tags_by_time"]

BATCH_WRITE_TAG_PREFIX = "batch-write-"
_EPOCH = _dt.datetime(1970, 1, 1)
_LONG_MIN = -(1 << 63)
_PERIODS = {
    TagCreationPeriod.DAILY: _dt.timedelta(days=1),
    TagCreationPeriod.HOURLY: _dt.timedelta(hours=1),
    TagCreationPeriod.TWO_HOURS: _dt.timedelta(hours=2),
}
# TagPeriodHandler's formatters: YEAR 1..10 digits, then fixed two-digit fields (parsed leniently)
_DAY = re.compile(r"(\d{1,10})-(\d{2})-(\d{2})")
_DAY_NO_DASHES = re.compile(r"(\d{1,10})(\d{2})(\d{2})")
_HOUR = re.compile(r"(\d{1,10})-(\d{2})-(\d{2}) (\d{2})")
_HOUR_NO_DASHES = re.compile(r"(\d{1,10})(\d{2})(\d{2}) (\d{2})")


def _lenient(year: int, month: int, day: int, hour: int = 0) -> _dt.datetime:
    months = year * 12 + (month - 1)
    return _dt.datetime(months // 12, months % 12 + 1, 1) + _dt.timedelta(days=day - 1, hours=hour)


def _millis_as_utc(t: _dt.datetime) -> int:
    """Timestamp.fromLocalDateTime(t).getMillisecond(): the wall-clock fields as if they were UTC."""
    delta = t - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


@dataclass(frozen=True, slots=True)
class TagPeriodHandler:
    """TagPeriodHandler (Daily/Hourly/TwoHours): tag names <-> period start times (naive local date-times)."""

    period: TagCreationPeriod
    formatter: TagPeriodFormatter

    @property
    def one_period(self) -> _dt.timedelta:
        return _PERIODS[self.period]

    def _dashes(self) -> bool:  # two-hours always uses the dashed hour format
        return self.period == TagCreationPeriod.TWO_HOURS or self.formatter == TagPeriodFormatter.WITH_DASHES

    def validate_delay(self, delay: _dt.timedelta) -> None:
        if not self.one_period > delay:
            raise OptionError(
                f"option 'tag.creation-delay' ({delay}) must be shorter than 'tag.creation-period' ({self.period.value})"
            )

    def tag_to_time(self, tag: str) -> _dt.datetime:
        """Parse a tag name; ValueError when it is not this handler's format (then it is not an auto tag)."""
        if self.period == TagCreationPeriod.DAILY:
            m = (_DAY if self._dashes() else _DAY_NO_DASHES).fullmatch(tag.split(" ")[0])
            if m is None:
                raise ValueError(tag)
            return _lenient(int(m[1]), int(m[2]), int(m[3]))
        m = (_HOUR if self._dashes() else _HOUR_NO_DASHES).fullmatch(tag)
        if m is None:
            raise ValueError(tag)
        return _lenient(int(m[1]), int(m[2]), int(m[3]), int(m[4]))

    def is_auto_tag(self, tag: str) -> bool:
        try:
            self.tag_to_time(tag)
        except (ValueError, OverflowError):
            return False
        return True

    def normalize_to_previous_tag(self, t: _dt.datetime) -> _dt.datetime:
        """The start of the period before the one `t` falls in (Java long division truncates toward zero)."""
        millis = _millis_as_utc(t)
        period = int(self.one_period.total_seconds() * 1000)
        q = abs(millis) // period
        floored = (q if millis >= 0 else -q) * period
        return _EPOCH + _dt.timedelta(milliseconds=floored) - self.one_period

    def time_to_tag(self, t: _dt.datetime) -> str:
        dash = "-" if self._dashes() else ""
        day = f"{t.year}{dash}{t.month:02d}{dash}{t.day:02d}"
        return day if self.period == TagCreationPeriod.DAILY else f"{day} {t.hour:02d}"

    def next_tag_time(self, t: _dt.datetime) -> _dt.datetime:
        return t + self.one_period


def _zone(name: str) -> _dt.tzinfo:
    """ZoneId.of for the ids a watermark time zone is given as: region ids, 'UTC', offsets like 'GMT-08:00'."""
    if name in ("Z", "UTC", "GMT", "UT"):
        return _dt.timezone.utc
    m = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", name)
    if m:
        offset = _dt.timedelta(hours=int(m[2]), minutes=int(m[3] or 0))
        return _dt.timezone(-offset if m[1] == "-" else offset)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise OptionError(f"option 'sink.watermark-time-zone': {name!r} is not a time zone id") from None


def _local_time_of_millis(millis: int, zone: _dt.tzinfo | None) -> _dt.datetime:
    """Instant.ofEpochMilli(millis) as a LocalDateTime of `zone` (None: the system zone)."""
    instant = _dt.datetime.fromtimestamp(millis // 1000, _dt.timezone.utc) + _dt.timedelta(milliseconds=millis % 1000)
    if zone is None:
        return instant.astimezone().replace(tzinfo=None)
    return instant.astimezone(zone).replace(tzinfo=None)


class TagAutoCreation:
    """TagAutoCreation: the state (next snapshot to visit, next tag time) is read from the table when built."""

    def __init__(self, store: FileStore, options: PostCommitOptions) -> None:
        mode = options.tag_automatic_creation
        if mode not in (TagCreationMode.PROCESS_TIME, TagCreationMode.WATERMARK):
            raise ValueError(f"TagAutoCreation needs process-time or watermark, not {mode.value}")
        self.store = store
        self.mode = mode
        self.handler = TagPeriodHandler(options.tag_creation_period, options.tag_period_formatter)
        self.delay = options.tag_creation_delay
        self.handler.validate_delay(self.delay)
        self.num_retained_max = options.tag_num_retained_max
        self.time_retained = options.tag_default_time_retained
        self.completion = options.tag_automatic_completion
        self.zone = _zone(options.sink_watermark_time_zone) if mode == TagCreationMode.WATERMARK else None
        self.next_snapshot = 1
        self.next_tag: _dt.datetime | None = None
        self.created: list[str] = []
        self.deleted: list[str] = []

    @staticmethod
    def validate(options: PostCommitOptions) -> None:
        """The checks Java makes when the committer is built (before anything is committed)."""
        TagPeriodHandler(options.tag_creation_period, options.tag_period_formatter).validate_delay(
            options.tag_creation_delay)
        if options.tag_automatic_creation == TagCreationMode.WATERMARK:
            _zone(options.sink_watermark_time_zone)

    def _auto_tags(self) -> list[tuple[Snapshot, list[str]]]:
        return [(s, auto) for s, names in tagged_snapshots(self.store)
                if (auto := [n for n in names if self.handler.is_auto_tag(n)])]

    def _one_auto_tag(self, names: list[str]) -> str:
        if len(names) != 1:
            raise TableFormatError(
                f"table {self.store.identifier!r}: there are more than 1 auto-created tags of the same snapshot: "
                f"{','.join(names)}. This is unexpected."
            )
        return names[0]

    def _init_state(self) -> None:
        tags = self._auto_tags()
        if not tags:
            self.next_snapshot = self.store.snapshots.earliest_id() or 1
            self.next_tag = None
        else:
            last, names = tags[-1]
            self.next_snapshot = last.id + 1
            self.next_tag = self.handler.next_tag_time(self.handler.tag_to_time(self._one_auto_tag(names)))

    def run(self) -> None:
        """Visit the snapshots not seen yet (TagAutoCreation.run)."""
        self._init_state()
        snapshots = self.store.snapshots
        while True:
            snapshot: Snapshot | None = None
            if snapshots.exists(self.next_snapshot):
                try:
                    snapshot = snapshots.snapshot(self.next_snapshot)
                except SnapshotNotFoundError:  # expired meanwhile
                    snapshot = None
            if snapshot is not None:
                self._try_to_create_tags(snapshot)
                self.next_snapshot += 1
                continue
            earliest = snapshots.earliest_id()
            if earliest is not None and earliest > self.next_snapshot:  # skip expired snapshots
                self.next_snapshot = earliest
            else:
                break

    def _extract(self, snapshot: Snapshot) -> _dt.datetime | None:
        if self.mode == TagCreationMode.PROCESS_TIME:
            return _local_time_of_millis(snapshot.time_millis, None)
        wm = snapshot.watermark
        if wm is None or wm == _LONG_MIN:
            return None
        return _local_time_of_millis(wm, self.zone)

    def _try_to_create_tags(self, snapshot: Snapshot) -> None:
        t = self._extract(snapshot)
        if t is None:
            return
        handler = self.handler
        if self.next_tag is not None and t - self.delay < handler.next_tag_time(self.next_tag):
            return
        this_tag = handler.normalize_to_previous_tag(t)
        if self.completion and self.next_tag is not None:
            this_tag = self.next_tag
        name = handler.time_to_tag(this_tag)
        if not self.store.file_io.exists(self.store.paths.tag(name)) and write_tag(
                self.store, name, snapshot, time_retained=self.time_retained):
            self.created.append(name)
        self.next_tag = handler.next_tag_time(this_tag)
        if self.num_retained_max is not None:
            tags = self._auto_tags()
            for _, names in tags[: max(0, len(tags) - self.num_retained_max)]:
                victim = self._one_auto_tag(names)
                if _delete_if_present(self.store, victim):
                    self.deleted.append(victim)


def _delete_if_present(store: FileStore, name: str) -> bool:
    try:
        delete_tag(store, name)
    except SnapshotNotFoundError:  # deleted by someone else meanwhile
        return False
    return True


def expire_tags_by_time(store: FileStore, *, now: _dt.datetime | None = None) -> list[str]:
    """TagTimeExpire.run: delete every tag whose tagCreateTime + tagTimeRetained has passed; returns their names."""
    now = now or _dt.datetime.now()
    deleted = []
    for name in tag_names(store):
        path = store.paths.tag(name)
        try:
            tag = tag_from_json(store.file_io.read_bytes(path), source=path)
        except FileNotFoundError:
            continue
        if tag.create_time is None or tag.time_retained is None:
            continue
        if now > tag.create_time + tag.time_retained and _delete_if_present(store, name):
            deleted.append(name)
    return deleted


def batch_write_tag(store: FileStore, options: PostCommitOptions) -> tuple[list[str], list[str]]:
    """BatchWriteGeneratorTagOperator.createTag + expireTag; returns (created, deleted) tag names."""
    latest = store.snapshots.latest()
    if latest is None:
        return [], []
    name = BATCH_WRITE_TAG_PREFIX + _local_time_of_millis(latest.time_millis, None).strftime("%Y-%m-%d")
    created: list[str] = []
    deleted: list[str] = []
    try:
        if read_tag(store, name) is not None and _delete_if_present(store, name):
            deleted.append(name)
        if write_tag(store, name, latest, time_retained=options.tag_default_time_retained):
            created.append(name)
        if options.tag_num_retained_max is not None:
            deleted += _expire_batch_tags(store, options.tag_num_retained_max)
    except Exception:
        # Java removes the tag again when anything failed, and swallows the error (the data is committed)
        if read_tag(store, name) is not None:
            _delete_if_present(store, name)
        raise
    return created, deleted


def _expire_batch_tags(store: FileStore, retained_max: int) -> list[str]:
    """Delete the oldest tags (by snapshot id; tags of one snapshot by modification time) down to `retained_max`."""
    deleted: list[str] = []
    count = len(tag_names(store))
    for _, names in tagged_snapshots(store):
        if count <= retained_max:
            break
        if count - len(names) >= retained_max:
            victims = names
        else:
            victims = sorted(names, key=lambda n: (_mtime(store, n), n))[: count - retained_max]
        for n in victims:
            if _delete_if_present(store, n):
                deleted.append(n)
            count -= 1
    return deleted


def _mtime(store: FileStore, name: str) -> int:
    st = store.file_io.status(store.paths.tag(name))
    return (st.mtime_ns or 0) if st is not None else 0
