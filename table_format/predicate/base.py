"""The predicate interface (org.apache.paimon.predicate.Predicate): rows, statistics and projections."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import Any

import pyarrow.compute as pc

from table_format.schema import TableSchema


# ---- the predicate model -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Predicate(ABC):
    """A boolean condition on the columns of a row (org.apache.paimon.predicate.Predicate)."""

    @abstractmethod
    def fields(self) -> set[str]:
        """The columns this predicate reads."""

    @abstractmethod
    def to_arrow_expression(self) -> pc.Expression:
        """An Arrow expression selecting the matching rows; rows where it is null or false are dropped."""

    @abstractmethod
    def test_stats(
        self,
        min_values: Mapping[str, Any],
        max_values: Mapping[str, Any],
        null_counts: Mapping[str, int | None],
        row_count: int | None,
    ) -> bool:
        """False only when no row of a file with these statistics can match; True means 'maybe'.

        A column missing from a mapping, or a None min / max, is unknown (unbounded); a None null count
        is unknown; null_count == row_count means the column is all null.
        """

    @abstractmethod
    def test_row(self, values: Mapping[str, Any]) -> bool:
        """Evaluate on one row of Python values with SQL null semantics (a comparison with null is false).

        A column missing from ``values`` or a value that cannot be read as the column's type makes the leaf
        answer True (unknown), so the result is safe for pruning.
        """

    @abstractmethod
    def project(self, fields: Collection[str]) -> Predicate | None:
        """The weakest predicate implied by this one that reads only ``fields`` (None: no restriction)."""

    @abstractmethod
    def _bind(self, schema: TableSchema, where: str) -> Predicate: ...


