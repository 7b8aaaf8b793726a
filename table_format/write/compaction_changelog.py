"""The changelog a compaction produces (changelog-producer full-compaction and lookup).

Mirrors FullChangelogMergeTreeCompactRewriter (a full compaction to the max level: the merged keys of the lower
levels against the max level before) and LookupMergeTreeCompactRewriter's changelog (level-0 keys against the
higher levels). Buckets above `sort-spill-buffer-size` are done key range by key range (write/key_range_rewrite.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.data.deletion_vector import DeletionFile
from table_format.data.file_reader import read_data_file
from table_format.lsm.levels import Levels
from table_format.lsm.universal import CompactUnit
from table_format.merge import merge_kv
from table_format.meta.manifest import DataFileMeta, FileSource
from table_format.options import ChangelogProducer, MergeEngine
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND, RowKind
from table_format.store.file_store import FileStore
from table_format.write.changelog import changelog_of, key_codes
from table_format.write.file_writer import DataFileWriter
from table_format.write.key_range_rewrite import changelog_by_key_ranges, fits_in_memory


def _restrict_to_keys(data: pa.Table, scope: pa.Table, keys: list[str]) -> pa.Table:
    codes_scope, codes_data = key_codes([scope, data], keys)
    return data.filter(pa.array(np.isin(codes_data, codes_scope)))


def compaction_changelog(store: FileStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta],
                         dv: dict[str, DeletionFile], unit: CompactUnit, levels: Levels,
                         written: list[str]) -> list[DataFileMeta]:
    """Changelog files of a compaction of the bucket's live `files` (deletion files by name) for changelog-producer
    full-compaction / lookup."""
    producer = store.options.changelog_producer
    max_level = levels.max_level
    if producer == ChangelogProducer.FULL_COMPACTION and unit.output_level == max_level and len(unit.runs) == len(
        levels.sorted_runs()
    ):
        scope_files = [f for f in files if f.level != max_level]
        before_files = [f for f in files if f.level == max_level]
    elif producer == ChangelogProducer.LOOKUP and any(f.level == 0 for f in unit.files):
        scope_files = [f for f in unit.files if f.level == 0]
        before_files = [f for f in files if f.level > 0]
    else:
        return []
    if not scope_files:
        return []
    names = store.schema.field_names
    keys = [f.name for f in store.key_fields]

    def read(chosen: Sequence[DataFileMeta]) -> pa.Table:
        tables = [
            read_data_file(store, partition, bucket, f, names, system=(SEQUENCE_NUMBER, VALUE_KIND),
                           deletion_file=dv.get(f.file_name))
            for f in sorted(chosen, key=lambda f: f.min_sequence_number)
        ]
        return pa.concat_tables(tables)

    opts = store.options
    ignore = [c.strip() for c in opts.raw.get("changelog-producer.row-deduplicate-ignore-fields", "").split(",")
              if c.strip()]

    def log_of(scope: pa.Table, files_rows: pa.Table, old_rows: pa.Table | None) -> pa.Table:
        """The changelog of the keys in `scope`: merged before (`old_rows`) against merged after (`files_rows`)."""
        everything = _restrict_to_keys(files_rows, scope, keys)
        old = _restrict_to_keys(old_rows, scope, keys) if old_rows is not None else everything.schema.empty_table()
        before = merge_kv(old, schema=store.schema, options=opts, drop_retractions=True)
        after = merge_kv(everything, schema=store.schema, options=opts, drop_retractions=True)
        log = changelog_of(
            before, after, keys=keys, value_columns=names,
            row_deduplicate=opts.raw.get("changelog-producer.row-deduplicate", "false").lower() == "true",
            ignore_fields=ignore,
        )
        if opts.merge_engine == MergeEngine.FIRST_ROW:
            # FirstRowMergeFunctionWrapper: a key that was already there never changes; only new keys give +I
            log = log.filter(pc.equal(log.column(VALUE_KIND), int(RowKind.INSERT)))
        return log

    if not fits_in_memory(store, files):  # key range by key range (write/key_range_rewrite.py)
        writer = DataFileWriter(store, partition, bucket, level=unit.output_level,
                                file_source=FileSource.COMPACT, prefix="changelog-")
        try:
            return changelog_by_key_ranges(store, partition, bucket, files, dv, scope_files,
                                           before_files, log_of, writer)
        finally:
            written.extend(writer.written_paths)
    log = log_of(read(scope_files), read(files), read(before_files) if before_files else None)
    if log.num_rows == 0:
        return []
    # MergeTreeCompactRewriter.rewriteChangelogCompaction: changelog files carry the compaction's output level
    writer = DataFileWriter(store, partition, bucket, level=unit.output_level, file_source=FileSource.COMPACT,
                            prefix="changelog-")
    try:
        return writer.write(log.select(names), sequence_numbers=log.column(SEQUENCE_NUMBER).to_numpy(),
                            kinds=log.column(VALUE_KIND).combine_chunks())
    finally:
        written.extend(writer.written_paths)
