"""Partition specs ({"dt": "2024-05-14"}, possibly partial) as predicates on partition BinaryRows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from table_format.arrow_types import to_arrow_type
from table_format.errors import SchemaError
from table_format.store.file_store import FileStore


def partition_spec_filter(
    store: FileStore, specs: Sequence[Mapping[str, Any]], *, argument: str = "partitions"
) -> Callable[[bytes], bool]:
    """Accepts a partition when it matches any of the specs (each a subset of the partition keys)."""
    keys = list(store.schema.partition_keys)
    table = store.identifier
    if not keys:
        raise SchemaError(f"table {table!r} is not partitioned; {argument} must be None")
    if isinstance(specs, Mapping):
        specs = [specs]
    wanted: list[dict[str, Any]] = []
    for spec in specs:
        if not isinstance(spec, Mapping):
            raise SchemaError(f"table {table!r}: {argument} must be a list of dicts, got {spec!r}")
        unknown = [k for k in spec if k not in keys]
        if unknown:
            raise SchemaError(
                f"table {table!r}: {argument} spec {dict(spec)} names non-partition columns {unknown} "
                f"(partition keys: {keys})"
            )
        converted = {}
        for k, v in spec.items():
            arrow_type = to_arrow_type(store.schema.field(k).type)
            try:
                converted[k] = pa.array([v]).cast(arrow_type).to_pylist()[0] if v is not None else None
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise SchemaError(
                    f"table {table!r}: partition value {v!r} does not fit column {k!r} ({arrow_type})"
                ) from None
        wanted.append(converted)
    cache: dict[bytes, bool] = {}

    def accept(partition: bytes) -> bool:
        hit = cache.get(partition)
        if hit is None:
            values = dict(zip(keys, store.decode_partition(partition), strict=True))
            hit = any(all(values[k] == v for k, v in w.items()) for w in wanted)
            cache[partition] = hit
        return hit

    return accept
