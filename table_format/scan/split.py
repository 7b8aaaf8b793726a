"""DataSplit: the files of one (partition, bucket) a reader merges together; picklable for executors.

Mirrors org.apache.paimon.table.source.DataSplit.
"""

from __future__ import annotations

from dataclasses import dataclass

from table_format.data.deletion_vector import DeletionFile
from table_format.meta.manifest import DataFileMeta


@dataclass(frozen=True, slots=True)
class DataSplit:
    snapshot_id: int
    partition: bytes
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    raw_convertible: bool
    deletion_files: tuple[DeletionFile | None, ...] | None = None  # aligned with files
    schema_id: int | None = None  # the schema the split is read with (a time-travel scan's older one)

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)
