"""CommitMessage: what one writer produced for one (partition, bucket); picklable, sent to the committer.

Mirrors org.apache.paimon.table.sink.CommitMessageImpl (DataIncrement + CompactIncrement + index files).
"""

from __future__ import annotations

from dataclasses import dataclass

from table_format.meta.manifest import DataFileMeta, IndexFileMeta


@dataclass(frozen=True, slots=True)
class CommitMessage:
    partition: bytes
    bucket: int
    total_buckets: int
    new_files: tuple[DataFileMeta, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    compact_before: tuple[DataFileMeta, ...] = ()
    compact_after: tuple[DataFileMeta, ...] = ()
    compact_changelog: tuple[DataFileMeta, ...] = ()
    new_index_files: tuple[IndexFileMeta, ...] = ()
    deleted_index_files: tuple[IndexFileMeta, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.changelog_files
            or self.compact_before
            or self.compact_after
            or self.compact_changelog
            or self.new_index_files
            or self.deleted_index_files
        )
