"""The writing half of the ``paimon`` data source: executors write files, the driver commits once.

``write()`` runs in each Spark task: ``table.new_write()``, the task's Arrow batches, ``prepare_commit()``; the
picklable commit messages travel to the driver inside a ``TaskCommit``. ``commit()`` runs once on the driver: one
snapshot for the whole job (``table_format.commit_write``, write_table's semantics). ``abort()`` (a task failed, or
the commit) deletes every file the tasks wrote, unless the commit may have landed (then nothing is deleted; files
of tasks Spark did not report are left as orphans for ``remove_orphan_files``).

Primary-key tables: Paimon's own writers route rows so that one writer owns each bucket. A Spark writer cannot ask
for a distribution: in a plain write each task numbers its rows in a sequence slot of its own (jobs/spark/pk_write.py)
so that tasks sharing a bucket merge by number; ``jobs.spark.write`` routes rows (one task per bucket, or per
partition on dynamic-bucket tables), and ``commit()`` checks that the routing held.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from jobs.spark.create import TableSpec, key_list, open_or_create
from jobs.spark.pk_write import ROUTED, check_writers, merge_task_indexes, task_sequence_slot
from jobs.spark.read_options import CATALOG_OPTION_PREFIX, branch_option, catalog_options, open_branch, table_path
from jobs.spark.threads import limit_to_task
from jobs.spark.types import check_writable, to_table_units
from table_format import (
    CommitMessage,
    OptionError,
    Table,
    commit_write,
    discard_written_files,
    table_commit_landed,
)

OVERWRITE_PARTITIONS = "overwrite-partitions"
COMMIT_USER = "commit-user"  # recorded in the snapshot; default a random UUID per write
COMMIT_IDENTIFIER = "commit-identifier"  # the snapshot's commitIdentifier (jobs.spark.write_stream: the batch id)
PRIMARY_KEY_OPTIONS = ("primary-key", "primary-keys")  # "id" or "dt,id": keys of a table the write creates
PARTITION_KEY_OPTIONS = ("partition-keys", "partition")
_NOT_TABLE_OPTIONS = {"path", "warehouse", "branch", COMMIT_USER, COMMIT_IDENTIFIER, OVERWRITE_PARTITIONS, ROUTED,
                      *PRIMARY_KEY_OPTIONS,
                      *PARTITION_KEY_OPTIONS}


@dataclass(frozen=True)
class TaskCommit(WriterCommitMessage):
    """What one Spark task wrote: its commit messages and every file path (for abort)."""

    messages: tuple[CommitMessage, ...]
    written_paths: tuple[str, ...]


@dataclass(frozen=True)
class WritePlan:
    """Decided on the driver before any task runs; pickled to the tasks and to the commit."""

    path: str
    identifier: str
    overwrite: bool
    overwrite_partitions: tuple[dict[str, Any], ...] | None
    one_writer_per: str | None  # "bucket" (fixed-bucket primary key), "partition" (dynamic bucket) or None
    commit_user: str
    base_snapshot_id: int | None
    catalog_options: dict[str, str] = field(default_factory=dict, repr=False)  # s3.*: may hold secrets
    branch: str | None = None  # option "branch": write that Paimon branch of the table
    routed: bool = False  # jobs.spark.write routed the rows: one task per bucket (partition: dynamic buckets)
    commit_identifier: int | None = None

    def open_table(self) -> Table:
        return open_branch(self.path, self.catalog_options, self.branch)


def plan_write(options: Mapping[str, str], schema: StructType, *, overwrite: bool) -> WritePlan:
    path = table_path(options)
    s3_options = catalog_options(options)
    branch = branch_option(options)
    table = open_or_create(path, schema, table_spec(options), catalog_options=s3_options)
    if branch is not None:
        table = table.branch(branch)
    check_writable(schema, table.arrow_schema, table=table.identifier)
    partitions = overwrite_partitions_option(options.get(OVERWRITE_PARTITIONS), table=table.identifier)
    if partitions is not None and not overwrite:
        raise OptionError(f"table {table.identifier!r}: option {OVERWRITE_PARTITIONS!r} needs mode('overwrite')")
    if partitions is not None:
        table.partition_filter(list(partitions))  # validates the specs now, before any task runs
    latest = table.latest_snapshot()
    return WritePlan(path=path, identifier=table.identifier, overwrite=overwrite, overwrite_partitions=partitions,
                     one_writer_per=single_writer_unit(table), commit_user=options.get(COMMIT_USER) or str(uuid.uuid4()),
                     base_snapshot_id=latest.id if latest else None, catalog_options=s3_options,
                     branch=branch, routed=(options.get(ROUTED) or "").strip().lower() == "true",
                     commit_identifier=_identifier(options.get(COMMIT_IDENTIFIER), table=table.identifier))


def _identifier(raw: str | None, *, table: str) -> int | None:
    if raw is None or not str(raw).strip():
        return None
    try:
        return int(raw)
    except ValueError:
        raise OptionError(f"table {table!r}: option {COMMIT_IDENTIFIER!r} must be an integer, got {raw!r}") from None


def table_spec(options: Mapping[str, str]) -> TableSpec:
    """The keys and table options a write creates its table with (``option("primary-key", "dt,id")``,
    ``option("partition-keys", "dt")``, any other option such as ``bucket``: a table option); only used when no
    table exists at the path."""
    lowered = {k.lower(): v for k, v in options.items()}
    primary = next((key_list(lowered[k]) for k in PRIMARY_KEY_OPTIONS if k in lowered), None)
    partition = next((key_list(lowered[k]) for k in PARTITION_KEY_OPTIONS if k in lowered), None)
    table_options = {k: v for k, v in lowered.items()
                     if k not in _NOT_TABLE_OPTIONS and not k.startswith(CATALOG_OPTION_PREFIX)}
    return TableSpec(primary_keys=primary, partition_keys=partition, options=table_options)


def single_writer_unit(table: Table) -> str | None:
    """What one task must own on this table: a bucket, a partition (dynamic buckets) or nothing (append tables)."""
    if not table.primary_keys:
        return None
    return "bucket" if table.bucket_mode == "fixed" else "partition"


def overwrite_partitions_option(raw: str | None, *, table: str) -> tuple[dict[str, Any], ...] | None:
    """``'[{"dt": "2024-05-14"}]'`` (JSON: a list of specs or one spec) or ``"dt=2024-05-14,hr=10;dt=2024-05-15"``
    (``;`` between specs, ``,`` between keys of one spec)."""
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    where = f"table {table!r}: option {OVERWRITE_PARTITIONS!r}"
    if text[0] in "[{":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            raise OptionError(f"{where} is not valid JSON ({e}): {raw!r}") from None
        specs = [value] if isinstance(value, dict) else value
        if not isinstance(specs, list) or not all(isinstance(s, dict) and s for s in specs):
            raise OptionError(f"{where} must be a JSON object or a list of non-empty objects, got {raw!r}")
        return tuple(dict(s) for s in specs)
    out = []
    for spec in text.split(";"):
        pairs = [p.partition("=") for p in spec.split(",") if p.strip()]
        if not pairs or any(not eq or not k.strip() for k, eq, _ in pairs):
            raise OptionError(f"{where} must look like 'dt=2024-05-14,hr=10;dt=2024-05-15', got {raw!r}")
        out.append({k.strip(): v.strip() for k, _, v in pairs})
    return tuple(out)


class PaimonWriter(DataSourceArrowWriter):
    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskCommit:
        limit_to_task()
        plan = self.plan
        table = plan.open_table()
        slot = task_sequence_slot(plan.one_writer_per, routed=plan.routed, table=table.identifier)
        writer = table.new_write(overwrite=plan.overwrite, sequence_slot=slot)
        target = table.arrow_schema
        try:
            for batch in iterator:
                writer.write(to_table_units(batch, target, table=table.identifier))
            messages = writer.prepare_commit()
        except BaseException:
            writer.abort()  # this task's files: nothing of it is visible
            raise
        return TaskCommit(tuple(messages), tuple(writer.written_paths))

    def commit(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        plan = self.plan
        tasks = [m for m in messages if isinstance(m, TaskCommit)]
        table = plan.open_table()
        messages = [m for t in tasks for m in t.messages]
        merged_paths: list[str] = []
        superseded: list[str] = []
        try:
            check_writers(tasks, table, plan.one_writer_per, routed=plan.routed)
            messages, merged_paths, superseded = merge_task_indexes(table, messages, plan.one_writer_per,
                                                                    routed=plan.routed)
            commit_write(table, messages,
                         mode="overwrite" if plan.overwrite else "append",
                         overwrite_partitions=list(plan.overwrite_partitions) if plan.overwrite_partitions else None,
                         commit_user=plan.commit_user, commit_identifier=plan.commit_identifier)
        except BaseException:
            self._discard(table, tasks, merged_paths)
            raise
        discard_written_files(table, superseded)  # the tasks' HASH files that the merged ones replaced

    def abort(self, messages: Sequence[WriterCommitMessage | None]) -> None:
        table = self.plan.open_table()
        self._discard(table, [m for m in messages if isinstance(m, TaskCommit)])

    def _discard(self, table: Table, tasks: Sequence[TaskCommit], extra: Sequence[str] = ()) -> None:
        """Delete the tasks' files (and ``extra`` ones the commit wrote), unless this job's commit may have landed."""
        if table_commit_landed(table, self.plan.commit_user, after_snapshot_id=self.plan.base_snapshot_id):
            return
        discard_written_files(table, [p for t in tasks for p in t.written_paths] + list(extra))
