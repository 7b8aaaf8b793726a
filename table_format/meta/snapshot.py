"""Snapshot and tag JSON files (snapshot/snapshot-N, tag/tag-NAME).

Mirrors org.apache.paimon.Snapshot (+ Snapshot.CommitKind) and org.apache.paimon.tag.Tag, serialised the
way Paimon's JsonSerdeUtil does it: Jackson's default pretty printer (2-space indent, `" : "`, `{ }` for an
empty object, arrays inline as `[ a, b ]`), keys in Java's declaration order, no trailing newline.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any

from table_format.errors import CorruptMetadataError

__all__ = [
    "BATCH_COMMIT_IDENTIFIER",
    "CURRENT_VERSION",
    "CommitKind",
    "Snapshot",
    "Tag",
    "jackson_pretty",
    "tag_from_json",
    "tag_to_json",
]

CURRENT_VERSION = 3  # Snapshot.CURRENT_VERSION
BATCH_COMMIT_IDENTIFIER = 9223372036854775807  # BatchWriteBuilder.COMMIT_IDENTIFIER (Long.MAX_VALUE)


class CommitKind(str, Enum):
    """org.apache.paimon.Snapshot.CommitKind."""

    APPEND = "APPEND"
    COMPACT = "COMPACT"
    OVERWRITE = "OVERWRITE"
    ANALYZE = "ANALYZE"


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Content of snapshot/snapshot-<id> (org.apache.paimon.Snapshot); every key of format digest 3.1."""

    id: int
    schema_id: int
    base_manifest_list: str
    delta_manifest_list: str
    commit_user: str
    commit_identifier: int
    commit_kind: CommitKind
    time_millis: int
    total_record_count: int
    delta_record_count: int
    version: int = CURRENT_VERSION
    uuid: str | None = None
    base_manifest_list_size: int | None = None
    delta_manifest_list_size: int | None = None
    changelog_manifest_list: str | None = None
    changelog_manifest_list_size: int | None = None
    index_manifest: str | None = None
    writer_version: str | None = None
    log_offsets: Mapping[int, int] | None = None  # <= 1.3 only; read and kept, never set by our writer
    changelog_record_count: int | None = None
    watermark: int | None = None
    statistics: str | None = None
    properties: Mapping[str, str] | None = None
    next_row_id: int | None = None
    operation: str | None = None

    def _json_obj(self) -> dict[str, Any]:
        o: dict[str, Any] = {"version": self.version}
        if self.uuid is not None:
            o["uuid"] = self.uuid
        o["id"] = self.id
        o["schemaId"] = self.schema_id
        o["baseManifestList"] = self.base_manifest_list
        if self.base_manifest_list_size is not None:
            o["baseManifestListSize"] = self.base_manifest_list_size
        o["deltaManifestList"] = self.delta_manifest_list
        if self.delta_manifest_list_size is not None:
            o["deltaManifestListSize"] = self.delta_manifest_list_size
        o["changelogManifestList"] = self.changelog_manifest_list  # null kept, as releases <= 1.3 write it
        if self.changelog_manifest_list_size is not None:
            o["changelogManifestListSize"] = self.changelog_manifest_list_size
        if self.index_manifest is not None:
            o["indexManifest"] = self.index_manifest
        o["commitUser"] = self.commit_user
        if self.writer_version is not None:
            o["writerVersion"] = self.writer_version
        o["commitIdentifier"] = self.commit_identifier
        o["commitKind"] = CommitKind(self.commit_kind).value
        o["timeMillis"] = self.time_millis
        if self.log_offsets is not None:
            o["logOffsets"] = {str(k): v for k, v in self.log_offsets.items()}
        o["totalRecordCount"] = self.total_record_count
        o["deltaRecordCount"] = self.delta_record_count
        for key, value in (
            ("changelogRecordCount", self.changelog_record_count),
            ("watermark", self.watermark),
            ("statistics", self.statistics),
            ("properties", None if self.properties is None else dict(self.properties)),
            ("nextRowId", self.next_row_id),
            ("operation", self.operation),
        ):
            if value is not None:
                o[key] = value
        return o

    def to_json(self) -> str:
        """The snapshot file's text, byte-for-byte as Java's JsonSerdeUtil would print it."""
        return jackson_pretty(self._json_obj())

    @staticmethod
    def from_json(text: str | bytes, *, source: str = "snapshot") -> Snapshot:
        """Parse a snapshot (or tag) file; unknown keys are ignored, garbage is a CorruptMetadataError."""
        return _snapshot_from_obj(_load_object(text, source), source)


@dataclass(frozen=True, slots=True)
class Tag:
    """Content of tag/tag-<name>: a snapshot plus creation time and retention (org.apache.paimon.tag.Tag)."""

    snapshot: Snapshot
    create_time: _dt.datetime | None = None  # naive local date-time (LocalDateTime)
    time_retained: _dt.timedelta | None = None

    def to_json(self) -> str:
        return tag_to_json(self.snapshot, self.create_time, self.time_retained)


def tag_to_json(
    snapshot: Snapshot, create_time: _dt.datetime | None, time_retained: _dt.timedelta | None = None
) -> str:
    """Tag file text: the snapshot's keys, then `tagCreateTime` (Jackson array) and `tagTimeRetained` (seconds)."""
    o = snapshot._json_obj()
    if create_time is not None:
        o["tagCreateTime"] = _local_date_time_array(create_time)
    if time_retained is not None:
        o["tagTimeRetained"] = _RawNumber(_duration_seconds(time_retained))
    return jackson_pretty(o)


def tag_from_json(text: str | bytes, *, source: str = "tag") -> Tag:
    """Parse a tag file; a tag without tagCreateTime/tagTimeRetained (older writers) gets None for them."""
    obj = _load_object(text, source)
    snapshot = _snapshot_from_obj(obj, source)
    try:
        raw_time = obj.get("tagCreateTime")
        create_time = None if raw_time is None else _parse_local_date_time(raw_time)
        raw_ret = obj.get("tagTimeRetained")
        retained = None if raw_ret is None else _parse_duration(raw_ret)
    except (TypeError, ValueError, ArithmeticError) as e:
        raise CorruptMetadataError(f"{source}: bad tag time ({e})") from None
    return Tag(snapshot, create_time, retained)


# ---- parsing ------------------------------------------------------------------------------------------------------


def _load_object(text: str | bytes, source: str) -> dict[str, Any]:
    try:
        obj = json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise CorruptMetadataError(f"{source}: not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise CorruptMetadataError(f"{source}: expected a JSON object, got {type(obj).__name__}")
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _req_int(obj: Mapping[str, Any], key: str, source: str) -> int:
    v = obj.get(key)
    if v is None:
        raise CorruptMetadataError(f"{source}: missing required key {key!r}")
    return _as_int(v, key, source)


def _opt_int(obj: Mapping[str, Any], key: str, source: str) -> int | None:
    v = obj.get(key)
    return None if v is None else _as_int(v, key, source)


def _as_int(v: Any, key: str, source: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise CorruptMetadataError(f"{source}: {key!r} must be an integer, got {v!r}")
    return v


def _req_str(obj: Mapping[str, Any], key: str, source: str) -> str:
    v = obj.get(key)
    if v is None:
        raise CorruptMetadataError(f"{source}: missing required key {key!r}")
    if not isinstance(v, str):
        raise CorruptMetadataError(f"{source}: {key!r} must be a string, got {v!r}")
    return v


def _opt_str(obj: Mapping[str, Any], key: str, source: str) -> str | None:
    v = obj.get(key)
    if v is not None and not isinstance(v, str):
        raise CorruptMetadataError(f"{source}: {key!r} must be a string, got {v!r}")
    return v


def _snapshot_from_obj(obj: Mapping[str, Any], source: str) -> Snapshot:
    version = _opt_int(obj, "version", source)
    version = 1 if version is None else version  # Snapshot: missing version means 1 (Paimon <= 0.3)
    if version > CURRENT_VERSION:
        raise CorruptMetadataError(f"{source}: snapshot version {version} is newer than supported ({CURRENT_VERSION})")
    raw_kind = _req_str(obj, "commitKind", source)
    try:
        kind = CommitKind(raw_kind)
    except ValueError:
        raise CorruptMetadataError(f"{source}: unknown commitKind {raw_kind!r}") from None
    log_offsets = obj.get("logOffsets")
    properties = obj.get("properties")
    try:
        offsets = (
            None if log_offsets is None else {int(k): _as_int(v, "logOffsets", source) for k, v in log_offsets.items()}
        )
        props = None if properties is None else {str(k): str(v) for k, v in properties.items()}
    except (AttributeError, ValueError) as e:
        raise CorruptMetadataError(f"{source}: malformed logOffsets/properties ({e})") from None
    return Snapshot(
        id=_req_int(obj, "id", source),
        schema_id=_req_int(obj, "schemaId", source),
        base_manifest_list=_req_str(obj, "baseManifestList", source),
        delta_manifest_list=_req_str(obj, "deltaManifestList", source),
        commit_user=_req_str(obj, "commitUser", source),
        commit_identifier=_req_int(obj, "commitIdentifier", source),
        commit_kind=kind,
        time_millis=_req_int(obj, "timeMillis", source),
        # Java >= 1.4 reads these as primitive longs: missing/null becomes 0 (only Paimon <= 0.3 left them out)
        total_record_count=_opt_int(obj, "totalRecordCount", source) or 0,
        delta_record_count=_opt_int(obj, "deltaRecordCount", source) or 0,
        version=version,
        uuid=_opt_str(obj, "uuid", source),
        base_manifest_list_size=_opt_int(obj, "baseManifestListSize", source),
        delta_manifest_list_size=_opt_int(obj, "deltaManifestListSize", source),
        changelog_manifest_list=_opt_str(obj, "changelogManifestList", source),
        changelog_manifest_list_size=_opt_int(obj, "changelogManifestListSize", source),
        index_manifest=_opt_str(obj, "indexManifest", source),
        writer_version=_opt_str(obj, "writerVersion", source),
        log_offsets=offsets,
        changelog_record_count=_opt_int(obj, "changelogRecordCount", source),
        watermark=_opt_int(obj, "watermark", source),
        statistics=_opt_str(obj, "statistics", source),
        properties=props,
        next_row_id=_opt_int(obj, "nextRowId", source),
        operation=_opt_str(obj, "operation", source),
    )


# ---- java.time as Jackson's JavaTimeModule writes it ------------------------------------------------------------


def _local_date_time_array(t: _dt.datetime) -> list[int]:
    """LocalDateTimeSerializer array form: seconds only if non-zero (or nanos are), nanos only if non-zero."""
    out = [t.year, t.month, t.day, t.hour, t.minute]
    nanos = t.microsecond * 1000
    if t.second or nanos:
        out.append(t.second)
        if nanos:
            out.append(nanos)
    return out


def _parse_local_date_time(raw: Any) -> _dt.datetime:
    if isinstance(raw, str):
        return _dt.datetime.fromisoformat(raw)
    if not isinstance(raw, list) or not 5 <= len(raw) <= 7 or not all(type(x) is int for x in raw):
        raise ValueError(f"tagCreateTime {raw!r} is not a LocalDateTime array")
    y, mo, d, h, mi = raw[:5]
    sec = raw[5] if len(raw) > 5 else 0
    nanos = raw[6] if len(raw) > 6 else 0
    if not 0 <= nanos <= 999_999_999:
        raise ValueError(f"tagCreateTime nanos {nanos} out of range")
    return _dt.datetime(y, mo, d, h, mi, sec, nanos // 1000)


def _duration_seconds(d: _dt.timedelta) -> str:
    """DurationSerializer: seconds with 9 fraction digits (Jackson DecimalUtils.toDecimal); zero is `0.0`."""
    total_us = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
    seconds, micros = divmod(total_us, 1_000_000)  # floor, like Duration.getSeconds()/getNano()
    if seconds == 0 and micros == 0:
        return "0.0"
    return f"{seconds}.{micros * 1000:09d}"


def _parse_duration(raw: Any) -> _dt.timedelta:
    if isinstance(raw, bool) or not isinstance(raw, (int, Decimal, str)):
        raise ValueError(f"tagTimeRetained {raw!r} is not a number of seconds")
    value = Decimal(raw)
    if not value.is_finite():
        raise ValueError(f"tagTimeRetained {raw!r} is not finite")
    micros = int((value * 1_000_000).to_integral_value(rounding="ROUND_FLOOR"))
    return _dt.timedelta(microseconds=micros)


# ---- Jackson DefaultPrettyPrinter ---------------------------------------------------------------------------------


class _RawNumber(str):
    """A JSON number kept as its exact text (BigDecimal output such as 5.000000000)."""


def _scalar(v: Any) -> str:
    if isinstance(v, _RawNumber):
        return str(v)
    if isinstance(v, Enum):
        v = v.value
    return json.dumps(v, ensure_ascii=False)


def jackson_pretty(value: Any, level: int = 0) -> str:
    """Render like Jackson's DefaultPrettyPrinter (objects indented by 2 spaces, arrays inline)."""
    if isinstance(value, Mapping):
        if not value:
            return "{ }"
        pad = "  " * (level + 1)
        items = [
            f"{pad}{json.dumps(str(k), ensure_ascii=False)} : {jackson_pretty(v, level + 1)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, level) for v in value) + " ]"
    return _scalar(value)
