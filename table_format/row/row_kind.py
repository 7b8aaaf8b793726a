"""Row kinds (+I, -U, +U, -D) and the physical system columns of primary-key data files.

Mirrors org.apache.paimon.types.RowKind and KeyValue / SpecialFields (_KEY_ prefix, _SEQUENCE_NUMBER,
_VALUE_KIND and their reserved field ids).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.errors import SchemaError

ROW_KIND_COLUMN = "_row_kind"
KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
KEY_FIELD_ID_START = 2147483647 // 2
SEQUENCE_NUMBER_FIELD_ID = 2147483646
VALUE_KIND_FIELD_ID = 2147483645


class RowKind(IntEnum):
    INSERT = 0  # +I
    UPDATE_BEFORE = 1  # -U
    UPDATE_AFTER = 2  # +U
    DELETE = 3  # -D

    @property
    def short(self) -> str:
        return ("+I", "-U", "+U", "-D")[self.value]


SHORT_STRINGS = ("+I", "-U", "+U", "-D")


def row_kinds_from_column(column: pa.Array | pa.ChunkedArray, *, table: str, name: str = ROW_KIND_COLUMN) -> pa.Array:
    """The `_row_kind` column (or the `rowkind.field` column `name`: "+I".."-D" strings or 0..3 ints) as int8."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        raise SchemaError(f"table {table!r}: column {name!r} has nulls; use +I, -U, +U or -D")
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        idx = pc.index_in(column, value_set=pa.array(SHORT_STRINGS))
        if idx.null_count:
            bad = pc.filter(column, pc.is_null(idx))[0].as_py()
            raise SchemaError(
                f"table {table!r}: column {name!r} holds {bad!r}; allowed are +I, -U, +U, -D or 0..3"
            )
        return pc.cast(idx, pa.int8())
    if pa.types.is_integer(column.type):
        values = column.to_numpy(zero_copy_only=False)
        if len(values) and (values.min() < 0 or values.max() > 3):
            bad = int(values[(values < 0) | (values > 3)][0])
            raise SchemaError(
                f"table {table!r}: column {name!r} holds {bad}; allowed are 0..3 (+I, -U, +U, -D)"
            )
        return pa.array(values.astype(np.int8), type=pa.int8())
    raise SchemaError(
        f"table {table!r}: column {name!r} must be string (+I, -U, +U, -D) or int8 0..3, "
        f"not {column.type}"
    )


def row_kind_strings(kinds: pa.Array | pa.ChunkedArray) -> pa.Array:
    """int8 kinds -> '+I'.. strings."""
    return pc.take(pa.array(SHORT_STRINGS), pc.cast(kinds, pa.int32()))
