"""Levels and sorted runs of one bucket (org.apache.paimon.mergetree.Levels / SortedRun / LevelSortedRun).

Every level-0 file is its own sorted run (newest first: higher max sequence number first); every
non-empty level >= 1 is one sorted run of non-overlapping files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from table_format.meta.manifest import DataFileMeta


@dataclass(frozen=True, slots=True)
class LevelSortedRun:
    level: int
    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)


def level0_order(f: DataFileMeta) -> tuple[int, int, int, str]:
    """Level-0 order: newest (highest max sequence) first; ties by min sequence, creation time, name."""
    return (-f.max_sequence_number, f.min_sequence_number, f.creation_time or 0, f.file_name)


@dataclass(frozen=True, slots=True)
class Levels:
    num_levels: int
    files: tuple[DataFileMeta, ...]

    @property
    def max_level(self) -> int:
        return self.num_levels - 1

    def level(self, n: int) -> list[DataFileMeta]:
        return [f for f in self.files if f.level == n]

    def sorted_runs(self) -> list[LevelSortedRun]:
        """Runs newest first: level-0 files one by one, then levels 1..max."""
        runs = [LevelSortedRun(0, (f,)) for f in sorted(self.level(0), key=level0_order)]
        for lv in range(1, self.num_levels):
            files = self.level(lv)
            if files:
                runs.append(LevelSortedRun(lv, tuple(files)))
        return runs

    def non_empty_highest_level(self) -> int:
        return max((f.level for f in self.files), default=-1)


def make_levels(files: Sequence[DataFileMeta], num_levels: int) -> Levels:
    top = max((f.level for f in files), default=0)
    return Levels(max(num_levels, top + 1), tuple(files))
