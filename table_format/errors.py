"""The one exception hierarchy of table_format: every error names the table, field, option or file at fault."""

from __future__ import annotations


class TableFormatError(Exception):
    """Root of every error raised by table_format."""


class SchemaError(TableFormatError):
    """A schema, type string or data does not fit the table's schema."""


class OptionError(TableFormatError):
    """A table option is unknown, malformed or inconsistent with the schema."""


class TableNotFoundError(TableFormatError):
    """The table (or database) does not exist in the catalog."""


class TableAlreadyExistsError(TableFormatError):
    """create_table / create_database on a name that already exists."""


class TagAlreadyExistsError(TableFormatError):
    """create_tag on a tag name that already exists."""


class DatabaseNotFoundError(TableNotFoundError):
    """The database does not exist in the catalog."""


class CommitConflictError(TableFormatError):
    """A commit conflicts with a concurrent one (e.g. a file it deletes was deleted already)."""


class CommitFailedError(TableFormatError):
    """A commit could not be published (retries exhausted, I/O failure); nothing became visible."""


class CommitOutcomeUnknownError(CommitFailedError):
    """Publishing a snapshot failed in a way that leaves open whether it landed; its files were kept."""


class CorruptMetadataError(TableFormatError):
    """A snapshot, schema, manifest or data file is unreadable or inconsistent; the message names the file."""


class UnsupportedFeatureError(TableFormatError):
    """A Paimon feature or option this implementation refuses rather than half-supports."""


class SnapshotNotFoundError(TableFormatError):
    """A snapshot id or tag asked for does not exist."""


class SchemaConflictError(CommitConflictError):
    """Another writer published a different schema version with the id a write evolved to; nothing landed."""


class BranchError(TableFormatError):
    """A branch name is invalid, taken or unknown, or a branch cannot do what was asked (e.g. it has no snapshot)."""


class BranchDivergedError(CommitConflictError):
    """fast_forward refused: main committed after the branch point (its message names both snapshot ids)."""
