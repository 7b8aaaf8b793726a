"""Reads a DataSplit as Arrow: a raw path when no key repeats, a vectorized merge-on-read otherwise.

Mirrors KeyValueFileStoreRead / MergeFileSplitRead (sort-merge of sorted runs with the merge
function) and RawFileSplitRead. The merge is columnar: concatenate the files of the split (oldest
first) and hand them to `merge.merge_kv`, which sorts once by key then sequence and merges each
key's records with the table's merge engine. Files written under an older schema are mapped
to the current one by field id (SchemaEvolutionUtil); both PK file layouts (with and without
`_KEY_` columns) read the same because keys come from the value columns.

Filters: the part of a filter on primary-key columns alone (`Predicate.project`, so an OR with a value
predicate contributes nothing) is applied to every file's rows before the merge, and Parquet row groups
whose min/max statistics rule it out are not read (all versions of a key share the key); the whole filter
is applied after the merge. Splits whose rows are final (append tables, raw-convertible splits) take the
whole filter file by file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_field
from table_format.data.file_format import MAX_ROW_GROUP_ROWS
from table_format.data.file_reader import iter_data_file, read_data_file
from table_format.errors import SchemaError
from table_format.lsm.key_ranges import SYSTEM_ROW_BYTES, concat_pieces, estimated_bytes, file_key_ranges, row_bytes
from table_format.meta.manifest import DataFileMeta
from table_format.options import MergeEngine
from table_format.predicate import Predicate, equality_values
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND, RowKind
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
        # every version of a key shares the key: the part of the filter on key columns alone is applied to each
        # file's rows before the merge (pruning row groups by their statistics); the rest after the merge
        self.key_predicate = predicate.project(self.key_names) if predicate is not None and store.has_primary_key \
            else None
        # a filter pinning the first key column to a few values reads at most a row group per value and file
        pinned = equality_values(self.key_predicate, self.key_names[:1], max_combinations=1000)
        self.pinned_keys = len(pinned) if pinned is not None else None
        self.sequence_fields = list(store.options.sequence_fields) if store.has_primary_key else []
        self.read_columns = needed
        self.merge_spec = None
        if store.has_primary_key:
            from table_format.merge import merge_spec  # noqa: PLC0415 - lazy: reads of append tables never merge

            self.merge_spec = merge_spec(schema, table=store.identifier)
        # the merge engine may need more columns than projected: keys, sequence.field, sequence groups
        self.merge_columns = self.merge_spec.required_columns(needed) if self.merge_spec is not None else needed
        # Java 0.9 filters keys by file and row-group statistics only, and merges every row it read: the rows of
        # keys the filter excludes still reach the merge function, which refuses -U/-D records unless configured
        # to take them (partial-update, first-row, some aggregations). Those engines read the row groups whole and
        # merge the excluded rows holding retractions too, so a filtered read fails where Java's does.
        self.merge_excluded = (self.key_predicate is not None and self.merge_spec is not None
                               and self.merge_spec.engine != MergeEngine.DEDUPLICATE
                               and not self.merge_spec.ignore_delete)
        self.output_schema = pa.schema([to_arrow_field(schema.field(c)) for c in self.columns])
        self.budget = store.options.sort_spill_buffer_size
        self.row_bytes = row_bytes(pa.schema([to_arrow_field(schema.field(c)) for c in self.merge_columns])) \
            + SYSTEM_ROW_BYTES

    def is_large(self, split: DataSplit) -> bool:
        """Whether the split's decoded rows exceed the memory budget (`sort-spill-buffer-size`): it is then read
        in key ranges (merged splits) or file slices (raw splits) rather than whole. A read of a few keys
        (`pinned_keys`) decodes at most a row group per key and file."""
        if self.pinned_keys is not None:
            rows = sum(min(f.row_count, self.pinned_keys * MAX_ROW_GROUP_ROWS) for f in split.files)
            return rows * self.row_bytes > self.budget
        return estimated_bytes(split.files, self.row_bytes) > self.budget

    # ---- file level ----------------------------------------------------------------------
    def read_data_file(self, split: DataSplit, index: int, names: Sequence[str], *,
                       system: Sequence[str] = (), predicate: Predicate | None = None,
                       prune_only: bool = False) -> pa.Table:
        """Columns `names` (current schema) + system columns of one file of the split, rows matching `predicate`
        (`prune_only`: all rows of the row groups that may match)."""
        dv = split.deletion_files[index] if split.deletion_files else None
        return read_data_file(self.store, split.partition, split.bucket, split.files[index], names,
                              system=system, deletion_file=dv, predicate=predicate, prune_only=prune_only,
                              sorted_file=self.store.has_primary_key)

    # ---- split level ---------------------------------------------------------------------
    def read(self, split: DataSplit) -> pa.Table:
        """The split's rows, whole (see `iter_read` for a large split in bounded memory)."""
        if self.is_large(split):
            tables = list(self.iter_read(split))
            return pa.concat_tables(tables) if tables else self.output_schema.empty_table()
        return self._read_whole(split)

    def iter_read(self, split: DataSplit) -> Iterator[pa.Table]:
        """The split's rows in slices: one table for a split within the budget; otherwise merged key ranges
        (primary-key splits) or file slices, each about `sort-spill-buffer-size` of decoded rows."""
        if not self.is_large(split):
            yield self._read_whole(split)
            return
        store = self.store
        if not store.has_primary_key or split.raw_convertible:
            for i in range(len(split.files)):
                for t in self._iter_file(split, i, self.read_columns, predicate=self.predicate,
                                         batch_rows=self._batch_rows(1)):
                    yield self.project(t)
            return
        for merged in self.iter_merge(split):
            if self.predicate is not None and self.predicate != self.key_predicate:
                merged = merged.filter(self.predicate.to_arrow_expression())
            if merged.num_rows:
                yield self.project(merged)

    def _batch_rows(self, runs: int) -> int:
        return max(1, self.budget // (max(1, runs) * self.row_bytes))

    def _iter_file(self, split: DataSplit, index: int, names: Sequence[str], *, batch_rows: int,
                   system: Sequence[str] = (), predicate: Predicate | None = None,
                   prune_only: bool = False) -> Iterator[pa.Table]:
        dv = split.deletion_files[index] if split.deletion_files else None
        return iter_data_file(self.store, split.partition, split.bucket, split.files[index], names,
                              batch_rows=batch_rows, system=system, deletion_file=dv, predicate=predicate,
                              prune_only=prune_only)

    def _key_filter(self, data: pa.Table) -> pa.Table:
        """With `merge_excluded`: the rows of the keys the filter keeps; the excluded rows are merged (and dropped)
        when they hold -U/-D records, so that the merge engine refuses them as Java's does."""
        if not self.merge_excluded or self.key_predicate is None or not data.num_rows:
            return data
        rows = pa.array(np.arange(data.num_rows, dtype=np.int64))
        kept = data.append_column("__row", rows).filter(self.key_predicate.to_arrow_expression()).column("__row")
        mask = np.zeros(data.num_rows, dtype=bool)
        mask[kept.to_numpy()] = True
        if mask.all():
            return data
        mask_array = pa.array(mask)
        excluded = data.filter(pc.invert(mask_array))
        kinds = excluded.column(VALUE_KIND)
        if pc.any(pc.is_in(kinds, pa.array([int(RowKind.UPDATE_BEFORE), int(RowKind.DELETE)], pa.int8()))).as_py():
            from table_format.merge import merge_kv  # noqa: PLC0415 - lazy: reads of append tables never merge

            merge_kv(excluded, schema=self.store.schema, options=self.store.options, drop_retractions=True,
                     table=self.store.identifier, spec=self.merge_spec)
        return data.filter(mask_array)

    def iter_merge(self, split: DataSplit) -> Iterator[pa.Table]:
        """The merged rows of a primary-key split, key range by key range (lsm/key_ranges.py): the same rows
        as the whole-split merge, a bounded number of rows of each sorted run in memory."""
        order = sorted(range(len(split.files)), key=lambda i: split.files[i].min_sequence_number)
        files = [split.files[i] for i in order]
        seq_ordered = self._seq_ordered(files)
        system = (VALUE_KIND,) if seq_ordered else (SEQUENCE_NUMBER, VALUE_KIND)

        def read(position: int, batch_rows: int) -> Iterator[pa.Table]:
            return self._iter_file(split, order[position], self.merge_columns, batch_rows=batch_rows, system=system,
                                   predicate=self.key_predicate, prune_only=self.merge_excluded)

        ranges = file_key_ranges(files, self.key_names, self.store.key_types, budget=self.budget,
                                 per_row=self.row_bytes, read=read)
        for pieces in ranges:
            data = concat_pieces(pieces)
            if seq_ordered:  # input order is sequence order (see _merge)
                data = self._numbered(data)
            data = self._key_filter(data)
            from table_format.merge import merge_kv  # noqa: PLC0415 - lazy: reads of append tables never merge

            yield merge_kv(data, schema=self.store.schema, options=self.store.options, drop_retractions=True,
                           seq_ordered=seq_ordered, table=self.store.identifier, spec=self.merge_spec,
                           columns=self.read_columns)

    def _seq_ordered(self, files: Sequence[DataFileMeta]) -> bool:
        """Files (oldest first) whose sequence ranges do not overlap: input order is sequence order."""
        return not self.sequence_fields and all(
            a.max_sequence_number < b.min_sequence_number for a, b in zip(files, files[1:], strict=False)
        )

    def _read_whole(self, split: DataSplit) -> pa.Table:
        store = self.store
        if not store.has_primary_key or split.raw_convertible:
            # every row read is a final row: the whole filter applies file by file (object stores: files in parallel)
            tables = store.file_io.parallel_map(
                lambda i: self.read_data_file(split, i, self.read_columns, predicate=self.predicate),
                range(len(split.files)))
            result = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        else:
            result = self._merge(split)
            if self.predicate is not None and self.predicate != self.key_predicate:
                result = result.filter(self.predicate.to_arrow_expression())
        return self.project(result)

    def _read_for_merge(self, split: DataSplit, index: int, seq_ordered: bool) -> pa.Table:
        """A file of a merged split. A read whose files are in sequence order needs no `_SEQUENCE_NUMBER` (the rows'
        order is theirs; merged rows' numbers are not returned): it is numbered once the files are concatenated,
        when the merge engine needs numbers at all. `_VALUE_KIND` is always read: pypaimon 2.1 writes
        `deleteRowCount` 0 for files holding -D rows."""
        system = (VALUE_KIND,) if seq_ordered else (SEQUENCE_NUMBER, VALUE_KIND)
        return self.read_data_file(split, index, self.merge_columns, system=system, predicate=self.key_predicate,
                                   prune_only=self.merge_excluded)

    def _numbered(self, data: pa.Table) -> pa.Table:
        """Rows in sequence order given `_SEQUENCE_NUMBER` = their position (only engines that use it need it)."""
        assert self.merge_spec is not None
        if self.merge_spec.latest_wins:
            return data
        return data.append_column(pa.field(SEQUENCE_NUMBER, pa.int64(), nullable=False),
                                  pa.array(np.arange(data.num_rows, dtype=np.int64)))

    def project(self, table: pa.Table) -> pa.Table:
        return pa.Table.from_arrays([table.column(c) for c in self.columns], schema=self.output_schema)

    def _merge(self, split: DataSplit) -> pa.Table:
        # read runs oldest first: when their sequence ranges do not overlap, input order is sequence order
        order = sorted(range(len(split.files)), key=lambda i: split.files[i].min_sequence_number)
        files = [split.files[i] for i in order]
        seq_ordered = self._seq_ordered(files)
        tables = self.store.file_io.parallel_map(lambda i: self._read_for_merge(split, i, seq_ordered), order)
        data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        if seq_ordered:
            data = self._numbered(data)
        data = self._key_filter(data)
        from table_format.merge import merge_kv  # noqa: PLC0415 - lazy: reads of append tables never merge

        return merge_kv(data, schema=self.store.schema, options=self.store.options, drop_retractions=True,
                        seq_ordered=seq_ordered, table=self.store.identifier, spec=self.merge_spec,
                        columns=self.read_columns)
