"""Reads a DataSplit as Arrow: a raw path when no key repeats, a vectorized merge-on-read otherwise.

Mirrors KeyValueFileStoreRead / MergeFileSplitRead (sort-merge of sorted runs with the merge
function) and RawFileSplitRead. The merge is columnar: concatenate the key, sequence and kind
columns of every file of the split, sort once by key then sequence (polars), pick the winning row
of each key, and take the value columns by index. Files written under an older schema are mapped
to the current one by field id (SchemaEvolutionUtil); both PK file layouts (with and without
`_KEY_` columns) read the same because keys come from the value columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_format.data.arrow_schema import to_arrow_field
from table_format.data.file_reader import read_data_file
from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.options import MergeEngine
from table_format.predicate import Predicate
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND, RowKind
from table_format.row.sort import first_of_runs, last_of_runs, sortable, stable_sort_indices
from table_format.scan.split import DataSplit
from table_format.store.file_store import FileStore


class SplitReader:
    """Reads splits of one table with a fixed projection."""

    def __init__(self, store: FileStore, *, columns: Sequence[str] | None = None,
                 predicate: Predicate | None = None) -> None:
        self.store = store
        schema = store.schema
        if columns is not None:
            unknown = [c for c in columns if c not in schema.field_names]
            if unknown:
                raise SchemaError(
                    f"table {store.identifier!r}: unknown columns {unknown} (columns: {schema.field_names})"
                )
        self.columns = list(columns) if columns is not None else schema.field_names
        self.predicate = predicate
        needed = list(self.columns)
        if predicate is not None:
            needed += [c for c in predicate.fields() if c not in needed]
        self.key_names = [f.name for f in store.key_fields]
        self.sequence_fields = list(store.options.sequence_fields) if store.has_primary_key else []
        self.read_columns = needed
        self.merge_columns = needed + [c for c in self.key_names + self.sequence_fields if c not in needed]
        self.output_schema = pa.schema([to_arrow_field(schema.field(c)) for c in self.columns])

    # ---- file level ----------------------------------------------------------------------
    def read_data_file(self, split: DataSplit, index: int, names: Sequence[str], *,
                       system: Sequence[str] = ()) -> pa.Table:
        """Columns `names` (current schema) + system columns of one file of the split."""
        dv = split.deletion_files[index] if split.deletion_files else None
        return read_data_file(self.store, split.partition, split.bucket, split.files[index], names,
                              system=system, deletion_file=dv)

    # ---- split level ---------------------------------------------------------------------
    def read(self, split: DataSplit) -> pa.Table:
        store = self.store
        if not store.has_primary_key or split.raw_convertible:
            tables = [self.read_data_file(split, i, self.read_columns) for i in range(len(split.files))]
            result = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        else:
            result = self._merge(split)
        if self.predicate is not None:
            result = result.filter(self.predicate.to_arrow_expression())
        return self.project(result)

    def project(self, table: pa.Table) -> pa.Table:
        return pa.Table.from_arrays([table.column(c) for c in self.columns], schema=self.output_schema)

    def _merge(self, split: DataSplit) -> pa.Table:
        # read runs oldest first: when their sequence ranges do not overlap, input order is sequence order
        order = sorted(range(len(split.files)), key=lambda i: split.files[i].min_sequence_number)
        tables = [
            self.read_data_file(split, i, self.merge_columns, system=(SEQUENCE_NUMBER, VALUE_KIND)) for i in order
        ]
        data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        files = [split.files[i] for i in order]
        seq_ordered = not self.sequence_fields and all(
            a.max_sequence_number < b.min_sequence_number for a, b in zip(files, files[1:], strict=False)
        )
        keep = self._winners(data, seq_ordered=seq_ordered)
        return data.take(pa.array(keep))

    def _winners(self, data: pa.Table, *, seq_ordered: bool) -> np.ndarray:
        """Row indices of the merged result (one per surviving key), in key order."""
        engine = self.store.options.merge_engine
        keys = [sortable(data.column(k)) for k in self.key_names]
        order_keys = list(keys)
        if not seq_ordered:
            order_keys += [sortable(data.column(c)) for c in self.sequence_fields]
            order_keys.append(data.column(SEQUENCE_NUMBER).to_numpy())
        perm = stable_sort_indices(order_keys)
        sorted_keys = [k[perm] for k in keys]
        kinds = data.column(VALUE_KIND).to_numpy()[perm]
        retract = (kinds == RowKind.UPDATE_BEFORE) | (kinds == RowKind.DELETE)
        if engine == MergeEngine.FIRST_ROW:
            # first-row keeps the earliest insert of a key; retractions do not remove it
            inserts = perm[~retract]
            first = first_of_runs([k[~retract] for k in sorted_keys])
            return inserts[first]
        last = last_of_runs(sorted_keys)
        if engine in (MergeEngine.PARTIAL_UPDATE, MergeEngine.AGGREGATION) and not last.all():
            raise UnsupportedFeatureError(
                f"table {self.store.identifier!r}: merging several records of one key with merge-engine "
                f"{engine.value!r} is not supported yet; compact the table with Java Paimon first"
            )
        return perm[last & ~retract]
