"""Iceberg manifests and manifest lists (Avro with Iceberg field ids), written and read back with fastavro.

The record layouts are Iceberg's v2 `manifest_entry` / `manifest_file` with the field ids of the Iceberg spec; format
version 3 adds the data file's `first_row_id` (null: inherited), `referenced_data_file`, `content_offset` and
`content_size_in_bytes` (deletion vectors in Puffin files) and the manifest's `first_row_id`. Each file also carries
the key-value metadata the spec asks for (schema, partition spec, format version, content).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import fastavro

from table_format.iceberg.types import PartitionField, avro_type, partition_spec_json

STATUS_EXISTING, STATUS_ADDED, STATUS_DELETED = 0, 1, 2
CONTENT_DATA, CONTENT_DELETES = 0, 1  # manifest content; a data_file's content 1 is position deletes


def _map(key_id: int, value_id: int, value_type: str) -> Any:
    return ["null", {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": f"k{key_id}_v{value_id}",
        "fields": [{"name": "key", "type": "int", "field-id": key_id},
                   {"name": "value", "type": value_type, "field-id": value_id}]}}]


_V3_DATA_FILE_FIELDS = [
    {"name": "first_row_id", "type": ["null", "long"], "default": None, "field-id": 142},
    {"name": "referenced_data_file", "type": ["null", "string"], "default": None, "field-id": 143},
    {"name": "content_offset", "type": ["null", "long"], "default": None, "field-id": 144},
    {"name": "content_size_in_bytes", "type": ["null", "long"], "default": None, "field-id": 145},
]


def manifest_entry_schema(partition: Sequence[PartitionField], version: int = 2) -> dict[str, Any]:
    part = {"type": "record", "name": "r102", "fields": [
        {"name": f.name, "type": ["null", avro_type(f.type_name)], "default": None, "field-id": f.field_id}
        for f in partition]}
    data_file = {"type": "record", "name": "r2", "fields": [
        {"name": "content", "type": "int", "field-id": 134},
        {"name": "file_path", "type": "string", "field-id": 100},
        {"name": "file_format", "type": "string", "field-id": 101},
        {"name": "partition", "type": part, "field-id": 102},
        {"name": "record_count", "type": "long", "field-id": 103},
        {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
        {"name": "null_value_counts", "type": _map(121, 122, "long"), "default": None, "field-id": 110},
        {"name": "lower_bounds", "type": _map(126, 127, "bytes"), "default": None, "field-id": 125},
        {"name": "upper_bounds", "type": _map(129, 130, "bytes"), "default": None, "field-id": 128},
        *(_V3_DATA_FILE_FIELDS if version >= 3 else []),
    ]}
    return {"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "snapshot_id", "type": ["null", "long"], "default": None, "field-id": 1},
        {"name": "sequence_number", "type": ["null", "long"], "default": None, "field-id": 3},
        {"name": "file_sequence_number", "type": ["null", "long"], "default": None, "field-id": 4},
        {"name": "data_file", "type": data_file, "field-id": 2},
    ]}


MANIFEST_FILE_SCHEMA: dict[str, Any] = {"type": "record", "name": "manifest_file", "fields": [
    {"name": "manifest_path", "type": "string", "field-id": 500},
    {"name": "manifest_length", "type": "long", "field-id": 501},
    {"name": "partition_spec_id", "type": "int", "field-id": 502},
    {"name": "content", "type": "int", "field-id": 517},
    {"name": "sequence_number", "type": "long", "field-id": 515},
    {"name": "min_sequence_number", "type": "long", "field-id": 516},
    {"name": "added_snapshot_id", "type": "long", "field-id": 503},
    {"name": "added_files_count", "type": "int", "field-id": 504},
    {"name": "existing_files_count", "type": "int", "field-id": 505},
    {"name": "deleted_files_count", "type": "int", "field-id": 506},
    {"name": "added_rows_count", "type": "long", "field-id": 512},
    {"name": "existing_rows_count", "type": "long", "field-id": 513},
    {"name": "deleted_rows_count", "type": "long", "field-id": 514},
    {"name": "partitions", "type": ["null", {"type": "array", "element-id": 508, "items": {
        "type": "record", "name": "r508", "fields": [
            {"name": "contains_null", "type": "boolean", "field-id": 509},
            {"name": "contains_nan", "type": ["null", "boolean"], "default": None, "field-id": 518},
            {"name": "lower_bound", "type": ["null", "bytes"], "default": None, "field-id": 510},
            {"name": "upper_bound", "type": ["null", "bytes"], "default": None, "field-id": 511}]}}],
     "default": None, "field-id": 507},
]}
MANIFEST_FILE_SCHEMA_V3: dict[str, Any] = {**MANIFEST_FILE_SCHEMA, "fields": [
    *MANIFEST_FILE_SCHEMA["fields"], {"name": "first_row_id", "type": ["null", "long"], "default": None,
                                      "field-id": 520}]}


@dataclass(frozen=True)
class ManifestFile:
    """One entry of a manifest list, as written (paths absolute, as Iceberg readers expect)."""

    record: dict[str, Any]

    @property
    def path(self) -> str:
        return str(self.record["manifest_path"])


def _codec(compression: str) -> str:
    return {"none": "null", "uncompressed": "null"}.get(compression, compression)


def encode_manifest(entries: Iterable[dict[str, Any]], *, partition: Sequence[PartitionField],
                    schema_json: dict[str, Any], compression: str, version: int = 2,
                    content: int = CONTENT_DATA) -> bytes:
    buf = io.BytesIO()
    metadata = {"schema": json.dumps(schema_json), "schema-id": str(schema_json["schema-id"]),
                "partition-spec": json.dumps(partition_spec_json(partition)["fields"]),
                "partition-spec-id": "0", "format-version": str(version),
                "content": "deletes" if content == CONTENT_DELETES else "data"}
    fastavro.writer(buf, fastavro.parse_schema(manifest_entry_schema(partition, version)), entries,
                    codec=_codec(compression), metadata=metadata)
    return buf.getvalue()


def encode_manifest_list(manifests: Iterable[dict[str, Any]], *, snapshot_id: int, parent_id: int | None,
                         compression: str, version: int = 2, first_row_id: int | None = None) -> bytes:
    buf = io.BytesIO()
    metadata = {"snapshot-id": str(snapshot_id), "parent-snapshot-id": str(parent_id) if parent_id else "null",
                "sequence-number": str(snapshot_id), "format-version": str(version)}
    if first_row_id is not None:
        metadata["first-row-id"] = str(first_row_id)
    schema = MANIFEST_FILE_SCHEMA_V3 if version >= 3 else MANIFEST_FILE_SCHEMA
    fastavro.writer(buf, fastavro.parse_schema(schema), manifests, codec=_codec(compression), metadata=metadata)
    return buf.getvalue()


def decode(data: bytes) -> list[dict[str, Any]]:
    """The records of a manifest or manifest list we wrote (logical types left raw)."""
    return [record for record in fastavro.reader(io.BytesIO(data)) if isinstance(record, dict)]


def assign_row_ids(manifests: Sequence[dict[str, Any]], next_row_id: int) -> tuple[list[dict[str, Any]], int]:
    """Format version 3 row lineage: each data manifest without a `first_row_id` gets the next free one (its files
    inherit theirs from it); returns the manifests and how many row ids were assigned."""
    out: list[dict[str, Any]] = []
    assigned = 0
    for m in manifests:
        if m.get("content", CONTENT_DATA) == CONTENT_DATA and m.get("first_row_id") is None:
            m = {**m, "first_row_id": next_row_id + assigned}
            assigned += m["added_rows_count"] + m["existing_rows_count"]
        out.append(m)
    return out, assigned
