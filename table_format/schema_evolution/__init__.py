"""Schema evolution: SchemaChange, applying changes to a TableSchema, safe widenings, merging input schemas."""

from table_format.schema_evolution.apply import IMMUTABLE_OPTIONS, apply_changes, changed_to_not_null, options_naming
from table_format.schema_evolution.changes import (
    AddColumn,
    DropColumn,
    MoveColumn,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnType,
    UpdateComment,
)
from table_format.schema_evolution.merge import merge_changes, missing_columns
from table_format.schema_evolution.widening import same_type, widening_problem

__all__ = [
    "IMMUTABLE_OPTIONS",
    "AddColumn",
    "DropColumn",
    "MoveColumn",
    "RemoveOption",
    "RenameColumn",
    "SchemaChange",
    "SetOption",
    "UpdateColumnComment",
    "UpdateColumnNullability",
    "UpdateColumnType",
    "UpdateComment",
    "apply_changes",
    "changed_to_not_null",
    "merge_changes",
    "missing_columns",
    "options_naming",
    "same_type",
    "widening_problem",
]
