"""Filter predicates: parsed from pyarrow.parquet-style DNF, bound to a table schema, and evaluated three ways.

Mirrors the role of org.apache.paimon.predicate.* (leaf predicates combined with AND / OR):

* ``to_arrow_expression()`` filters rows of an Arrow table (SQL semantics: a comparison with null never
  matches);
* ``test_stats(...)`` prunes a data file from its min / max / null-count statistics (False only when no
  row of the file can match);
* ``test_row(...)`` evaluates one row of Python values, used on partition values;
* ``project(...)`` and :func:`equality_values` derive partition-only / key-only filters and the bucket-key
  values a filter pins, for partition and bucket pruning.

A predicate is *bound* when :func:`parse_filter` built it: every literal is then a value of the column's

Modules: :mod:`.ops` (operator names), :mod:`.base` (the interface), :mod:`.leaf` and :mod:`.compound` (the model),
:mod:`.parse` (DNF parsing and binding), :mod:`.literals` (literal conversion), :mod:`.buckets` (bucket pruning).
"""

from table_format.predicate.base import Predicate
from table_format.predicate.buckets import equality_values
from table_format.predicate.compound import And, Or, and_, or_
from table_format.predicate.leaf import Leaf
from table_format.predicate.literals import convert_literal
from table_format.predicate.ops import (
    EQ,
    GE,
    GT,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LE,
    LT,
    NE,
    NOT_IN,
    OPS,
    STARTS_WITH,
)
from table_format.predicate.parse import parse_filter

__all__ = [
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "IN",
    "NOT_IN",
    "IS_NULL",
    "IS_NOT_NULL",
    "STARTS_WITH",
    "OPS",
    "Predicate",
    "Leaf",
    "And",
    "Or",
    "and_",
    "or_",
    "parse_filter",
    "convert_literal",
    "equality_values",
]
