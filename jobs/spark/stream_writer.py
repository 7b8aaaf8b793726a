"""``df.writeStream.format("paimon")``: one Paimon commit per micro-batch, exactly once across restarts.

As Java's streaming committers do, every commit carries Spark's batch id as the snapshot's ``commitIdentifier``
under a ``commitUser`` kept for the checkpoint: the first run of a checkpoint creates
``<checkpointLocation>/paimon-commit-user`` (a random id) and every later run reads it back. Before committing
batch n the sink reads the identifier of that user's latest snapshot (``last_commit_identifier``, Java's
``filterCommitted``); when it is n or more, the batch already landed (the query died between our commit and Spark's
commit log, and Spark replays the batch): the replay's files are deleted and nothing is committed. A new checkpoint
is a new commit user, so its batch ids start afresh.

Tasks write as the batch writer does (jobs/spark/writer.py): on a primary-key table whose bucket several tasks of a
batch hold, each task numbers its rows in a sequence slot of its own (jobs/spark/pk_write.py), so the batch is
correct however Spark partitioned it; ``jobs.spark.write_stream`` (foreachBatch, rows routed by bucket, compacting
as Paimon's writers) is the fast path. Output modes: append (and update,
which Spark treats alike for this sink); complete overwrites the table with each batch.

The environment variable ``PAIMON_TEST_CRASH_AFTER_COMMIT`` (``<table>:<batch id>,...``) is a test-only hook: right
after that batch's Paimon commit the process group ``PAIMON_TEST_CRASH_PGID`` and this process are SIGKILLed,
so tests hit the window between our commit and Spark's commit log deterministically.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from jobs.spark.pk_write import check_writers, merge_task_indexes
from jobs.spark.read_options import catalog_options
from jobs.spark.writer import PaimonWriter as _BatchWriter
from jobs.spark.writer import TaskCommit, WritePlan, plan_write
from table_format import (
    OptionError,
    Table,
    commit_write,
    discard_written_files,
    last_commit_identifier,
    open_table,
)
from table_format.io.factory import file_io_for_uri, is_s3

log = logging.getLogger(__name__)

COMMIT_USER_FILE = "paimon-commit-user"
CHECKPOINT_OPTION = "checkpointlocation"
CRASH_ENV = "PAIMON_TEST_CRASH_AFTER_COMMIT"
CRASH_PGID_ENV = "PAIMON_TEST_CRASH_PGID"


def checkpoint_commit_user(checkpoint: str, *, options: Mapping[str, str] | None = None) -> str:
    """The commit user of the stream checkpointing at ``checkpoint``: created by its first run, then read back."""
    location = _local_path(checkpoint)
    file_io, root = file_io_for_uri(location, options=dict(options or {}) if is_s3(location) else None)
    path = f"{root.rstrip('/')}/{COMMIT_USER_FILE}"
    if not file_io.exists(path):
        file_io.mkdirs(root)
        file_io.try_create(path, f"spark-stream-{uuid.uuid4()}".encode())
    user = file_io.read_bytes(path).decode().strip()
    if not user:
        raise OptionError(f"checkpoint {checkpoint!r}: {COMMIT_USER_FILE} is empty; delete it only with the checkpoint")
    return user


def _local_path(location: str) -> str:
    """``file:/x`` and ``file:///x`` (as Spark may pass them) as ``/x``; other URIs unchanged."""
    if location.startswith("file:"):
        rest = location[len("file:"):]
        return "/" + rest.lstrip("/") if rest.startswith("/") else rest
    return location


def commit_batch(table: Table, tasks: Sequence[TaskCommit], *, commit_user: str, batch_id: int,
                 overwrite: bool = False, one_writer_per: str | None = None, routed: bool = False) -> int | None:
    """Commit one micro-batch's task outputs once: returns the snapshot id, None when nothing changed or when the
    batch had landed before (then the tasks' files are deleted)."""
    paths = [p for t in tasks for p in t.written_paths]
    if landed(table, commit_user, batch_id):
        log.info("table %r: batch %d of commit user %s landed before; its replay is dropped", table.identifier,
                 batch_id, commit_user)
        discard_written_files(table, paths)
        return None
    merged: list[str] = []
    try:
        check_writers(tasks, table, one_writer_per, routed=routed)
        messages, merged, superseded = merge_task_indexes(table, [m for t in tasks for m in t.messages],
                                                          one_writer_per, routed=routed)
        snapshot = commit_write(table, messages, mode="overwrite" if overwrite else "append", commit_user=commit_user,
                                commit_identifier=batch_id)
    except BaseException:
        if not landed(table, commit_user, batch_id):
            discard_written_files(table, paths + merged)
        raise
    discard_written_files(table, superseded)  # the tasks' HASH files that the merged ones replaced
    crash_point(table, batch_id)
    return snapshot


def landed(table: Table, commit_user: str, batch_id: int) -> bool:
    """Did batch ``batch_id`` (or a later one) of ``commit_user`` land? True when that cannot be told."""
    try:
        last = last_commit_identifier(table, commit_user)
    except Exception:  # noqa: BLE001 - unreadable: count it as landed, so no file a snapshot may use is deleted
        return True
    return last is not None and last >= batch_id


def crash_point(table: Table, batch_id: int) -> None:
    """The test-only hook of the module docstring."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted or f"{table.identifier}:{batch_id}" not in wanted.split(","):
        return
    group = os.environ.get(CRASH_PGID_ENV)
    if group:
        os.killpg(int(group), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


class PaimonStreamWriter(DataSourceStreamArrowWriter):
    """Tasks write files (as the batch writer); ``commit`` runs once per micro-batch on the driver."""

    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Any) -> TaskCommit:
        return _BatchWriter(self.plan).write(iterator)

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        plan = self.plan
        table = open_table(plan.path, options=plan.catalog_options)
        commit_batch(table, [m for m in messages if isinstance(m, TaskCommit)], commit_user=plan.commit_user,
                     batch_id=batchId, overwrite=plan.overwrite, one_writer_per=plan.one_writer_per,
                     routed=plan.routed)

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:  # noqa: N803
        table = open_table(self.plan.path, options=self.plan.catalog_options)
        if not landed(table, self.plan.commit_user, batchId):
            discard_written_files(table, [p for m in messages if isinstance(m, TaskCommit) for p in m.written_paths])


def stream_writer(options: Mapping[str, Any], schema: StructType, *, overwrite: bool) -> PaimonStreamWriter:
    """The sink of ``df.writeStream.format("paimon")``; Spark passes ``checkpointLocation`` among the options."""
    checkpoint = next((str(v) for k, v in options.items() if k.lower() == CHECKPOINT_OPTION), None)
    if not checkpoint:
        raise OptionError('writeStream.format("paimon"): set option("checkpointLocation", ...): the exactly-once '
                          "commit user is kept there")
    table_options = {k: v for k, v in options.items() if k.lower() != CHECKPOINT_OPTION}
    plan = plan_write(table_options, schema, overwrite=overwrite)
    user = checkpoint_commit_user(checkpoint, options=catalog_options(options))
    return PaimonStreamWriter(dataclasses.replace(plan, commit_user=user))
