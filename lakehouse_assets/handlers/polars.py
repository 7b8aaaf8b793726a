"""polars DataFrame and LazyFrame <-> Paimon (through Arrow, zero-copy where polars allows)."""

from typing import Any

import polars as pl
import pyarrow as pa

from lakehouse_assets.handlers.base import ArrowPivotHandler


class PolarsHandler(ArrowPivotHandler):
    supported_types = (pl.DataFrame, pl.LazyFrame)

    def to_arrow(self, obj: Any) -> pa.Table:
        frame = obj.collect() if isinstance(obj, pl.LazyFrame) else obj
        return frame.to_arrow()

    def from_arrow(self, data: pa.Table, target_type: Any) -> Any:
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        return frame.lazy() if target_type is pl.LazyFrame else frame
