"""Pure-Python Apache Paimon table format: byte-compatible with Java Paimon and pypaimon."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from table_format.errors import (
    BranchDivergedError,
    BranchError,
    CommitConflictError,
    CommitFailedError,
    CommitOutcomeUnknownError,
    CorruptMetadataError,
    OptionError,
    SchemaError,
    SnapshotNotFoundError,
    TableAlreadyExistsError,
    TableFormatError,
    TableNotFoundError,
    UnsupportedFeatureError,
)

if TYPE_CHECKING:
    from table_format.branches import keeper_tag
    from table_format.catalog import FileSystemCatalog, open_table
    from table_format.io.file_io import FileStatus
    from table_format.maintenance.consumers import PINNING_CONSUMER_PREFIX, Consumer
    from table_format.maintenance.expire import ExpirePlan
    from table_format.maintenance.orphan_clean import OrphanCleanPlan
    from table_format.maintenance.progress import ProgressCallback, ProgressEvent
    from table_format.maintenance.rescale import RescaleOutcome, RescaleTask
    from table_format.maintenance.results import (
        CompactResult,
        DeleteTagResult,
        ExpireResult,
        OrphanCleanResult,
        RescaleResult,
        RollbackResult,
    )
    from table_format.meta.snapshot import CommitKind, Snapshot
    from table_format.option_keys import check_option_keys
    from table_format.options import (
        BucketMode,
        ChangelogProducer,
        CoreOptions,
        MergeEngine,
        parse_duration,
        parse_memory_size,
    )
    from table_format.scan.changes import ChangeSplit
    from table_format.scan.split import DataSplit
    from table_format.schema_evolution import SchemaChange
    from table_format.schema_evolution.apply import IMMUTABLE_OPTIONS
    from table_format.summary import SnapshotSummary, snapshot_summary
    from table_format.table import Table
    from table_format.table_scan import TableScan, iter_split, read_changes_split, read_split
    from table_format.write.commit_message import CommitMessage
    from table_format.write.compact_task import CompactOutcome, CompactTask
    from table_format.write.table_write import TableWrite
    from table_format.write_api import (
        commit_write,
        discard_written_files,
        last_commit_identifier,
        table_commit_landed,
        write_table,
    )

# The rest is imported on first use (PEP 562): a Spark worker that only reads a table imports what reading needs
# (a whole-package import costs ~0.5 s of CPU in every Python worker Spark starts; jobs/spark/data_source.py).
_LAZY: dict[str, str] = {
    "keeper_tag": "branches",
    "FileSystemCatalog": "catalog",
    "open_table": "catalog",
    "FileStatus": "io.file_io",
    "Consumer": "maintenance.consumers",
    "PINNING_CONSUMER_PREFIX": "maintenance.consumers",
    "ExpirePlan": "maintenance.expire",
    "OrphanCleanPlan": "maintenance.orphan_clean",
    "ProgressCallback": "maintenance.progress",
    "ProgressEvent": "maintenance.progress",
    "RescaleOutcome": "maintenance.rescale",
    "RescaleTask": "maintenance.rescale",
    "CompactResult": "maintenance.results",
    "DeleteTagResult": "maintenance.results",
    "ExpireResult": "maintenance.results",
    "OrphanCleanResult": "maintenance.results",
    "RescaleResult": "maintenance.results",
    "RollbackResult": "maintenance.results",
    "CommitKind": "meta.snapshot",
    "Snapshot": "meta.snapshot",
    "check_option_keys": "option_keys",
    "BucketMode": "options",
    "ChangelogProducer": "options",
    "CoreOptions": "options",
    "MergeEngine": "options",
    "parse_duration": "options",
    "parse_memory_size": "options",
    "ChangeSplit": "scan.changes",
    "DataSplit": "scan.split",
    "SchemaChange": "schema_evolution",
    "IMMUTABLE_OPTIONS": "schema_evolution.apply",
    "SnapshotSummary": "summary",
    "snapshot_summary": "summary",
    "Table": "table",
    "TableScan": "table_scan",
    "iter_split": "table_scan",
    "read_changes_split": "table_scan",
    "read_split": "table_scan",
    "CommitMessage": "write.commit_message",
    "CompactOutcome": "write.compact_task",
    "CompactTask": "write.compact_task",
    "TableWrite": "write.table_write",
    "commit_write": "write_api",
    "discard_written_files": "write_api",
    "last_commit_identifier": "write_api",
    "table_commit_landed": "write_api",
    "write_table": "write_api",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'table_format' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"table_format.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Consumer",
    "PINNING_CONSUMER_PREFIX",
    # the plan / run / commit seam of distributed maintenance (table.maintenance.plan_*), and its results
    "CompactOutcome",
    "CompactResult",
    "CompactTask",
    "ExpirePlan",
    "ExpireResult",
    "FileStatus",
    "OrphanCleanPlan",
    "OrphanCleanResult",
    "RescaleOutcome",
    "RescaleResult",
    "RescaleTask",
    # more maintenance results, progress and options (the lakehouse CLI, UIs)
    "BucketMode",
    "ChangelogProducer",
    "CoreOptions",
    "DeleteTagResult",
    "IMMUTABLE_OPTIONS",
    "MergeEngine",
    "ProgressCallback",
    "ProgressEvent",
    "RollbackResult",
    "check_option_keys",
    "parse_duration",
    "parse_memory_size",
    # the rest
    "BranchDivergedError",
    "BranchError",
    "CommitConflictError",
    "CommitFailedError",
    "CommitKind",
    "CommitMessage",
    "CommitOutcomeUnknownError",
    "CorruptMetadataError",
    "ChangeSplit",
    "DataSplit",
    "FileSystemCatalog",
    "OptionError",
    "SchemaChange",
    "SchemaError",
    "Snapshot",
    "SnapshotNotFoundError",
    "SnapshotSummary",
    "Table",
    "TableAlreadyExistsError",
    "TableFormatError",
    "TableNotFoundError",
    "TableScan",
    "TableWrite",
    "UnsupportedFeatureError",
    "open_table",
    "commit_write",
    "discard_written_files",
    "keeper_tag",
    "last_commit_identifier",
    "parse_duration",
    "parse_memory_size",
    "read_changes_split",
    "read_split",
    "iter_split",
    "snapshot_summary",
    "table_commit_landed",
    "write_table",
]
