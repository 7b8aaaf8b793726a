"""Apply SchemaChanges to a TableSchema: the next schema version, as Java's SchemaManager.generateTableSchema.

Refuses what Paimon 0.9 refuses (dropping or renaming primary-key or partition columns, changing a partition
column's type, NOT NULL on a new column, existing or unknown names, dropping every column, changing immutable
options of a table with data, resetting `bucket`) and, stricter than 0.9, anything that would leave stored data
unreadable or misplaced: type changes that are not widenings, type changes of primary-key and bucket-key
columns (rows would hash to other buckets), a new `bucket` on a table with data (`maintenance.rescale` rewrites
the data for that), dropping a column that an option names. Renaming a column renames it in the options that
name it (as Paimon 1.x does; 0.9 refuses such renames). Data-dependent checks (NOT NULL on a column holding
nulls) and option validation happen in the catalog, which sees the data.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from table_format.errors import OptionError, SchemaError
from table_format.schema import TableSchema, assign_field_ids, check_column_name
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
from table_format.schema_evolution.widening import same_type, widening_problem
from table_format.types import DataField, is_atomic

# CoreOptions keys marked @Immutable in Paimon 0.9 (+ fallback keys): not changeable once the table has data
IMMUTABLE_OPTIONS = frozenset({
    "primary-key", "partition", "bucket-key", "merge-engine", "sequence.field", "rowkind.field", "force-lookup",
    "partial-update.remove-record-on-delete", "ignore-delete", "first-row.ignore-delete",
    "deduplicate.ignore-delete", "partial-update.ignore-delete",
})
# options whose value is a comma-separated list of columns
_COLUMN_LIST_OPTIONS = ("bucket-key", "sequence.field", "rowkind.field")
_FIELDS_PREFIX = "fields."
_NOT_ABOUT_A_COLUMN = "fields.default-aggregate-function"


@dataclass
class _Draft:
    """The schema being built, change by change."""

    fields: list[DataField]
    options: dict[str, str]
    comment: str | None
    highest_field_id: int

    def index(self, name: str, where: str) -> int:
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        raise SchemaError(f"{where}no column {name!r} (columns: {[f.name for f in self.fields]})")

    def require_absent(self, name: str, where: str) -> None:
        if any(f.name == name for f in self.fields):
            raise SchemaError(f"{where}column {name!r} already exists")


def apply_changes(schema: TableSchema, changes: Sequence[SchemaChange], *, table: str,
                  has_snapshots: bool) -> TableSchema:
    """The schema after `changes` (one new version: id + 1), or a SchemaError / OptionError naming the culprit."""
    where = f"table {table!r}: "
    if isinstance(changes, SchemaChange) or not all(isinstance(c, SchemaChange) for c in changes):
        raise SchemaError(f"{where}changes must be a sequence of SchemaChange, got {changes!r}")
    draft = _Draft(list(schema.fields), dict(schema.options), schema.comment, schema.highest_field_id)
    for change in changes:
        handler = _HANDLERS.get(type(change))
        if handler is None:
            raise SchemaError(f"{where}unsupported schema change {change!r}")
        handler(draft, change, schema, where, has_snapshots)
    if not draft.fields:
        raise SchemaError(f"{where}cannot drop every column")
    return TableSchema(
        id=schema.id + 1,
        fields=tuple(draft.fields),
        highest_field_id=draft.highest_field_id,
        partition_keys=schema.partition_keys,
        primary_keys=schema.primary_keys,
        options=draft.options,
        comment=draft.comment,
        time_millis=int(time.time() * 1000),
    )


# ---- options -------------------------------------------------------------------------------
def _set_option(draft: _Draft, c: SetOption, old: TableSchema, where: str, has_snapshots: bool) -> None:
    if c.key == "path":
        raise OptionError(f"{where}option 'path' cannot be changed")
    if has_snapshots and draft.options.get(c.key) != c.value:
        _check_mutable(c.key, where)
        if c.key == "bucket":
            raise OptionError(
                f"{where}option 'bucket' cannot be changed by alter_table on a table with data: its files would "
                f"stay in the old buckets; use table.maintenance.rescale(bucket={c.value}) to rewrite them"
            )
    draft.options[c.key] = c.value


def _remove_option(draft: _Draft, c: RemoveOption, old: TableSchema, where: str, has_snapshots: bool) -> None:
    if has_snapshots and c.key in draft.options:
        _check_mutable(c.key, where)
        if c.key == "bucket":
            raise OptionError(f"{where}option 'bucket' cannot be removed from a table with data")
    draft.options.pop(c.key, None)


def _check_mutable(key: str, where: str) -> None:
    if key in IMMUTABLE_OPTIONS:
        raise OptionError(f"{where}option {key!r} cannot be changed once the table has data (Paimon refuses it too)")


def _update_comment(draft: _Draft, c: UpdateComment, old: TableSchema, where: str, has_snapshots: bool) -> None:
    draft.comment = c.comment


# ---- columns -------------------------------------------------------------------------------
def _add_column(draft: _Draft, c: AddColumn, old: TableSchema, where: str, has_snapshots: bool) -> None:
    check_column_name(c.name, where)
    draft.require_absent(c.name, where)
    if not c.type.nullable:
        raise SchemaError(f"{where}new column {c.name!r} cannot be NOT NULL: the existing rows have no value for it")
    next_id = [draft.highest_field_id + 1]
    field_id = next_id[0]
    next_id[0] += 1
    new_type = assign_field_ids(c.type, next_id)
    draft.highest_field_id = next_id[0] - 1
    new_field = DataField(field_id, c.name, new_type, c.comment)
    if c.first:
        draft.fields.insert(0, new_field)
    elif c.after is not None:
        draft.fields.insert(draft.index(c.after, where) + 1, new_field)
    else:
        draft.fields.append(new_field)


def _rename_column(draft: _Draft, c: RenameColumn, old: TableSchema, where: str, has_snapshots: bool) -> None:
    _refuse_key_column(c.name, old, where, "rename")
    i = draft.index(c.name, where)
    check_column_name(c.new_name, where)
    draft.require_absent(c.new_name, where)
    f = draft.fields[i]
    draft.fields[i] = DataField(f.id, c.new_name, f.type, f.description)
    draft.options = _rename_in_options(draft.options, c.name, c.new_name)


def _drop_column(draft: _Draft, c: DropColumn, old: TableSchema, where: str, has_snapshots: bool) -> None:
    _refuse_key_column(c.name, old, where, "drop")
    i = draft.index(c.name, where)
    naming = options_naming(draft.options, c.name)
    if naming:
        raise SchemaError(
            f"{where}cannot drop column {c.name!r}: option(s) {naming} name it; change or remove them first"
        )
    del draft.fields[i]


def _refuse_key_column(name: str, old: TableSchema, where: str, verb: str) -> None:
    if name in old.partition_keys:
        raise SchemaError(f"{where}cannot {verb} column {name!r}: it is a partition key {list(old.partition_keys)}")
    if name in old.primary_keys:
        raise SchemaError(f"{where}cannot {verb} column {name!r}: it is part of the primary key {list(old.primary_keys)}")


def _update_type(draft: _Draft, c: UpdateColumnType, old: TableSchema, where: str, has_snapshots: bool) -> None:
    i = draft.index(c.name, where)
    f = draft.fields[i]
    if same_type(f.type, c.type):
        return
    if c.name in old.partition_keys:
        raise SchemaError(f"{where}cannot change the type of partition column {c.name!r}")
    if c.name in old.primary_keys or c.name in old.bucket_keys:
        raise SchemaError(
            f"{where}cannot change the type of column {c.name!r}: it is a primary-key or bucket-key column, and "
            "rows hash to buckets by its binary form, so old and new rows of a key would land in different buckets"
        )
    if not is_atomic(f.type) or not is_atomic(c.type):
        raise SchemaError(f"{where}column {c.name!r}: changing nested types ({f.type} -> {c.type}) is not supported")
    problem = widening_problem(f.type, c.type)
    if problem is not None:
        raise SchemaError(f"{where}column {c.name!r}: {problem}")
    draft.fields[i] = DataField(f.id, f.name, c.type.copy(nullable=f.type.nullable), f.description)


def _update_nullability(draft: _Draft, c: UpdateColumnNullability, old: TableSchema, where: str,
                        has_snapshots: bool) -> None:
    i = draft.index(c.name, where)
    f = draft.fields[i]
    if c.nullable and c.name in old.primary_keys:
        raise SchemaError(f"{where}cannot make primary-key column {c.name!r} nullable")
    draft.fields[i] = DataField(f.id, f.name, f.type.copy(nullable=c.nullable), f.description)


def _update_column_comment(draft: _Draft, c: UpdateColumnComment, old: TableSchema, where: str,
                           has_snapshots: bool) -> None:
    i = draft.index(c.name, where)
    f = draft.fields[i]
    draft.fields[i] = DataField(f.id, f.name, f.type, c.comment)


def _move_column(draft: _Draft, c: MoveColumn, old: TableSchema, where: str, has_snapshots: bool) -> None:
    i = draft.index(c.name, where)
    ref = c.after if c.after is not None else c.before
    if ref == c.name:
        raise SchemaError(f"{where}cannot move column {c.name!r} relative to itself")
    moved = draft.fields.pop(i)
    if c.first:
        draft.fields.insert(0, moved)
        return
    assert ref is not None
    j = draft.index(ref, where)
    draft.fields.insert(j + 1 if c.after is not None else j, moved)


_Handler = Callable[[_Draft, SchemaChange, TableSchema, str, bool], None]
_HANDLERS: dict[type, _Handler] = {
    SetOption: _set_option,  # type: ignore[dict-item]
    RemoveOption: _remove_option,  # type: ignore[dict-item]
    UpdateComment: _update_comment,  # type: ignore[dict-item]
    AddColumn: _add_column,  # type: ignore[dict-item]
    RenameColumn: _rename_column,  # type: ignore[dict-item]
    DropColumn: _drop_column,  # type: ignore[dict-item]
    UpdateColumnType: _update_type,  # type: ignore[dict-item]
    UpdateColumnNullability: _update_nullability,  # type: ignore[dict-item]
    UpdateColumnComment: _update_column_comment,  # type: ignore[dict-item]
    MoveColumn: _move_column,  # type: ignore[dict-item]
}


# ---- options that name columns ---------------------------------------------------------------
def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _field_option_columns(key: str) -> tuple[list[str], str] | None:
    """`fields.<a,b>.<suffix>` -> (['a', 'b'], suffix); None for other keys."""
    if not key.startswith(_FIELDS_PREFIX) or key == _NOT_ABOUT_A_COLUMN or "." not in key[len(_FIELDS_PREFIX):]:
        return None
    names, suffix = key[len(_FIELDS_PREFIX):].split(".", 1)
    return names.split(","), suffix


def options_naming(options: Mapping[str, str], column: str) -> list[str]:
    """The option keys whose key or value names `column`."""
    out = []
    for key, value in options.items():
        parsed = _field_option_columns(key)
        in_value = column in _split(value) and (key in _COLUMN_LIST_OPTIONS
                                                or (parsed is not None and parsed[1] == "sequence-group"))
        if in_value or (parsed is not None and column in parsed[0]):
            out.append(key)
    return sorted(out)


def _rename_in_options(options: dict[str, str], old: str, new: str) -> dict[str, str]:
    def rename(names: list[str]) -> str:
        return ",".join(new if n == old else n for n in names)

    out: dict[str, str] = {}
    for key, value in options.items():
        parsed = _field_option_columns(key)
        if key in _COLUMN_LIST_OPTIONS and old in _split(value):
            out[key] = rename(_split(value))
        elif parsed is not None:
            names, suffix = parsed
            new_value = rename(_split(value)) if suffix == "sequence-group" and old in _split(value) else value
            out[f"{_FIELDS_PREFIX}{rename(names)}.{suffix}"] = new_value
        else:
            out[key] = value
    return out


def changed_to_not_null(old: TableSchema, new: TableSchema) -> list[str]:
    """Columns (by their new names) that are NOT NULL in `new` and were nullable, or absent, in `old`."""
    before = {f.id: f.type.nullable for f in old.fields}
    return [f.name for f in new.fields if not f.type.nullable and before.get(f.id, True)]
