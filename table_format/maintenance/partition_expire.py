"""Partition expiration: drop whole partitions whose time is older than ``partition.expiration-time``.

Mirrors org.apache.paimon.operation.PartitionExpire (doExpire) with PartitionValuesTimeExpireStrategy /
PartitionUpdateTimeExpireStrategy and org.apache.paimon.partition.PartitionTimeExtractor of Paimon 0.9:

* candidates: the partitions with live files in the latest snapshot (FileStoreScan.readPartitionEntries);
* ``values-time`` (default): the partition time is extracted from its values: the first partition value, or
  ``partition.timestamp-pattern`` with ``$key`` replaced by each value (e.g. ``$year-$month-$day $hour:00:00``),
  parsed by ``partition.timestamp-formatter`` (a Java DateTimeFormatter pattern) or, without one, as
  ``yyyy-M-d[ H:m:s[.fraction]]`` (lenient) or a plain date at midnight; a partition expires when its time is
  before ``now - partition.expiration-time``. Values that do not parse never expire (logged);
* ``update-time``: a partition expires when the newest creation time of its files is before that instant;
* the expired partitions are dropped by one OVERWRITE commit deleting all their files (FileStoreCommit
  dropPartitions), with the committer's user.

Values are turned into text as Java's internal objects print (DATE as epoch days, TIMESTAMP as
``LocalDateTime.toString``); a null value (the default partition) cannot be given a time and never expires (Java
0.9 fails the whole expiration with a NullPointerException there).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from table_format.errors import UnsupportedFeatureError
from table_format.meta.manifest import FileKind
from table_format.options import PartitionExpireStrategy
from table_format.store.file_store import FileStore
from table_format.write.commit import FileStoreCommit, Overwrite

__all__ = ["PartitionTimeExtractor", "expire_partitions", "java_partition_text"]

log = logging.getLogger(__name__)

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_DATE = _dt.date(1970, 1, 1)

# PartitionTimeExtractor.TIMESTAMP_FORMATTER / DATE_FORMATTER (lenient): y-M-d[ H:m:s[.f]]
_DEFAULT_RE = re.compile(
    r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?"
)


@dataclass(frozen=True, slots=True)
class PartitionExpireResult:
    """Partitions dropped (as Java's toPartitionString: key -> value text) and the OVERWRITE snapshot."""

    expired_partitions: tuple[dict[str, str], ...]
    snapshot_id: int | None
    dry_run: bool


def _lenient(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0,
             nanos: int = 0) -> _dt.datetime:
    """ResolverStyle.LENIENT: LocalDate.of(y, 1, 1).plusMonths(m - 1).plusDays(d - 1), then the time of day."""
    months = year * 12 + (month - 1)
    base = _dt.datetime(months // 12, months % 12 + 1, 1)
    return base + _dt.timedelta(days=day - 1, hours=hour, minutes=minute, seconds=second, microseconds=nanos // 1000)


def _fraction_nanos(digits: str | None) -> int:
    return int((digits or "0").ljust(9, "0")[:9])


# ---- Java DateTimeFormatter patterns (the subset partition formatters use) ------------------------------------------

_PATTERN_FIELDS = {"y": "year", "u": "year", "M": "month", "d": "day", "H": "hour", "m": "minute", "s": "second",
                   "S": "fraction"}


def _compile_java_pattern(pattern: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A Java DateTimeFormatter.ofPattern pattern as a regex with one group per field.

    Supported letters: y/u (year), M (month, numeric), d, H, m, s, S (fraction); quoted text and other literals.
    Anything else is refused (UnsupportedFeatureError) rather than half-parsed.
    """
    out: list[str] = []
    fields: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            end = pattern.find("'", i + 1)
            if end == i + 1:  # '' is a quote
                out.append(re.escape("'"))
                i += 2
                continue
            if end < 0:
                raise UnsupportedFeatureError(f"partition.timestamp-formatter {pattern!r}: unterminated quote")
            out.append(re.escape(pattern[i + 1:end]))
            i = end + 1
            continue
        if c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            n = j - i
            name = _PATTERN_FIELDS.get(c)
            if name is None or (c == "M" and n > 2) or (c in "dHms" and n > 2):
                raise UnsupportedFeatureError(
                    f"partition.timestamp-formatter {pattern!r}: pattern letters {pattern[i:j]!r} are not supported "
                    "(supported: y, u, M, MM, d, dd, H, HH, m, mm, s, ss, S...)"
                )
            if name == "year":
                if n == 2:
                    raise UnsupportedFeatureError(
                        f"partition.timestamp-formatter {pattern!r}: two-digit years ('yy') are not supported"
                    )
                out.append(rf"(\d{{{1 if n == 1 else n},19}})")
            elif name == "fraction":
                out.append(rf"(\d{{{n}}})")
            else:
                out.append(r"(\d{1,2})" if n == 1 else r"(\d{2})")
            fields.append(name)
            i = j
            continue
        out.append(re.escape(c))
        i += 1
    if "year" not in fields or "month" not in fields or "day" not in fields:
        raise UnsupportedFeatureError(
            f"partition.timestamp-formatter {pattern!r}: needs a year, a month and a day to give a date"
        )
    return re.compile("".join(out)), tuple(fields)


class PartitionTimeExtractor:
    """PartitionTimeExtractor: partition values -> LocalDateTime (naive local), or ValueError."""

    def __init__(self, *, pattern: str | None, formatter: str | None) -> None:
        self.pattern = pattern
        self.formatter = formatter
        self._compiled = _compile_java_pattern(formatter) if formatter is not None else None

    def extract(self, keys: Sequence[str], values: Sequence[str]) -> _dt.datetime:
        if self.pattern is None:
            text = values[0]
        else:
            text = self.pattern
            for k, v in zip(keys, values, strict=True):
                text = text.replace(f"${k}", v)
        return self._parse(text)

    def _parse(self, text: str) -> _dt.datetime:
        if self._compiled is None:
            m = _DEFAULT_RE.fullmatch(text)
            if m is None:
                raise ValueError(f"{text!r} is not yyyy-MM-dd[ HH:mm:ss]")
            y, mo, d, h, mi, s, f = m.groups()
            return _lenient(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), _fraction_nanos(f))
        regex, fields = self._compiled
        m = regex.fullmatch(text)
        if m is None:
            raise ValueError(f"{text!r} does not match {self.formatter!r}")
        got = dict(zip(fields, m.groups(), strict=True))
        # ofPattern resolves SMART (strict ranges); a missing time of day means midnight (LocalDate fallback)
        return _dt.datetime(int(got["year"]), int(got["month"]), int(got["day"]), int(got.get("hour") or 0),
                            int(got.get("minute") or 0), int(got.get("second") or 0),
                            _fraction_nanos(got.get("fraction")) // 1000)


def java_partition_text(value: object) -> str:
    """How Java prints the internal object of a partition value (RowDataToObjectArrayConverter + toString)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        # Paimon Timestamp.toString() is LocalDateTime.toString(): seconds and fraction only when non-zero
        text = value.strftime("%Y-%m-%dT%H:%M")
        if value.second or value.microsecond:
            text += f":{value.second:02d}"
        us = value.microsecond
        if us:
            text += f".{us // 1000:03d}" if us % 1000 == 0 else f".{us:06d}"
        return text
    if isinstance(value, _dt.date):
        return str((value - _EPOCH_DATE).days)  # DATE is an int of epoch days internally
    if isinstance(value, _dt.time):
        return str((value.hour * 3600 + value.minute * 60 + value.second) * 1000 + value.microsecond // 1000)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _naive_local_millis(creation_time: int | None) -> int:
    """DataFileMeta.creationTimeEpochMillis: the local wall-clock millis as an instant of the system zone."""
    if creation_time is None:
        return -(1 << 63)
    return int((_EPOCH + _dt.timedelta(milliseconds=creation_time)).timestamp() * 1000)


def _partition_entries(store: FileStore) -> dict[bytes, int]:
    """Partitions with live files in the latest snapshot -> newest file creation time (readPartitionEntries)."""
    latest = store.snapshots.latest()
    if latest is None:
        return {}
    counts: dict[bytes, int] = {}
    newest: dict[bytes, int] = {}
    entries = store.manifests.read_entries(store.manifests.data_manifests(latest))
    for e in entries:
        counts[e.partition] = counts.get(e.partition, 0) + (1 if e.kind == FileKind.ADD else -1)
        t = _naive_local_millis(e.file.creation_time)
        if t > newest.get(e.partition, -(1 << 63)):
            newest[e.partition] = t
    return {p: newest.get(p, -(1 << 63)) for p, c in counts.items() if c > 0}


def select_expired(store: FileStore, *, expire_before: _dt.datetime, strategy: PartitionExpireStrategy,
                   extractor: PartitionTimeExtractor) -> list[bytes]:
    """The partitions (BinaryRow bytes) of the latest snapshot that expire at `expire_before` (naive local)."""
    keys = list(store.schema.partition_keys)
    partitions = _partition_entries(store)
    if strategy == PartitionExpireStrategy.UPDATE_TIME:
        limit = int(expire_before.timestamp() * 1000)
        return sorted(p for p, newest in partitions.items() if limit > newest)
    expired = []
    for p in sorted(partitions):
        values = store.decode_partition(p)
        if any(v is None for v in values):
            log.warning("table %r: partition %s has a null value; it cannot be given a time and does not expire",
                        store.identifier, dict(zip(keys, values, strict=True)))
            continue
        texts = [java_partition_text(v) for v in values]
        try:
            part_time = extractor.extract(keys, texts)
        except (ValueError, OverflowError) as e:
            log.warning("table %r: cannot extract a time from partition %s (%s); it does not expire. Check "
                        "partition.timestamp-pattern/-formatter or drop it by hand", store.identifier,
                        dict(zip(keys, texts, strict=True)), e)
            continue
        if expire_before > part_time:
            expired.append(p)
    return expired


def expire_partitions(
    store: FileStore,
    *,
    expiration_time: _dt.timedelta,
    strategy: PartitionExpireStrategy = PartitionExpireStrategy.VALUES_TIME,
    timestamp_pattern: str | None = None,
    timestamp_formatter: str | None = None,
    commit_user: str | None = None,
    now: _dt.datetime | None = None,
    dry_run: bool = True,
) -> PartitionExpireResult:
    """Drop the partitions older than `expiration_time` (PartitionExpire.doExpire) in one OVERWRITE commit."""
    if not store.schema.partition_keys:
        return PartitionExpireResult((), None, dry_run)
    extractor = PartitionTimeExtractor(pattern=timestamp_pattern, formatter=timestamp_formatter)
    expire_before = (now or _dt.datetime.now()) - expiration_time
    expired = select_expired(store, expire_before=expire_before, strategy=strategy, extractor=extractor)
    keys = list(store.schema.partition_keys)
    specs = tuple(
        dict(zip(keys, (java_partition_text(v) for v in store.decode_partition(p)), strict=True)) for p in expired
    )
    if not expired or dry_run:
        return PartitionExpireResult(specs, None, dry_run)
    for spec in specs:
        log.info("table %r: expire partition %s", store.identifier, spec)
    values = {store.decode_partition(p) for p in expired}
    accept: Callable[[bytes], bool] = lambda partition: store.decode_partition(partition) in values  # noqa: E731
    snapshot_id = FileStoreCommit(store, commit_user=commit_user).commit([], overwrite=Overwrite(accept))
    return PartitionExpireResult(specs, snapshot_id, dry_run)
