"""MergeSpec: the merge engine of a primary-key table and its options, parsed and validated once.

Mirrors the option handling of Paimon 0.9's merge functions (DeduplicateMergeFunction,
FirstRowMergeFunction, PartialUpdateMergeFunction.Factory, AggregateMergeFunction.Factory,
FieldAggregator.createFieldAggregator) and of SchemaValidation (sequence.field, sequence groups).
Every error names the option and the column at fault.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from table_format.errors import OptionError, SchemaError, UnsupportedFeatureError
from table_format.options import MergeEngine
from table_format.schema import TableSchema
from table_format.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

FIELDS_PREFIX = "fields."
SEQUENCE_GROUP_SUFFIX = ".sequence-group"
AGG_SUFFIX = ".aggregate-function"
DEFAULT_AGG_OPTION = "fields.default-aggregate-function"
IGNORE_DELETE_KEYS = ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                      "partial-update.ignore-delete")
REMOVE_ON_DELETE = "partial-update.remove-record-on-delete"
AUTO_PADDING = "sequence.auto-padding"
_AUTO_PADDINGS = ("row-kind-flag", "second-to-micro", "millis-to-micro")

_NUMERIC = (TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DecimalType)
_COMPARABLE = (*_NUMERIC, CharType, VarCharType, BinaryType, VarBinaryType, DateType, TimeType, TimestampType,
               LocalZonedTimestampType)

# name -> (accepted types (None = all), supports retraction, description of the types)
FUNCTIONS: dict[str, tuple[tuple[type, ...] | None, bool, str]] = {
    "sum": (_NUMERIC, True, "DECIMAL, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE"),
    "product": (_NUMERIC, True, "DECIMAL, TINYINT, SMALLINT, INT, BIGINT, FLOAT or DOUBLE"),
    "max": (_COMPARABLE, False, "a number, CHAR/VARCHAR, BINARY/VARBINARY, DATE, TIME or TIMESTAMP type"),
    "min": (_COMPARABLE, False, "a number, CHAR/VARCHAR, BINARY/VARBINARY, DATE, TIME or TIMESTAMP type"),
    "last_value": (None, True, "any type"),
    "last_non_null_value": (None, True, "any type"),
    "first_value": (None, False, "any type"),
    "first_non_null_value": (None, False, "any type"),
    "listagg": ((VarCharType,), False, "STRING (VARCHAR)"),
    "bool_and": ((BooleanType,), False, "BOOLEAN"),
    "bool_or": ((BooleanType,), False, "BOOLEAN"),
    "collect": ((ArrayType,), True, "ARRAY"),
    "merge_map": ((MapType,), True, "MAP"),
    "nested_update": ((ArrayType,), True, "ARRAY<ROW<...>>"),
}
ALIASES = {"first_not_null_value": "first_non_null_value"}
_UNSUPPORTED = {
    "hll_sketch": "DataSketches HLL sketches are not implemented here",
    "theta_sketch": "DataSketches theta sketches are not implemented here",
    "rbm32": "Paimon 0.9 has no rbm32 aggregate function",
    "rbm64": "Paimon 0.9 has no rbm64 aggregate function",
    "count": "Paimon 0.9 has no 'count' aggregate function (its docs suggest 'sum' over 1/0 values)",
    "primary-key": "'primary-key' is internal to Paimon and not a user aggregate function",
}


@dataclass(frozen=True, slots=True)
class FieldAgg:
    """The aggregate function of one column (FieldAggregator)."""

    column: str
    function: str  # canonical name, or "primary_key" for primary-key columns
    type: DataType
    ignore_retract: bool = False
    delimiter: str = ","
    distinct: bool = False
    nested_key: tuple[str, ...] = ()
    # a type error found while reading a table (Java fails only when the function first merges two values)
    error: str | None = None

    @property
    def supports_retract(self) -> bool:
        if self.function == "primary_key":
            return True
        return FUNCTIONS[self.function][1]


@dataclass(frozen=True, slots=True)
class SequenceGroup:
    """`fields.<seq1>,<seq2>.sequence-group` = <value columns>."""

    option: str
    sequence_fields: tuple[str, ...]
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MergeSpec:
    """Everything the merge needs to know about a table's merge engine."""

    table: str
    engine: MergeEngine
    key_names: tuple[str, ...]
    primary_keys: tuple[str, ...]
    field_names: tuple[str, ...]
    types: Mapping[str, DataType]
    sequence_fields: tuple[str, ...]
    ignore_delete: bool = False
    remove_record_on_delete: bool = False
    aggs: Mapping[str, FieldAgg] = field(default_factory=dict)
    groups: tuple[SequenceGroup, ...] = ()
    # column -> index into groups, for value columns and the group's own sequence columns
    group_of: Mapping[str, int] = field(default_factory=dict)

    @property
    def latest_wins(self) -> bool:
        """deduplicate taking every record: a key's merged row is its last record, whatever it holds, so input in
        sequence order needs no `_SEQUENCE_NUMBER`."""
        return self.engine == MergeEngine.DEDUPLICATE and not self.ignore_delete

    def required_columns(self, columns: Sequence[str]) -> list[str]:
        """`columns` plus what merging them needs: keys, sequence.field and sequence-group columns."""
        out = list(columns)
        extra = list(self.key_names) + list(self.sequence_fields)
        if self.engine == MergeEngine.PARTIAL_UPDATE and self.groups:
            for c in columns:
                g = self.group_of.get(c)
                if g is not None:
                    extra += self.groups[g].sequence_fields
        for c in extra:
            if c not in out:
                out.append(c)
        return out


def _bool_option(options: Mapping[str, str], key: str, default: bool = False, where: str = "") -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    low = str(raw).strip().lower()
    if low not in ("true", "false"):
        raise OptionError(f"{where}option {key!r}: {raw!r} is not true or false")
    return low == "true"


def _ignore_delete(options: Mapping[str, str], where: str) -> bool:
    for key in IGNORE_DELETE_KEYS:  # ConfigOption with fallback keys: the first one present wins
        if key in options:
            return _bool_option(options, key, where=where)
    return False


def _split(raw: str) -> list[str]:
    return [s.strip() for s in raw.split(",") if s.strip()]


def _check_type(agg: FieldAgg, option: str, where: str) -> None:
    if agg.function == "primary_key":
        return
    accepted, _, described = FUNCTIONS[agg.function]
    t = agg.type
    if accepted is not None and not isinstance(t, accepted):
        raise SchemaError(
            f"{where}option {option!r}: aggregate function {agg.function!r} needs column {agg.column!r} to be "
            f"{described}, not {t}"
        )
    if agg.function == "nested_update":
        assert isinstance(t, ArrayType)
        if not isinstance(t.element, RowType):
            raise SchemaError(
                f"{where}option {option!r}: aggregate function 'nested_update' needs column {agg.column!r} to be "
                f"ARRAY<ROW<...>>, not {t}"
            )
        names = [f.name for f in t.element.fields]
        missing = [k for k in agg.nested_key if k not in names]
        if missing:
            raise SchemaError(
                f"{where}option 'fields.{agg.column}.nested-key': {missing} are not fields of the rows of column "
                f"{agg.column!r} ({names})"
            )


def _field_agg(name: str, function: str, option: str, t: DataType, options: Mapping[str, str],
               where: str, strict: bool) -> FieldAgg:
    raw = function.strip()
    fn = ALIASES.get(raw, raw)
    if fn in _UNSUPPORTED:
        raise UnsupportedFeatureError(f"{where}option {option!r}: aggregate function {raw!r}: {_UNSUPPORTED[fn]}")
    if fn not in FUNCTIONS:
        allowed = ", ".join(sorted([*FUNCTIONS, *ALIASES]))
        raise OptionError(f"{where}option {option!r}: unknown aggregate function {raw!r} (known: {allowed})")
    agg = FieldAgg(
        column=name,
        function=fn,
        type=t,
        ignore_retract=_bool_option(options, f"fields.{name}.ignore-retract", where=where),
        delimiter=options.get(f"fields.{name}.list-agg-delimiter", ","),
        distinct=_bool_option(options, f"fields.{name}.distinct", where=where),
        nested_key=tuple(options[f"fields.{name}.nested-key"].split(","))
        if options.get(f"fields.{name}.nested-key") else (),
    )
    try:
        _check_type(agg, option, where)
    except SchemaError as e:
        if strict:
            raise
        return replace(agg, error=str(e))
    return agg


def merge_spec(schema: TableSchema, options: Mapping[str, str] | None = None, *, table: str = "",
               strict: bool = False) -> MergeSpec:
    """Parse and validate the merge options of `schema` (its own options unless `options` is given).

    With `strict` (create_table) a column type that its aggregate function does not accept is an error at
    once; otherwise (tables written elsewhere) the error is raised when that function first merges values,
    which is when Paimon 0.9 fails.
    """
    opts = {str(k): str(v) for k, v in (schema.options if options is None else options).items()}
    where = f"table {table!r}: " if table else ""
    raw_engine = opts.get("merge-engine", "deduplicate").strip().lower()
    try:
        engine = MergeEngine(raw_engine)
    except ValueError:
        allowed = ", ".join(e.value for e in MergeEngine)
        raise OptionError(f"{where}option 'merge-engine': {raw_engine!r} is not one of {allowed}") from None
    names = schema.field_names
    types = {f.name: f.type for f in schema.fields}
    seq = tuple(_split(opts.get("sequence.field", "")))
    for c in seq:
        if c not in names:
            raise SchemaError(f"{where}option 'sequence.field' names unknown column {c!r} (columns: {names})")
        if f"fields.{c}{AGG_SUFFIX}" in opts:
            raise OptionError(
                f"{where}option 'fields.{c}{AGG_SUFFIX}': the sequence field {c!r} must not have an aggregate function"
            )
    dupes = sorted({c for c in seq if seq.count(c) > 1})
    if dupes:
        raise OptionError(f"{where}option 'sequence.field' repeats the columns {dupes}")
    padding = opts.get(AUTO_PADDING)
    if padding is not None:
        bad = [p for p in _split(padding) if p not in _AUTO_PADDINGS]
        if bad:
            raise OptionError(f"{where}option {AUTO_PADDING!r}: {bad} not among {', '.join(_AUTO_PADDINGS)}")
    ignore_delete = _ignore_delete(opts, where)
    remove_on_delete = _bool_option(opts, REMOVE_ON_DELETE, where=where)
    if engine == MergeEngine.FIRST_ROW and seq:
        raise OptionError(
            f"{where}option 'sequence.field' ({', '.join(seq)}) cannot be used with merge-engine 'first-row' "
            "(the first record by input order always wins)"
        )
    if engine == MergeEngine.FIRST_ROW:
        producer = opts.get("changelog-producer", "none").strip().lower()
        if producer not in ("none", "lookup"):
            raise OptionError(
                f"{where}option 'changelog-producer' = {producer!r}: merge-engine 'first-row' allows only "
                "'none' and 'lookup'"
            )
    groups = _sequence_groups(opts, names, where)
    group_of: dict[str, int] = {}
    for i, g in enumerate(groups):
        for c in g.fields:
            group_of[c] = i
    for i, g in enumerate(groups):  # a group's own sequence columns belong to it ("add self")
        for c in g.sequence_fields:
            group_of[c] = i
    aggs: dict[str, FieldAgg] = {}
    default_fn = opts.get(DEFAULT_AGG_OPTION)
    if engine == MergeEngine.PARTIAL_UPDATE and groups and default_fn is not None:
        default_name = ALIASES.get(default_fn.strip(), default_fn.strip())
        if default_name not in ("last_non_null_value", "last_value", "first_value", "first_non_null_value", "max", "min"):
            seq_cols = [c for g in groups for c in g.sequence_fields]
            raise UnsupportedFeatureError(
                f"{where}option {DEFAULT_AGG_OPTION!r} = {default_fn!r} with sequence groups: Paimon 0.9 also "
                f"aggregates the sequence-group columns {seq_cols} with it (fixed in later Paimon); set the "
                "function per column with 'fields.<column>.aggregate-function' instead"
            )
    pks = tuple(schema.primary_keys)
    if engine in (MergeEngine.AGGREGATION, MergeEngine.PARTIAL_UPDATE):
        for f in schema.fields:
            own = opts.get(f"fields.{f.name}{AGG_SUFFIX}")
            fn: str | None = own if own is not None else default_fn
            option = f"fields.{f.name}{AGG_SUFFIX}" if own is not None else DEFAULT_AGG_OPTION
            if f.name in pks:
                # FieldPrimaryKeyAgg: key columns keep the key whatever function is configured
                if fn is not None or engine == MergeEngine.AGGREGATION:
                    aggs[f.name] = FieldAgg(column=f.name, function="primary_key", type=f.type)
                continue
            if fn is None:
                if engine == MergeEngine.AGGREGATION:
                    aggs[f.name] = FieldAgg(column=f.name, function="last_non_null_value", type=f.type,
                                            ignore_retract=_bool_option(opts, f"fields.{f.name}.ignore-retract",
                                                                        where=where))
                continue
            aggs[f.name] = _field_agg(f.name, fn, option, f.type, opts, where, strict)
    else:
        for f in schema.fields:
            if f"fields.{f.name}{AGG_SUFFIX}" in opts:
                raise OptionError(
                    f"{where}option 'fields.{f.name}{AGG_SUFFIX}' needs merge-engine 'aggregation' or "
                    f"'partial-update', not {engine.value!r}"
                )
    if groups and engine != MergeEngine.PARTIAL_UPDATE:
        raise OptionError(f"{where}option {groups[0].option!r}: sequence groups need merge-engine 'partial-update'")
    for g in groups:
        for c in g.sequence_fields:
            if f"fields.{c}{AGG_SUFFIX}" in opts:
                raise OptionError(
                    f"{where}option 'fields.{c}{AGG_SUFFIX}': the sequence-group field {c!r} (option {g.option!r}) "
                    "must not have an aggregate function"
                )
    if engine == MergeEngine.PARTIAL_UPDATE:
        if aggs and not groups:
            col = next(iter(aggs))
            raise OptionError(
                f"{where}merge-engine 'partial-update' with aggregate functions (column {col!r}) needs sequence "
                "groups: set 'fields.<seq>.sequence-group' for the aggregated columns"
            )
        if remove_on_delete and ignore_delete:
            raise OptionError(f"{where}options 'ignore-delete' and {REMOVE_ON_DELETE!r} conflict; set only one")
        if remove_on_delete and groups:
            raise OptionError(f"{where}option {REMOVE_ON_DELETE!r} conflicts with sequence groups ({groups[0].option!r})")
    elif remove_on_delete:
        raise OptionError(f"{where}option {REMOVE_ON_DELETE!r} needs merge-engine 'partial-update'")
    return MergeSpec(
        table=table,
        engine=engine,
        key_names=tuple(schema.trimmed_primary_keys),
        primary_keys=pks,
        field_names=tuple(names),
        types=types,
        sequence_fields=seq,
        ignore_delete=ignore_delete,
        remove_record_on_delete=remove_on_delete,
        aggs=aggs,
        groups=tuple(groups),
        group_of=group_of,
    )


def _sequence_groups(opts: Mapping[str, str], names: list[str], where: str) -> list[SequenceGroup]:
    groups = []
    seen: dict[str, str] = {}
    for k in sorted(opts):
        if not (k.startswith(FIELDS_PREFIX) and k.endswith(SEQUENCE_GROUP_SUFFIX)):
            continue
        seq_fields = tuple(s.strip() for s in k[len(FIELDS_PREFIX): -len(SEQUENCE_GROUP_SUFFIX)].split(","))
        for s in seq_fields:
            if s not in names:
                raise SchemaError(f"{where}option {k!r}: sequence field {s!r} is not a column (columns: {names})")
        cols = tuple(s.strip() for s in opts[k].split(","))
        for c in cols:
            if c not in names:
                raise SchemaError(f"{where}option {k!r}: column {c!r} is not a column (columns: {names})")
            if c in seen:
                raise OptionError(f"{where}column {c!r} is in two sequence groups: {seen[c]!r} and {k!r}")
            seen[c] = k
        groups.append(SequenceGroup(option=k, sequence_fields=seq_fields, fields=cols))
    return groups


def validate_merge_options(schema: TableSchema, *, table: str = "") -> None:
    """Raise OptionError / SchemaError / UnsupportedFeatureError if the table's merge options are invalid."""
    if schema.primary_keys:  # append tables ignore merge options, as in Paimon
        merge_spec(schema, table=table, strict=True)
