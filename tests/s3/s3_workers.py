"""Processes of the S3 concurrency tests (importable by `spawn` children): writers that commit through S3 and
report the snapshot ids they were told they committed."""

from __future__ import annotations

import os
import random
import time
import traceback
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from table_format import (
    CommitConflictError,
    CommitFailedError,
    CommitOutcomeUnknownError,
    FileSystemCatalog,
    write_table,
)
from table_format.io.lock import FileCommitLock

SCHEMA = pa.schema([("id", pa.int64(), False), ("w", pa.int64()), ("v", pa.string())])


def batch(worker: int, commit: int, per_commit: int) -> pa.Table:
    base = 1_000 + worker * 100_000 + commit * 1_000
    ids = list(range(base, base + per_commit))
    return pa.table({"id": ids, "w": [worker] * len(ids), "v": [f"w{worker}c{commit}"] * len(ids)}, schema=SCHEMA)


def writer(warehouse: str, identifiers: list[str], worker: int, commits: int, per_commit: int, barrier: Any,
           queue: Any, options: Mapping[str, str] | None = None, lock_dir: str | None = None) -> None:
    """For each table in turn (all processes together): commit `commits` batches of fresh ids, retrying conflicts;
    report ("ok", worker, {identifier: ids, ...}) or ("error", worker, traceback)."""
    try:
        lock = FileCommitLock(lock_dir) if lock_dir else None
        catalog = FileSystemCatalog(warehouse, options=options, commit_lock=lock)
        report = {}
        for identifier in identifiers:
            barrier.wait(timeout=120)
            report[identifier] = _write(catalog.load_table(identifier), worker, commits, per_commit)
        queue.put(("ok", worker, report))
    except BaseException:
        queue.put(("error", worker, traceback.format_exc()))


def _write(table: Any, worker: int, commits: int, per_commit: int) -> dict[str, Any]:
    ids, retries = [], 0
    for i in range(commits):
        data = batch(worker, i, per_commit)
        for attempt in range(100):
            try:
                ids.append(write_table(table, data))
                break
            except CommitOutcomeUnknownError:
                raise
            except (CommitConflictError, CommitFailedError):
                retries += 1
                time.sleep(random.uniform(0, 0.02 * min(attempt + 1, 10)))
        else:
            raise AssertionError("no progress after 100 attempts")
    return {"snapshot_ids": ids, "retries": retries, "pid": os.getpid()}
