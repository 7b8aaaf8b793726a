"""Run picklable work units on the executors, balanced by size, and bring every outcome back to the driver.

A unit's exception does not fail the Spark task: it travels back as a value, so that the driver sees which units
succeeded (and can delete what they wrote) before it raises the first unit's error, with the unit named in a note.
Failures Spark itself raises (a lost executor, a dead Python worker) still fail the job; the files of units that
had finished are then left as orphans, which ``remove_orphan_files`` takes.
"""

from __future__ import annotations

import heapq
import pickle
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pyspark.sql import SparkSession

from jobs.spark.threads import limit_to_task

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class UnitFailure:
    """The error of one unit, picklable: the exception itself when it pickles, else its type, text and traceback."""

    error: BaseException | None
    description: str

    def exception(self, unit_name: str) -> BaseException:
        exc = self.error if self.error is not None else RuntimeError(self.description)
        exc.add_note(f"raised by the Spark task running {unit_name}")
        return exc


@dataclass(frozen=True, slots=True)
class FanOutResult(Generic[R]):
    """Outcomes of the units that succeeded (in unit order) and the failures, by unit index."""

    outcomes: list[R]
    failures: dict[int, UnitFailure]


GROUPS_PER_SLOT = 2  # tasks per slot: a core that frees first takes the next; each task costs Spark overhead


def pack(weights: Sequence[int], slots: int) -> list[list[int]]:
    """Longest processing time first: unit indices in at most `slots` groups of about equal total weight, the
    heaviest group first."""
    slots = max(1, min(slots, len(weights)))
    heap = [(0, i) for i in range(slots)]
    groups: list[list[int]] = [[] for _ in range(slots)]
    for index in sorted(range(len(weights)), key=lambda i: -weights[i]):
        load, slot = heapq.heappop(heap)
        groups[slot].append(index)
        heapq.heappush(heap, (load + max(weights[index], 1), slot))
    loads = {id(g): sum(max(weights[i], 1) for i in g) for g in groups}
    return [sorted(g) for g in sorted(groups, key=lambda g: -loads[id(g)]) if g]


def _failure(exc: BaseException) -> UnitFailure:
    text = "".join(traceback.format_exception(exc))
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - an exception that does not pickle travels as its text
        return UnitFailure(None, f"{type(exc).__name__}: {exc}\n{text}")
    return UnitFailure(exc, text)


def fan_out(spark: SparkSession, units: Sequence[T], run: Callable[[T], R], *, weights: Sequence[int] | None = None,
            job: str) -> FanOutResult[R]:
    """Run `run(unit)` for every unit on the executors, in groups balanced by `weights`; never raises for a unit.

    The units go into GROUPS_PER_SLOT x Spark's default parallelism (its task slots, unless the session pins
    `spark.default.parallelism`) groups (at most one per unit), balanced by weight and scheduled heaviest first, so
    that a core that finishes early takes the next group (list scheduling: the cores stay evenly busy when units
    run slower or faster than their weight says). Every task costs Spark 40-60 ms in local mode (measured), so
    there are few. A group stops at its first failing unit. `job` names the Spark job group (shown in the Spark UI).
    """
    if not units:
        return FanOutResult([], {})
    sc = spark.sparkContext
    groups = pack(list(weights) if weights is not None else [1] * len(units), GROUPS_PER_SLOT * sc.defaultParallelism)
    payload = [[(i, units[i]) for i in group] for group in groups]

    def run_group(items: Iterator[list[tuple[int, T]]]) -> Iterator[tuple[int, bool, Any]]:
        limit_to_task()
        for group in items:
            for index, unit in group:
                try:
                    yield index, True, run(unit)
                except BaseException as exc:  # noqa: BLE001 - sent back to the driver, which raises it
                    yield index, False, _failure(exc)
                    break

    sc.setJobGroup(job, job)
    try:
        rows = sc.parallelize(payload, len(payload)).mapPartitions(run_group).collect()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    rows.sort(key=lambda r: r[0])
    return FanOutResult([value for _, ok, value in rows if ok],
                        {index: value for index, ok, value in rows if not ok})
