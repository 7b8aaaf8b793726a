"""Skipping data files by their file index (FileIndexPredicate / FileIndexSkipper in Java).

A scan whose filter holds `=` / `in` on columns with a bloom-filter index (data/file_index.py) asks each file's
index, embedded in its manifest entry or in the `<file>.index` extra file, whether the values can be in the
file; files that surely lack them are not read. AND needs every part, OR any part; other operators, unindexed
columns and CHAR columns (compared padded) answer "maybe". Java applies the embedded index while planning and
the separate file while reading; both are applied here while planning (index files read concurrently on object
stores), so a plan's files are the files read. `file-index.read.enabled` = false turns it off.

Primary-key tables: a filter on key columns alone may drop any file (every version of a key shares the key);
a filter on other columns drops files only where every row read is final (deletion vectors, or a split whose
files share no key and hold no retraction), since otherwise an older version of a key would resurface.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_type
from table_format.data.bloom_filter import BLOOM_FILTER, BloomFilter64, fast_hash, indexable
from table_format.data.file_index import INDEX_SUFFIX, index_read_enabled, parse_index
from table_format.errors import CorruptMetadataError
from table_format.meta.manifest import DataFileMeta
from table_format.predicate import EQ, IN, Leaf, Predicate
from table_format.predicate.compound import And, Or
from table_format.predicate.key_set import KeySet
from table_format.store.file_store import FileStore
from table_format.types import CharType, DataType, DoubleType, FloatType


@dataclass(frozen=True, slots=True)
class IndexedColumn:
    """A column a filter may test against a file's index: its name in the file and its type."""

    file_name: str
    dtype: DataType


def may_match(predicate: Predicate, index: Mapping[str, Mapping[str, bytes]],
              columns: Mapping[str, IndexedColumn], hashes: dict[tuple[int, str], np.ndarray] | None = None) -> bool:
    """False only when the file's index proves no row matches (FileIndexPredicate); `columns`: the filter's
    column names -> their name and type in the file; `hashes`: a cache of the filter values' hashes, kept across
    the files of one scan (by the id of the predicate or key array, which must stay alive meanwhile)."""
    cache = hashes if hashes is not None else {}
    if isinstance(predicate, And):
        return all(may_match(p, index, columns, cache) for p in predicate.children)
    if isinstance(predicate, Or):
        return any(may_match(p, index, columns, cache) for p in predicate.children)
    if isinstance(predicate, KeySet):
        return all(_any_present(index, columns.get(name), _given(values), id(values), cache)
                   for name, values in predicate.values)
    if isinstance(predicate, Leaf) and predicate.op in (EQ, IN) and predicate.dtype is not None:
        if any(v is None for v in predicate.literals):
            return True
        dtype, literals = predicate.dtype, list(predicate.literals)
        return _any_present(index, columns.get(predicate.field),
                            lambda: pa.array(literals, type=to_arrow_type(dtype)), id(predicate), cache)
    return True


def _given(values: pa.Array) -> Callable[[], pa.Array]:
    return lambda: values


def _any_present(index: Mapping[str, Mapping[str, bytes]], column: IndexedColumn | None,
                 values: Callable[[], pa.Array], key: int, cache: dict[tuple[int, str], np.ndarray]) -> bool:
    if column is None or isinstance(column.dtype, CharType):  # CHAR values compare padded: not by their bytes
        return True
    body = index.get(column.file_name, {}).get(BLOOM_FILTER)
    if body is None or not indexable(column.dtype):
        return True
    slot = (key, str(column.dtype.copy(nullable=True)))
    hashed = cache.get(slot)
    if hashed is None:
        try:
            given = values().drop_null()
            if isinstance(column.dtype, (FloatType, DoubleType)):
                # 0.0 = -0.0 but their bits (and hashes) differ: add the other zero
                given = pa.concat_arrays([given.cast(pa.float64()), pa.array([0.0, -0.0], pa.float64())]) \
                    if pc.any(pc.equal(given, 0)).as_py() else given
            hashed = fast_hash(given, column.dtype)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
            return True  # values that do not convert to the file's column type: no verdict
        cache[slot] = hashed
    return not len(hashed) or bool(BloomFilter64.parse(body).may_contain(hashed).any())


def _tests_equality(predicate: Predicate) -> bool:
    if isinstance(predicate, (And, Or)):
        return any(_tests_equality(p) for p in predicate.children)
    return isinstance(predicate, KeySet) or (isinstance(predicate, Leaf) and predicate.op in (EQ, IN))


def _has_index(f: DataFileMeta) -> bool:
    return f.embedded_index is not None or any(x.endswith(INDEX_SUFFIX) for x in f.extra_files)


class FileIndexFilter:
    """The files of one (partition, bucket) a filter may match, by their file indexes."""

    def __init__(self, store: FileStore, predicate: Predicate | None) -> None:
        self.store = store
        usable = predicate is not None and index_read_enabled(store.options.raw) and _tests_equality(predicate)
        self.predicate = predicate if usable else None
        self._columns: dict[int, dict[str, IndexedColumn]] = {}
        self._hashes: dict[tuple[int, str], np.ndarray] = {}  # the filter values' hashes, by value set and type
        self.skipped = 0  # files dropped so far

    def project(self, fields: Sequence[str]) -> Predicate | None:
        """The part of the filter on `fields` alone that an index can test (None: nothing)."""
        if self.predicate is None:
            return None
        part = self.predicate.project(list(fields))
        return part if part is not None and _tests_equality(part) else None

    def keep(self, partition: bytes, bucket: int, files: list[DataFileMeta],
             predicate: Predicate | None) -> list[DataFileMeta]:
        """`files` without those whose index proves `predicate` (this filter or a part of it) matches no row."""
        if predicate is None:
            return files
        candidates = [f for f in files if _has_index(f)]
        if not candidates:
            return files
        verdicts = self.store.file_io.parallel_map(lambda f: self._may_match(partition, bucket, f, predicate),
                                                   candidates)
        dropped = {f.file_name for f, ok in zip(candidates, verdicts, strict=True) if not ok}
        self.skipped += len(dropped)
        return [f for f in files if f.file_name not in dropped] if dropped else files

    def _may_match(self, partition: bytes, bucket: int, f: DataFileMeta, predicate: Predicate) -> bool:
        if f.embedded_index is not None:
            data, source = f.embedded_index, f"the embedded file index of {f.file_name}"
        else:
            name = next(x for x in f.extra_files if x.endswith(INDEX_SUFFIX))
            main = self.store.data_file_path(partition, bucket, f.file_name, f.external_path)
            source = f"{main.rsplit('/', 1)[0]}/{name}"
            try:
                data = self.store.file_io.read_bytes(source)
            except FileNotFoundError:
                raise CorruptMetadataError(f"file index {source} is missing (an extra file of {f.file_name})") \
                    from None
        return may_match(predicate, parse_index(data, source=source), self._columns_of(f.schema_id), self._hashes)

    def _columns_of(self, schema_id: int) -> dict[str, IndexedColumn]:
        """The current columns by name -> their name and type in files of schema `schema_id` (by field id;
        a column whose type changed since is not tested)."""
        columns = self._columns.get(schema_id)
        if columns is None:
            in_file = {x.id: x for x in self.store.schema_by_id(schema_id).fields}
            columns = {}
            for x in self.store.schema.fields:
                old = in_file.get(x.id)
                if old is not None and old.type.copy(nullable=True) == x.type.copy(nullable=True):
                    columns[x.name] = IndexedColumn(old.name, old.type)
            self._columns[schema_id] = columns
        return columns
