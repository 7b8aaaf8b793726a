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

Dynamic-bucket tables (``bucket`` = -1) keep a key -> bucket index per partition (HASH files). In a plain write
the tasks number their rows in slots too, and a key not yet in the index goes to a bucket chosen from its hash and
the index the task loaded (a non-full bucket or the smallest unused id): every task that holds the key picks the
same bucket. Several tasks' HASH files of one bucket are merged into one at the commit (the union of theirs). New
keys spread over fewer buckets than ``dynamic-bucket.target-row-num`` would give with one writer (at most one new
bucket per write); ``jobs.spark.write`` (one task per partition) fills buckets as Paimon's assigner does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pyspark import TaskContext

from table_format import CommitMessage, SchemaError, Table
from table_format.write.dynamic_bucket import merge_shared_indexes

SLOTS = 1 << 16  # at most this many Spark tasks (partitions) in one plain write of a primary-key table
ROUTED = "routed"  # write option: "true" when each bucket (partition, dynamic buckets) is in one task


class TaskOutput(Protocol):
    messages: tuple[CommitMessage, ...]


def task_sequence_slot(one_writer_per: str | None, *, routed: bool, table: str) -> tuple[int, int] | None:
    """On an executor: the sequence slot of this task's writer, or None (one writer per bucket: plain numbers)."""
    if one_writer_per is None or routed:
        return None
    context = TaskContext.get()
    slot = context.partitionId() if context is not None else 0
    if slot >= SLOTS:
        raise SchemaError(f"table {table!r}: a plain write of a primary-key table takes at most {SLOTS} Spark "
                          f"partitions (this is partition {slot}); coalesce the DataFrame or use jobs.spark.write")
    return slot, SLOTS


def merge_task_indexes(table: Table, messages: list[CommitMessage], one_writer_per: str | None, *,
                       routed: bool) -> tuple[list[CommitMessage], list[str], list[str]]:
    """A plain write of a dynamic-bucket table: one HASH index file per bucket that several tasks extended (the
    union of theirs). Returns (messages, index files written, the tasks' files they replace)."""
    if one_writer_per != "partition" or routed:
        return messages, [], []
    return merge_shared_indexes(table.store, messages)


def check_writers(tasks: Sequence[TaskOutput], table: Table, one_writer_per: str | None, *, routed: bool) -> None:
    """Refuse a routed job in which two tasks wrote what one writer must own (the routing failed): a bucket, or a
    partition of a dynamic-bucket table (where two tasks could give one new key two buckets)."""
    if one_writer_per is None or not routed:
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
                    f"routed write needs each {one_writer_per} written by one task: the DataFrame was repartitioned "
                    "after jobs.spark.route, or the 'routed' option was set by hand; write without it"
                )
