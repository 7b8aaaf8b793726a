"""Pure-Python Apache Paimon table format: byte-compatible with Java Paimon and pypaimon."""

from table_format.branches import keeper_tag
from table_format.catalog import FileSystemCatalog, open_table
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
from table_format.io.file_io import FileStatus
from table_format.maintenance.consumers import Consumer
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
from table_format.table import Table, TableScan, iter_split, read_changes_split, read_split
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

__all__ = [
    "Consumer",
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
