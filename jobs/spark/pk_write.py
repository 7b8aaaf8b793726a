"""Plain Spark writes (``df.write.format("paimon")``, ``INSERT INTO``) on primary-key tables, however Spark
partitioned the rows.

Paimon numbers the records of a bucket: each writer continues from the bucket's highest sequence number in the
latest snapshot, and a merge keeps, per key, the record with the highest number. Paimon's own writers shuffle rows
so that one writer owns each bucket. A Python data source cannot ask Spark for that shuffle, so in a plain write
several tasks may hold rows of one bucket. Each task then numbers its rows in a slot of its own: task ``p`` gives
the i-th row it writes to a bucket ``base + i * SLOTS + p`` (``TableWrite(sequence_slot=(p, SLOTS))``):

* no two tasks share a number, so every reader (ours, Java's) merges their level-0 files the same way, by number;
* within a task the input order holds (a later row of a key replaces an earlier one, as in one writer);
* across tasks the order is Spark's arbitrary one, as with Paimon's shuffle: which of two tasks' versions of one
  key wins is not defined (give the table a ``sequence.field`` to decide it by a column);
* a bucket's numbers grow by at most ``SLOTS`` (65 536) times the rows one task wrote to it: int64 overflows only
  after 1.4e14 rows written to one bucket this way (``jobs.spark.write`` numbers them one by one).

These tasks never compact (two could rewrite the same files): their files stay on level 0 until a compaction
(``jobs.spark.compact``, or the next ``jobs.spark.write``). ``jobs.spark.write`` routes rows so that one task owns
each bucket: the fast path, with compaction in the writers and no level-0 pile-up; it marks its write ``routed``,
and its commit checks that the routing held.

Dynamic-bucket tables (``bucket`` = -1) assign new keys to buckets per partition; two tasks could give one new key
two buckets, so a plain write whose tasks share a partition is refused there (``jobs.spark.write`` routes it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pyspark import TaskContext

from table_format import CommitMessage, SchemaError, Table

SLOTS = 1 << 16  # at most this many Spark tasks (partitions) in one plain write of a primary-key table
ROUTED = "routed"  # write option: "true" when each bucket (partition, dynamic buckets) is in one task


class TaskOutput(Protocol):
    messages: tuple[CommitMessage, ...]


def task_sequence_slot(one_writer_per: str | None, *, routed: bool, table: str) -> tuple[int, int] | None:
    """On an executor: the sequence slot of this task's writer, or None (one writer per bucket: plain numbers)."""
    if one_writer_per != "bucket" or routed:
        return None
    context = TaskContext.get()
    slot = context.partitionId() if context is not None else 0
    if slot >= SLOTS:
        raise SchemaError(f"table {table!r}: a plain write of a primary-key table takes at most {SLOTS} Spark "
                          f"partitions (this is partition {slot}); coalesce the DataFrame or use jobs.spark.write")
    return slot, SLOTS


def check_writers(tasks: Sequence[TaskOutput], table: Table, one_writer_per: str | None, *, routed: bool) -> None:
    """Refuse a job in which two tasks wrote what one writer must own: a bucket of a routed write (the routing
    failed), a partition of a dynamic-bucket table (two tasks could give one key two buckets)."""
    if one_writer_per is None or (one_writer_per == "bucket" and not routed):
        return
    owner: dict[tuple[bytes, int], int] = {}
    for task_index, task in enumerate(tasks):
        for m in task.messages:
            key = (m.partition, m.bucket if one_writer_per == "bucket" else 0)
            first = owner.setdefault(key, task_index)
            if first != task_index:
                what = f"bucket {m.bucket}" if one_writer_per == "bucket" else "rows"
                values = table.partition_values(m.partition)
                where = f" of partition {values}" if values else ""
                raise SchemaError(
                    f"table {table.identifier!r}: Spark tasks {first} and {task_index} both wrote {what}{where}; a "
                    f"{'routed write' if routed else 'dynamic-bucket table'} needs each {one_writer_per} written by "
                    "one task (two tasks could assign one key to two buckets). Write with "
                    "jobs.spark.write(df, table_path, mode=...), which routes rows by partition, or coalesce the "
                    "DataFrame to one partition"
                )
