"""Avro schemas of manifest, manifest-list and index-manifest files (the Java 1.4 field set).

Record names follow Java's AvroSchemaConverter: nested ROW field F of record R is named R + "_" + F.
"""

from __future__ import annotations

from typing import Any

_NAMESPACE = "org.apache.paimon.avro.generated"
_RECORD = "record"  # full name org.apache.paimon.avro.generated.record; nested records inherit the namespace


def _f(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type}


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


def _rec(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": fields}


def _top(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": _RECORD, "namespace": _NAMESPACE, "fields": fields}


def _stats_schema(name: str) -> dict[str, Any]:
    return _rec(
        name,
        [
            _f("_MIN_VALUES", "bytes"),
            _f("_MAX_VALUES", "bytes"),
            _opt("_NULL_COUNTS", {"type": "array", "items": ["null", "long"]}),
        ],
    )


_FILE_RECORD = _RECORD + "__FILE"

MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_KIND", "int"),
        _f("_PARTITION", "bytes"),
        _f("_BUCKET", "int"),
        _f("_TOTAL_BUCKETS", "int"),
        _f(
            "_FILE",
            _rec(
                _FILE_RECORD,
                [
                    _f("_FILE_NAME", "string"),
                    _f("_FILE_SIZE", "long"),
                    _f("_ROW_COUNT", "long"),
                    _f("_MIN_KEY", "bytes"),
                    _f("_MAX_KEY", "bytes"),
                    _f("_KEY_STATS", _stats_schema(_FILE_RECORD + "__KEY_STATS")),
                    _f("_VALUE_STATS", _stats_schema(_FILE_RECORD + "__VALUE_STATS")),
                    _f("_MIN_SEQUENCE_NUMBER", "long"),
                    _f("_MAX_SEQUENCE_NUMBER", "long"),
                    _f("_SCHEMA_ID", "long"),
                    _f("_LEVEL", "int"),
                    _f("_EXTRA_FILES", {"type": "array", "items": "string"}),
                    _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
                    _opt("_DELETE_ROW_COUNT", "long"),
                    _opt("_EMBEDDED_FILE_INDEX", "bytes"),
                    _opt("_FILE_SOURCE", "int"),
                    _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
                    _opt("_EXTERNAL_PATH", "string"),
                    _opt("_FIRST_ROW_ID", "long"),
                    _opt("_WRITE_COLS", {"type": "array", "items": "string"}),
                ],
            ),
        ),
    ],
)

MANIFEST_FILE_META_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_FILE_NAME", "string"),
        _f("_FILE_SIZE", "long"),
        _f("_NUM_ADDED_FILES", "long"),
        _f("_NUM_DELETED_FILES", "long"),
        _f("_PARTITION_STATS", _stats_schema(_RECORD + "__PARTITION_STATS")),
        _f("_SCHEMA_ID", "long"),
        _opt("_MIN_BUCKET", "int"),
        _opt("_MAX_BUCKET", "int"),
        _opt("_MIN_LEVEL", "int"),
        _opt("_MAX_LEVEL", "int"),
        _opt("_MIN_ROW_ID", "long"),
        _opt("_MAX_ROW_ID", "long"),
    ],
)

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_KIND", "int"),
        _f("_PARTITION", "bytes"),
        _f("_BUCKET", "int"),
        _f("_INDEX_TYPE", "string"),
        _f("_FILE_NAME", "string"),
        _f("_FILE_SIZE", "long"),
        _f("_ROW_COUNT", "long"),
        _opt(
            "_DELETIONS_VECTORS_RANGES",
            {
                "type": "array",
                "items": [
                    "null",
                    _rec(
                        _RECORD + "__DELETIONS_VECTORS_RANGES",
                        [
                            _f("f0", "string"),
                            _f("f1", "int"),
                            _f("f2", "int"),
                            _opt("_CARDINALITY", "long"),
                        ],
                    ),
                ],
            },
        ),
        _opt("_EXTERNAL_PATH", "string"),
        _opt(
            "_GLOBAL_INDEX",
            _rec(
                _RECORD + "__GLOBAL_INDEX",
                [
                    _f("_ROW_RANGE_START", "long"),
                    _f("_ROW_RANGE_END", "long"),
                    _f("_INDEX_FIELD_ID", "int"),
                    _opt("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
                    _opt("_INDEX_META", "bytes"),
                    _opt("_SOURCE_META", "bytes"),
                ],
            ),
        ),
    ],
)

