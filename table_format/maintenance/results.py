"""Typed, frozen results of the maintenance operations."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompactResult:
    snapshot_id: int | None  # the COMPACT snapshot, None when there was nothing to compact
    rewritten_files: int = 0  # files read and merged
    upgraded_files: int = 0  # files moved to a higher level without rewriting
    new_files: int = 0
    compacted_buckets: int = 0


@dataclass(frozen=True, slots=True)
class ExpireResult:
    expired_snapshots: tuple[int, ...]
    deleted_files: tuple[str, ...]
    dry_run: bool
    earliest_snapshot_id: int | None = None  # earliest snapshot kept after expiration


@dataclass(frozen=True, slots=True)
class OrphanCleanResult:
    orphan_files: tuple[str, ...]
    deleted_files: tuple[str, ...]
    bytes_freed: int
    dry_run: bool
    removed_directories: tuple[str, ...] = ()  # empty bucket/partition directories removed
    abandoned_uploads: tuple[str, ...] = ()  # paths of multipart uploads in progress started before the cut-off
    aborted_uploads: tuple[str, ...] = ()  # those aborted (a dry run: all of them, nothing aborted)


@dataclass(frozen=True, slots=True)
class RescaleResult:
    snapshot_id: int | None
    bucket: int
    rewritten_partitions: int = 0
    rewritten_rows: int = 0


@dataclass(frozen=True, slots=True)
class DeleteTagResult:
    tag: str
    snapshot_id: int  # the snapshot the tag pointed to
    deleted_files: tuple[str, ...]  # the tag file, plus data/metadata files only this tag still used


@dataclass(frozen=True, slots=True)
class RollbackResult:
    snapshot_id: int  # the snapshot the table is now at (its LATEST)
    removed_snapshots: tuple[int, ...]
    removed_tags: tuple[str, ...]
    deleted_files: tuple[str, ...]
