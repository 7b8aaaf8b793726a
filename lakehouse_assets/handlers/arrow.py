"""pyarrow Table (and RecordBatchReader on output) <-> Paimon."""

from typing import Any

import pyarrow as pa

from lakehouse_assets.handlers.base import ArrowPivotHandler


class ArrowHandler(ArrowPivotHandler):
    supported_types = (pa.Table, pa.RecordBatchReader)

    def to_arrow(self, obj: Any) -> pa.Table:
        return obj.read_all() if isinstance(obj, pa.RecordBatchReader) else obj

    def from_arrow(self, data: pa.Table, target_type: Any) -> Any:
        if target_type is pa.RecordBatchReader:
            return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
        return data
