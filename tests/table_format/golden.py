"""The golden vectors read off Java-written tables (../shared/golden): loading and typed values."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from table_format.types import DataType, DateType, DecimalType, DoubleType, FloatType, TimestampType

GOLDEN = Path(__file__).resolve().parents[2] / ".." / "shared" / "golden"


def load_jsonl(name: str) -> list[dict[str, Any]]:
    """The records of golden/<name> (none when the file is missing: the tests that need it skip)."""
    path = GOLDEN / name
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def needs(records: list[Any], name: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not records, reason=f"golden vectors not found at {GOLDEN / name}")


def golden_value(raw: Any, t: DataType) -> Any:
    """A JSON value of the golden files as the Python value of type `t`."""
    if raw is None:
        return None
    if isinstance(t, DecimalType):
        return Decimal(raw)
    if isinstance(t, DateType):
        return dt.date.fromisoformat(raw)
    if isinstance(t, TimestampType):
        return dt.datetime.fromisoformat(raw)
    if isinstance(t, (FloatType, DoubleType)):
        return float(raw)  # "NaN" / "Infinity" come as strings
    return raw
