"""Type handlers: how one Python dataframe type is written to and read from a Paimon table.

The IO manager owns naming, partitions, modes and metadata; a handler only moves data. Arrow is the pivot:
`ArrowPivotHandler` subclasses convert to and from a pyarrow Table and reuse table_format's writer and reader.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from table_format import FileSystemCatalog, Table, write_table

ROW_KIND = "_row_kind"


class PaimonTypeHandler(ABC):
    """Moves one family of Python types (``supported_types``) in and out of Paimon tables."""

    supported_types: tuple[type, ...] = ()

    def prepare(self, obj: Any) -> Any:
        """The form the other methods take (computed once per output: e.g. a LazyFrame collected to Arrow)."""
        return obj

    @abstractmethod
    def schema(self, data: Any) -> pa.Schema:
        """The Arrow schema of prepared data."""

    @abstractmethod
    def distinct(self, data: Any, columns: Sequence[str]) -> pa.Table:
        """The distinct combinations of `columns` in prepared data (small: one row per partition)."""

    @abstractmethod
    def write(self, catalog: FileSystemCatalog, table: Table, data: Any, *, mode: str,
              overwrite_partitions: Sequence[Mapping[str, Any]] | None, schema_mode: str) -> int | None:
        """One atomic commit of prepared data (`mode` "append" or "overwrite"); the new snapshot id or None."""

    @abstractmethod
    def read(self, table: Table, target_type: Any, *, filter: Any, columns: Sequence[str] | None,
             snapshot_id: int | None) -> Any:
        """The merged view of `table` (at `snapshot_id`, default latest) as `target_type`."""

    @abstractmethod
    def read_changes(self, table: Table, target_type: Any, *, start: int | None, end: int,
                     columns: Sequence[str] | None) -> Any:
        """Rows changed after snapshot `start` up to `end`, with a ``_row_kind`` column (+I, -U, +U, -D).

        ``start=None`` means nothing was consumed yet: every row of snapshot `end`, each as +I.
        """


class ArrowPivotHandler(PaimonTypeHandler):
    """A handler whose type converts to and from a pyarrow Table."""

    @abstractmethod
    def to_arrow(self, obj: Any) -> pa.Table:
        """The object as a pyarrow Table."""

    @abstractmethod
    def from_arrow(self, data: pa.Table, target_type: Any) -> Any:
        """A pyarrow Table as `target_type`."""

    def prepare(self, obj: Any) -> pa.Table:
        return self.to_arrow(obj)

    def schema(self, data: pa.Table) -> pa.Schema:
        return data.schema

    def distinct(self, data: pa.Table, columns: Sequence[str]) -> pa.Table:
        return data.select(list(columns)).group_by(list(columns)).aggregate([])

    def write(self, catalog: FileSystemCatalog, table: Table, data: pa.Table, *, mode: str,
              overwrite_partitions: Sequence[Mapping[str, Any]] | None, schema_mode: str) -> int | None:
        return write_table(table, data, mode=mode, overwrite_partitions=overwrite_partitions, schema_mode=schema_mode)

    def read(self, table: Table, target_type: Any, *, filter: Any, columns: Sequence[str] | None,
             snapshot_id: int | None) -> Any:
        return self.from_arrow(table.scan(filter=filter, columns=columns, snapshot_id=snapshot_id).to_arrow(),
                               target_type)

    def read_changes(self, table: Table, target_type: Any, *, start: int | None, end: int,
                     columns: Sequence[str] | None) -> Any:
        if start is None:
            data = table.scan(columns=columns, snapshot_id=end).to_arrow()
            kinds = pa.array(["+I"] * data.num_rows, pa.string()) if data.num_rows else pa.array([], pa.string())
            data = data.append_column(pa.field(ROW_KIND, pa.string(), nullable=False), kinds)
        else:
            data = table.changes(start, end, columns=columns)
        return self.from_arrow(data, target_type)

