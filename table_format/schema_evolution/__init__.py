"""Schema evolution: SchemaChange, applying changes to a TableSchema, safe widenings, merging input schemas."""

from table_format.schema_evolution.apply import apply_changes, changed_to_not_null
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
from table_format.schema_evolution.widening import widening_problem

__all__ = [
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
    "widening_problem",
]
