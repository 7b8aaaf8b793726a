"""Parsing pyarrow.parquet-style DNF filters and binding them to a table schema."""

from __future__ import annotations

from typing import Any

from table_format.errors import SchemaError
from table_format.predicate.base import Predicate
from table_format.predicate.compound import and_, or_
from table_format.predicate.leaf import Leaf, _bound_leaf, _column_type
from table_format.predicate.ops import _LIST_OPS, _NULL_OPS, _OP_ALIASES, _normalize_op
from table_format.schema import TableSchema


# ---- parsing and binding -----------------------------------------------------------------------------
def parse_filter(filter: Any, schema: TableSchema, *, table: str = "") -> Predicate | None:
    """Parse a pyarrow.parquet-style DNF filter into a predicate bound to ``schema``.

    ``[("a", "=", 1), ("b", ">", 2)]`` is a conjunction; ``[[...], [...]]`` is a disjunction of
    conjunctions. A condition is ``(column, op, literal)``, or ``(column, "is null")`` /
    ``(column, "is not null")``; ``in`` / ``not in`` take a list, tuple or set of literals. A
    :class:`Predicate` is accepted too and bound (its literals converted to the column types).
    None or an empty list means no filter. Errors are :class:`SchemaError` naming the table and column.
    """
    where = f"table {table!r}: " if table else ""
    if filter is None:
        return None
    if isinstance(filter, Predicate):
        return filter._bind(schema, where)
    if not isinstance(filter, (list, tuple)) or isinstance(filter, str):
        raise SchemaError(
            f"{where}filter must be a list of (column, op, value) tuples or a list of such lists, got {filter!r}"
        )
    if not filter:
        return None
    if all(isinstance(f, list) for f in filter):
        return or_(*(_parse_conjunction(conj, schema, where) for conj in filter))
    if all(isinstance(f, tuple) for f in filter):
        return _parse_conjunction(list(filter), schema, where)
    raise SchemaError(
        f"{where}filter {filter!r} mixes conditions and lists: use a list of (column, op, value) tuples "
        "(AND) or a list of such lists (OR of ANDs)"
    )


def _parse_conjunction(conj: list[Any], schema: TableSchema, where: str) -> Predicate:
    if not conj:
        raise SchemaError(f"{where}filter has an empty conjunction []: each inner list needs a condition")
    leaves = []
    for cond in conj:
        if not isinstance(cond, tuple):
            raise SchemaError(f"{where}filter condition {cond!r} must be a (column, op, value) tuple")
        leaves.append(_parse_condition(cond, schema, where))
    return and_(*leaves)


def _parse_condition(cond: tuple[Any, ...], schema: TableSchema, where: str) -> Leaf:
    ctx = f"{where}filter {cond!r}: "
    if len(cond) not in (2, 3):
        raise SchemaError(f"{ctx}a condition is (column, op, value) or (column, 'is null' / 'is not null')")
    column = cond[0]
    if not isinstance(column, str):
        raise SchemaError(f"{ctx}column name must be a string, got {column!r}")
    op = _normalize_op(cond[1])
    if op is None:
        raise SchemaError(
            f"{ctx}unknown operator {cond[1]!r} on column {column!r}; valid operators: {sorted(_OP_ALIASES)}"
        )
    dtype = _column_type(schema, column, ctx)
    if op in _NULL_OPS:
        if len(cond) == 3 and cond[2] is not None:
            raise SchemaError(f"{ctx}{cond[1]!r} on column {column!r} takes no value, got {cond[2]!r}")
        return _bound_leaf(column, op, (), dtype, ctx)
    if len(cond) != 3:
        raise SchemaError(f"{ctx}operator {cond[1]!r} on column {column!r} needs a value")
    value = cond[2]
    if op in _LIST_OPS:
        if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, (list, tuple, set, frozenset)):
            raise SchemaError(f"{ctx}{op!r} on column {column!r} needs a list, tuple or set of values, got {value!r}")
        literals: tuple[Any, ...] = tuple(value)
    else:
        literals = (value,)
    return _bound_leaf(column, op, literals, dtype, ctx)
