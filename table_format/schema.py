"""TableSchema: the content of schema/schema-N, its JSON codec and its derived views.

Mirrors org.apache.paimon.schema.TableSchema / SchemaSerializer / Schema.Builder (field-id assignment,
primary-key normalisation to NOT NULL, bucket-key derivation).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa

from table_format.arrow_types import from_arrow_type
from table_format.errors import CorruptMetadataError, OptionError, SchemaError
from table_format.options import check_option_keys
from table_format.types import ArrayType, DataField, DataType, MapType, MultisetType, RowType, nested_fields

CURRENT_VERSION = 3
SYSTEM_FIELD_ID_START = 2147483647 // 2  # SpecialFields: ids >= this are system fields


@dataclass(frozen=True, slots=True)
class TableSchema:
    """One schema version of a table (schema/schema-<id>)."""

    id: int
    fields: tuple[DataField, ...]
    highest_field_id: int
    partition_keys: tuple[str, ...] = ()
    primary_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = CURRENT_VERSION

    # ---- derived views -------------------------------------------------------------------
    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    @property
    def row_type(self) -> RowType:
        return RowType(self.fields)

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise SchemaError(f"no column {name!r}; columns are {self.field_names}")

    def fields_of(self, names: Sequence[str]) -> list[DataField]:
        return [self.field(n) for n in names]

    @property
    def trimmed_primary_keys(self) -> tuple[str, ...]:
        """Primary keys minus partition keys (the physical key of PK data files)."""
        return tuple(k for k in self.primary_keys if k not in self.partition_keys)

    @property
    def bucket_keys(self) -> tuple[str, ...]:
        """The `bucket-key` option, else the trimmed primary key (TableSchema.bucketKeys)."""
        raw = self.options.get("bucket-key")
        if raw:
            return tuple(k.strip() for k in raw.split(",") if k.strip())
        return self.trimmed_primary_keys

    # ---- JSON codec (SchemaSerializer) ---------------------------------------------------
    def to_json(self) -> str:
        obj: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
        }
        if self.comment is not None:
            obj["comment"] = self.comment
        obj["timeMillis"] = self.time_millis
        return json.dumps(obj, indent=2, ensure_ascii=False).replace('": ', '" : ')

    @staticmethod
    def from_json(text: str | bytes, *, source: str = "schema") -> TableSchema:
        try:
            obj = json.loads(text)
        except (ValueError, UnicodeDecodeError) as e:
            raise CorruptMetadataError(f"{source}: not valid JSON ({e})") from None
        if not isinstance(obj, dict):
            raise CorruptMetadataError(f"{source}: expected a JSON object")
        try:
            version = int(obj.get("version", 1))
            if version > CURRENT_VERSION:
                raise CorruptMetadataError(
                    f"{source}: schema version {version} is newer than supported ({CURRENT_VERSION})"
                )
            raw_options = obj["options"]
            if not isinstance(raw_options, dict):
                raise ValueError(f"'options' must be an object, got {raw_options!r}")
            options = {str(k): str(v) for k, v in raw_options.items()}
            if version <= 1 and "bucket" not in options:
                options["bucket"] = "1"
            if version <= 2 and "file.format" not in options:
                options["file.format"] = "orc"
            return TableSchema(
                id=int(obj["id"]),
                fields=tuple(DataField.from_json(f) for f in obj["fields"]),
                highest_field_id=int(obj["highestFieldId"]),
                # required, as in Java's SchemaSerializer (a damaged key name must not drop the primary key)
                partition_keys=tuple(_str_list(obj["partitionKeys"], "partitionKeys")),
                primary_keys=tuple(_str_list(obj["primaryKeys"], "primaryKeys")),
                options=options,
                comment=obj.get("comment"),
                time_millis=int(obj.get("timeMillis") or 0),
                version=version,
            )
        except KeyError as e:
            raise CorruptMetadataError(f"{source}: missing key {e.args[0]!r}") from None
        except (TypeError, ValueError, SchemaError) as e:
            raise CorruptMetadataError(f"{source}: {e}") from None

    def with_options(self, options: Mapping[str, str], *, new_id: int) -> TableSchema:
        return replace(self, id=new_id, options=dict(options), time_millis=int(time.time() * 1000))


def _str_list(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key!r} must be a list of strings, got {value!r}")
    return value


def assign_field_ids(t: DataType, next_id: list[int]) -> DataType:
    """Give nested ROW fields fresh ids in pre-order (Schema.Builder + ReassignFieldId)."""
    if isinstance(t, RowType):
        out = []
        for f in t.fields:
            fid = next_id[0]
            next_id[0] += 1
            out.append(DataField(fid, f.name, assign_field_ids(f.type, next_id), f.description))
        return RowType(tuple(out), nullable=t.nullable)
    if isinstance(t, ArrayType):
        return ArrayType(assign_field_ids(t.element, next_id), nullable=t.nullable)
    if isinstance(t, MultisetType):
        return MultisetType(assign_field_ids(t.element, next_id), nullable=t.nullable)
    if isinstance(t, MapType):
        return MapType(assign_field_ids(t.key, next_id), assign_field_ids(t.value, next_id), nullable=t.nullable)
    return t


def build_schema(
    schema: pa.Schema | Sequence[DataField],
    *,
    partition_keys: Sequence[str] | None = (),
    primary_keys: Sequence[str] | None = (),
    options: Mapping[str, str] | None = None,
    comment: str | None = None,
    table: str = "",
) -> TableSchema:
    """Build schema-0 from an Arrow schema (or fields), validating keys like Paimon's Schema does."""
    where = f"table {table!r}: " if table else ""
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    primary_keys = _keys_from_option(opts, "primary-key", primary_keys, where)
    partition_keys = _keys_from_option(opts, "partition", partition_keys, where)
    if isinstance(schema, pa.Schema):
        raw = [(f.name, from_arrow_type(f.type, nullable=f.nullable, where=f.name)) for f in schema]
    else:
        raw = [(f.name, f.type) for f in schema]
    names = [n for n, _ in raw]
    if not names:
        raise SchemaError(f"{where}a table needs at least one column")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaError(f"{where}duplicate column names {dupes}")
    for n in names:
        check_column_name(n, where)
    for label, keys in (("partition key", partition_keys), ("primary key", primary_keys)):
        missing = [k for k in keys if k not in names]
        if missing:
            raise SchemaError(f"{where}{label}s {missing} are not columns (columns: {names})")
        if len(set(keys)) != len(keys):
            raise SchemaError(f"{where}{label}s {list(keys)} repeat a column")
    if primary_keys and set(primary_keys) == set(partition_keys):
        raise SchemaError(
            f"{where}primary keys {list(primary_keys)} must not equal the partition keys; "
            "add a column that identifies a row within a partition"
        )
    next_id = [0]
    fields: list[DataField] = []
    for name, t in raw:
        if name in primary_keys and t.nullable:
            t = t.copy(nullable=False)  # Schema.normalizeFields: primary keys are NOT NULL
        fid = next_id[0]
        next_id[0] += 1
        fields.append(DataField(fid, name, assign_field_ids(t, next_id)))
    highest = max([f.id for f in fields] + [f.id for top in fields for f in nested_fields(top.type)])
    result = TableSchema(
        id=0,
        fields=tuple(fields),
        highest_field_id=highest,
        partition_keys=tuple(partition_keys),
        primary_keys=tuple(primary_keys),
        options=opts,
        comment=comment,
        time_millis=int(time.time() * 1000),
    )
    check_option_keys(result.options, table=table or "(new table)", columns=result.field_names)
    _validate_bucket_keys(result, where)
    return result


def check_column_name(name: str, where: str) -> None:
    if not name or name.startswith("_KEY_") or name in ("_SEQUENCE_NUMBER", "_VALUE_KIND", "_row_kind"):
        raise SchemaError(f"{where}column name {name!r} is empty or reserved for system columns")


def validate_column_options(schema: TableSchema, where: str) -> None:
    """The options that name columns (bucket-key, fields.<col>.*) name existing ones (after an alter)."""
    _validate_bucket_keys(schema, where)
    _validate_field_options(schema, where)


def _validate_field_options(schema: TableSchema, where: str) -> None:
    """Every `fields.<names>.<option>` names columns of the table (SchemaValidation.validateFieldsPrefix); only
    `fields.default-aggregate-function` is not about a column."""
    for key in schema.options:
        if not key.startswith("fields.") or key == "fields.default-aggregate-function":
            continue
        unknown = [n for n in key[len("fields."):].split(".", 1)[0].split(",") if n not in schema.field_names]
        if unknown:
            raise OptionError(
                f"{where}option {key!r} names {unknown}, which are not columns (columns: {schema.field_names})"
            )


def _keys_from_option(options: dict[str, str], key: str, given: Sequence[str] | None, where: str) -> Sequence[str]:
    """Java's Schema: the table option 'primary-key' / 'partition' ("a,b") gives the keys and is not stored.
    `None` means no keys; a lone string is refused (it would read as one key per character)."""
    what = "primary keys" if key == "primary-key" else "partition keys"
    if given is None:
        given = ()
    elif isinstance(given, str | bytes) or not all(isinstance(k, str) for k in given):
        raise SchemaError(f"{where}{what} must be a list of column names, got {given!r}")
    if key not in options:
        return given
    if given:
        raise OptionError(f"{where}option {key!r} and the {what} argument both define the {what}; use one")
    return [k.strip() for k in options.pop(key).split(",") if k.strip()]


def _validate_bucket_keys(schema: TableSchema, where: str) -> None:
    raw = schema.options.get("bucket-key")
    if not raw:
        return
    keys = schema.bucket_keys
    missing = [k for k in keys if k not in schema.field_names]
    if missing:
        raise SchemaError(f"{where}bucket-key {missing} are not columns")
    in_partition = [k for k in keys if k in schema.partition_keys]
    if in_partition:
        raise SchemaError(f"{where}bucket-key {in_partition} must not contain partition keys")
    if schema.primary_keys and not set(keys) <= set(schema.primary_keys):
        raise SchemaError(
            f"{where}bucket-key {list(keys)} must be a subset of the primary keys {list(schema.primary_keys)}"
        )
