"""The streaming pipeline of docs/spark.md (files -> a primary-key table -> its changelog -> totals) runs as printed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "spark.md"


def pipeline_block() -> str:
    section = DOC.read_text().split("### A pipeline without Kafka", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "docs/spark.md lost its streaming pipeline block"
    return match.group(1)


@pytest.mark.slow
def test_docs_streaming_pipeline_runs(spark: Any) -> None:
    del spark  # the block's spark_session() returns the session fixture's SparkSession
    exec(compile(pipeline_block(), str(DOC), "exec"), {})  # the block asserts its result
