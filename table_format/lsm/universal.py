"""Universal compaction picking (org.apache.paimon.mergetree.compact.UniversalCompaction), pure.

Given the sorted runs of a bucket (newest first), decide which runs to merge and into which level:
size amplification, then size ratio, then run count, as Paimon does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from table_format.lsm.levels import LevelSortedRun


@dataclass(frozen=True, slots=True)
class CompactUnit:
    output_level: int
    runs: tuple[LevelSortedRun, ...]

    @property
    def files(self) -> list:  # list[DataFileMeta]
        return [f for r in self.runs for f in r.files]


@dataclass(frozen=True, slots=True)
class UniversalCompaction:
    max_size_amp: int = 200  # compaction.max-size-amplification-percent
    size_ratio: int = 1  # compaction.size-ratio
    num_run_trigger: int = 5  # num-sorted-run.compaction-trigger

    def pick(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        max_level = num_levels - 1
        unit = self._size_amplification(runs, max_level)
        if unit is not None:
            return unit
        unit = self._size_ratio(runs, max_level)
        if unit is not None:
            return unit
        if len(runs) > self.num_run_trigger:
            return self._pick_for_size_ratio(runs, max_level, len(runs) - self.num_run_trigger + 1, force=True)
        return None

    def _size_amplification(self, runs: Sequence[LevelSortedRun], max_level: int) -> CompactUnit | None:
        if len(runs) < self.num_run_trigger:
            return None
        candidate = sum(r.total_size for r in runs[:-1])
        earliest = runs[-1].total_size
        if candidate * 100 > self.max_size_amp * earliest:
            return CompactUnit(max_level, tuple(runs))
        return None

    def _size_ratio(self, runs: Sequence[LevelSortedRun], max_level: int) -> CompactUnit | None:
        if len(runs) < self.num_run_trigger:
            return None
        return self._pick_for_size_ratio(runs, max_level, 1, force=False)

    def _pick_for_size_ratio(
        self, runs: Sequence[LevelSortedRun], max_level: int, candidate_count: int, *, force: bool
    ) -> CompactUnit | None:
        candidate_size = sum(r.total_size for r in runs[:candidate_count])
        triggered = force or candidate_count > 1
        for nxt in runs[candidate_count:]:
            if candidate_size * (100.0 + self.size_ratio) / 100.0 < nxt.total_size and (
                not triggered or nxt.level > 1
            ):
                break  # once triggered, level-0/1 runs are still absorbed
            candidate_size += nxt.total_size
            candidate_count += 1
            triggered = True
        return self._create_unit(runs, max_level, candidate_count) if triggered else None

    def force_pick_level0(self, num_levels: int, runs: Sequence[LevelSortedRun]) -> CompactUnit | None:
        """All level-0 runs up (ForceUpLevel0Compaction, used by lookup / deletion-vector modes)."""
        count = 0
        for r in runs:
            if r.level > 0:
                break
            count += 1
        return None if count == 0 else self._pick_for_size_ratio(runs, num_levels - 1, count, force=True)

    @staticmethod
    def _create_unit(runs: Sequence[LevelSortedRun], max_level: int, run_count: int) -> CompactUnit:
        if run_count == len(runs):
            output_level = max_level
        else:
            output_level = max(0, runs[run_count].level - 1)
        if output_level == 0:
            # level 0 is not an output level: absorb runs until a non-zero level is found
            for nxt in runs[run_count:]:
                run_count += 1
                if nxt.level != 0:
                    output_level = nxt.level
                    break
        if run_count == len(runs):
            output_level = max_level
        return CompactUnit(output_level, tuple(runs[:run_count]))
