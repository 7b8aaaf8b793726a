"""Paimon 1.x/2.0 features we do not implement are refused by name (the Java 2.0 side: test_java2_features)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, UnsupportedFeatureError
from table_format.types import parse_type


@pytest.mark.parametrize("text", ["VARIANT", "BLOB NOT NULL", "VECTOR<FLOAT, 4>", {"type": "VECTOR", "element": "FLOAT"}])
def test_newer_types_refused_by_name(text):
    with pytest.raises(UnsupportedFeatureError, match=r"BLOB|VARIANT|VECTOR"):
        parse_type(text)


@pytest.mark.parametrize(("option", "value", "feature"), [
    ("row-tracking.enabled", "true", "row tracking"),
    ("data-evolution.enabled", "true", "data evolution"),
    ("bucket", "-2", "postpone bucket"),
])
def test_table_turned_to_a_newer_feature_is_refused_on_load(warehouse, option, value, feature):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int32())]), primary_keys=["id"],
                                 options={"bucket": "1"})
    schema_file = Path(table.path) / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    schema["options"][option] = value  # as another engine's ALTER TABLE would leave it
    schema_file.write_text(json.dumps(schema))
    with pytest.raises(UnsupportedFeatureError, match=feature):
        catalog.load_table("db.t")
