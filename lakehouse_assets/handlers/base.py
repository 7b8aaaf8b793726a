"""Type handlers: how one Python dataframe type is written to and read from a Paimon table.

The IO manager owns naming, partitions, modes and metadata; a handler only moves data. Arrow is the pivot:
`ArrowPivotHandler` subclasses convert to and from a pyarrow Table and reuse table_format's writer and reader.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from lakehouse_assets.incremental import ChangeStep
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

    def column_sources(self, data: Any) -> dict[str, list[tuple[str, str]]] | None:
        """Output column -> (table path, column) it is computed from, when the data knows (a Spark plan)."""
        return None

    @abstractmethod
    def distinct(self, data: Any, columns: Sequence[str]) -> pa.Table:
        """The distinct combinations of `columns` in prepared data (small: one row per partition)."""

    @abstractmethod
    def write(self, catalog: FileSystemCatalog, table: Table, data: Any, *, mode: str,
              overwrite_partitions: Sequence[Mapping[str, Any]] | None, schema_mode: str) -> int | None:
        """One atomic commit of prepared data (`mode` "append" or "overwrite"); the new snapshot id or None."""

    def write_with_metadata(self, catalog: FileSystemCatalog, table: Table, data: Any, *, mode: str,
                            overwrite_partitions: Sequence[Mapping[str, Any]] | None,
                            schema_mode: str) -> tuple[int | None, dict[str, Any]]:
        """`write`, with materialization metadata about how it wrote (e.g. which Spark path); default none."""
        return self.write(catalog, table, data, mode=mode, overwrite_partitions=overwrite_partitions,
                          schema_mode=schema_mode), {}

    @abstractmethod
    def read(self, table: Table, target_type: Any, *, filter: Any, columns: Sequence[str] | None,
             snapshot_id: int | None) -> Any:
        """The merged view of `table` (at `snapshot_id`, default latest) as `target_type`."""

    @abstractmethod
    def read_changes(self, table: Table, target_type: Any, *, steps: Sequence[ChangeStep],
                     columns: Sequence[str] | None) -> Any:
        """The changes the steps describe (see `lakehouse_assets.incremental.change_plan`), in order, with a
        ``_row_kind`` column (+I, -U, +U, -D)."""


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

    def read_changes(self, table: Table, target_type: Any, *, steps: Sequence[ChangeStep],
                     columns: Sequence[str] | None) -> Any:
        pieces: list[pa.Table] = []
        for step in steps:
            if step.kind == "changes":
                pieces.append(table.changes(step.start, step.end, columns=columns))
                continue
            if step.kind == "replace":
                before = table.scan(filter=step.partition_filter(), columns=columns, snapshot_id=step.start)
                pieces.append(_with_kind(before.to_arrow(), "-D"))
            after = table.scan(filter=step.partition_filter(), columns=columns, snapshot_id=step.end)
            pieces.append(_with_kind(after.to_arrow(), "+I"))
        return self.from_arrow(_concat(pieces), target_type)


def _with_kind(data: pa.Table, kind: str) -> pa.Table:
    return data.append_column(pa.field(ROW_KIND, pa.string(), nullable=False),
                              pa.repeat(pa.scalar(kind, pa.string()), data.num_rows))


def _concat(pieces: Sequence[pa.Table]) -> pa.Table:
    """One table of change pieces (nullable columns as table.changes returns them; later columns added)."""
    relaxed = [p.cast(pa.schema([f.with_nullable(f.name != ROW_KIND) for f in p.schema])) for p in pieces]
    return relaxed[0] if len(relaxed) == 1 else pa.concat_tables(relaxed, promote_options="permissive")
