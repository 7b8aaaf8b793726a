"""Why `lakehouse compact` found nothing to compact, in the terms of the table's own options.

Read from the compaction plan (one task per (partition, bucket) with its live files), as table_format's compaction
decides: a primary-key bucket is compacted from ``num-sorted-run.compaction-trigger`` sorted runs on (universal
compaction, as Paimon), an append bucket from ``compaction.min.file-num`` small files; ``--full`` rewrites every
bucket that is not one sorted run on the highest level (append: one file) already.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lakehouse_cli.health import SMALL_FILE_RATIO
from table_format import CompactTask, CoreOptions, Table

FULL_HINT = "--full compacts anyway"


def sorted_runs(task: CompactTask) -> int:
    """Each level-0 file is one sorted run, each other non-empty level one more."""
    levels = [f.level for f in task.files]
    return levels.count(0) + len({level for level in levels if level > 0})


def nothing_to_compact(table: Table, *, full: bool, partitions: Sequence[Mapping[str, Any]] | None) -> str:
    """One sentence: what the fullest bucket holds against the trigger that would have compacted it."""
    tasks = table.maintenance.plan_compaction(full=full, partitions=partitions)
    where = " in the given partition(s)" if partitions else ""
    if not tasks:
        return f"no data files{where}: nothing to compact"
    options = CoreOptions.parse(table.options, has_primary_key=bool(table.primary_keys))
    buckets = f"{len(tasks)} bucket(s){where}"
    if table.primary_keys:
        runs = max(sorted_runs(t) for t in tasks)
        if full:
            return f"each of {buckets} is one sorted run on the highest level already: nothing to compact"
        trigger = options.num_sorted_run_compaction_trigger
        state = (f"{runs} sorted run(s) in the fullest of {buckets}, compaction trigger {trigger} "
                 "(num-sorted-run.compaction-trigger)")
        if runs >= trigger:  # universal compaction found no runs whose sizes call for a merge
            state += ("; their sizes call for no merge (compaction.size-ratio, "
                      "compaction.max-size-amplification-percent)")
        return f"{state}: nothing to compact; {FULL_HINT}"
    if full:
        return f"each of {buckets} holds at most one file: nothing to compact"
    threshold = int(options.target_file_size * SMALL_FILE_RATIO)
    small = max(sum(f.file_size < threshold for f in t.files) for t in tasks)
    min_num = int(table.options.get("compaction.min.file-num", "5"))
    return (f"{small} small file(s) in the fullest of {buckets}, compaction.min.file-num {min_num} (files below "
            f"0.7 x target-file-size): nothing to compact; {FULL_HINT}")
