"""Pure-Python Apache Paimon table format: byte-compatible with Java Paimon and pypaimon."""

from table_format.catalog import FileSystemCatalog, open_table
from table_format.errors import (
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
from table_format.meta.snapshot import CommitKind, Snapshot
from table_format.scan.split import DataSplit
from table_format.schema_evolution import SchemaChange
from table_format.summary import SnapshotSummary, snapshot_summary
from table_format.table import Table, TableScan, read_split
from table_format.write.commit_message import CommitMessage
from table_format.write.table_write import TableWrite
from table_format.write_api import commit_write, discard_written_files, table_commit_landed, write_table

__all__ = [
    "CommitConflictError",
    "CommitFailedError",
    "CommitKind",
    "CommitMessage",
    "CommitOutcomeUnknownError",
    "CorruptMetadataError",
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
    "read_split",
    "snapshot_summary",
    "table_commit_landed",
    "write_table",
]
