"""The options of ``spark.readStream.format("paimon")``, with Paimon's names, parsed once and validated.

``scan.mode``: ``latest-full`` (the default, also ``default`` without ``scan.snapshot-id``): the latest snapshot
as +I rows, then every later change; ``latest``: only the changes after the latest snapshot; ``from-snapshot``:
the changes from ``scan.snapshot-id`` on (that snapshot included; ``default`` with ``scan.snapshot-id`` means
this); ``from-snapshot-full``: snapshot ``scan.snapshot-id`` as +I rows, then the changes after it.
``consumer-id``: a Paimon consumer (``consumer/consumer-<id>``) advanced when Spark commits a batch; a new query
with a known consumer starts where it stopped (``consumer.ignore-progress`` = true: from ``scan.mode``).
``max-snapshots-per-trigger``: at most that many snapshots per micro-batch. ``read.changelog`` = true (Paimon
Spark's name): the ``_row_kind`` column; without it a change is a row without its kind, as in Paimon Spark, and an
overwrite is refused (see stream_reader.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from jobs.spark.read_options import OPEN_FILE_COST, TARGET_SPLIT_SIZE, catalog_options, table_path
from table_format import OptionError

SCAN_MODES = ("latest-full", "latest", "from-snapshot", "from-snapshot-full")
CHANGELOG_OPTION = "read.changelog"
_UNSUPPORTED_MODES = ("full", "compacted-full", "from-timestamp", "from-file-creation-time", "incremental")


@dataclass(frozen=True)
class StreamOptions:
    path: str
    scan_mode: str = "latest-full"
    snapshot_id: int | None = None  # scan.snapshot-id (from-snapshot, from-snapshot-full)
    consumer_id: str | None = None
    ignore_progress: bool = False  # consumer.ignore-progress
    max_snapshots: int | None = None  # max-snapshots-per-trigger
    changelog: bool = False  # read.changelog: the _row_kind column
    columns: tuple[str, ...] | None = None
    target_split_size: int = TARGET_SPLIT_SIZE
    open_file_cost: int = OPEN_FILE_COST
    min_partitions: int = 2
    catalog_options: dict[str, str] = field(default_factory=dict, repr=False)  # s3.*: may hold secrets


def wants_changelog(options: Mapping[str, str]) -> bool:
    """``read.changelog`` = true: reads (streams and batches) carry a ``_row_kind`` column."""
    raw = (options.get(CHANGELOG_OPTION) or "false").strip().lower()
    if raw not in ("true", "false"):
        raise OptionError(f"format('paimon'): option {CHANGELOG_OPTION!r} must be 'true' or 'false', got {raw!r}")
    return raw == "true"


def stream_options(options: Mapping[str, str]) -> StreamOptions:
    path = table_path(options)
    where = f"stream of table at {path!r}"
    snapshot_id = _int(options, "scan.snapshot-id", where, minimum=1)
    mode = (options.get("scan.mode") or "default").strip().lower()
    if mode == "default":
        mode = "from-snapshot" if snapshot_id is not None else "latest-full"
    if mode in _UNSUPPORTED_MODES:
        raise OptionError(f"{where}: scan.mode {mode!r} is not supported by the Spark stream; use one of "
                          f"{list(SCAN_MODES)}")
    if mode not in SCAN_MODES:
        raise OptionError(f"{where}: unknown scan.mode {mode!r}; use one of {list(SCAN_MODES)}")
    if mode.startswith("from-snapshot") and snapshot_id is None:
        raise OptionError(f"{where}: scan.mode {mode!r} needs option 'scan.snapshot-id'")
    if not mode.startswith("from-snapshot") and snapshot_id is not None:
        raise OptionError(f"{where}: option 'scan.snapshot-id' needs scan.mode 'from-snapshot' or "
                          f"'from-snapshot-full', not {mode!r}")
    for batch_only in ("snapshot-id", "tag", "incremental-between"):
        if options.get(batch_only):
            raise OptionError(f"{where}: option {batch_only!r} is for batch reads; streams use scan.mode and "
                              "scan.snapshot-id")
    ignore = (options.get("consumer.ignore-progress") or "false").strip().lower()
    if ignore not in ("true", "false"):
        raise OptionError(f"{where}: option 'consumer.ignore-progress' must be 'true' or 'false', got {ignore!r}")
    columns = None
    if options.get("columns"):
        columns = tuple(c.strip() for c in options["columns"].split(",") if c.strip())
    max_snapshots = _int(options, "max-snapshots-per-trigger", where, minimum=1)
    return StreamOptions(
        path=path, scan_mode=mode, snapshot_id=snapshot_id, consumer_id=options.get("consumer-id") or None,
        ignore_progress=ignore == "true", max_snapshots=max_snapshots, changelog=wants_changelog(options),
        columns=columns,
        target_split_size=_int(options, "source.split.target-size", where, minimum=1) or TARGET_SPLIT_SIZE,
        open_file_cost=_int(options, "source.split.open-file-cost", where, minimum=1) or OPEN_FILE_COST,
        min_partitions=_int(options, "min-partitions", where, minimum=1) or max(2, os.cpu_count() or 2),
        catalog_options=catalog_options(options),
    )


def _int(options: Mapping[str, str], name: str, where: str, *, minimum: int) -> int | None:
    raw = options.get(name)
    if raw is None or str(raw).strip() == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"{where}: option {name!r} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise OptionError(f"{where}: option {name!r} must be >= {minimum}, got {raw!r}")
    return value
