"""The options of ``spark.read.format("paimon")``, parsed once and validated with errors naming the option."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from table_format import OptionError, Table, open_table

TARGET_SPLIT_SIZE = 128 * 1024 * 1024  # Paimon's source.split.target-size
OPEN_FILE_COST = 4 * 1024 * 1024  # Paimon's source.split.open-file-cost


# PySpark 4.3 keeps one read plan per relation (the JVM's PythonDataSourceV2.readInfo): each filter pushdown replaces
# it, and every scan of that relation that pushes nothing (no filter, or none Spark can serialize) reuses the last one.
# A DataFrame (or view) reused with other filters would then read another query's pruned plan: silently wrong rows.
# So pushdown is opt-in per load (option "pushdown" = "true"), for DataFrames used by one query (docs/spark.md).


@dataclass(frozen=True)
class ReadOptions:
    path: str
    columns: tuple[str, ...] | None = None
    snapshot_id: int | None = None
    tag: str | None = None
    incremental: tuple[int, int] | None = None  # (start, end): the changes after start up to end
    target_split_size: int = TARGET_SPLIT_SIZE
    open_file_cost: int = OPEN_FILE_COST
    min_partitions: int = 2
    pushdown: bool = False  # opt-in: see the note above
    catalog_options: dict[str, str] = field(default_factory=dict, repr=False)  # s3.*: may hold secrets
    branch: str | None = None  # option "branch": read that Paimon branch instead of main
    native_files_skipped: bool = False  # read_table's other half: the files Spark's Parquet reader reads are skipped

    def open_table(self) -> Table:
        return open_branch(self.path, self.catalog_options, self.branch)


def open_branch(path: str, options: Mapping[str, str], branch: str | None) -> Table:
    """The table at `path` (``s3.*`` catalog `options`), or its branch `branch` (a path cannot name one)."""
    table = open_table(path, options=options)
    return table if branch is None else table.branch(branch)


def table_path(options: Mapping[str, str]) -> str:
    """``load(table_path)``, or ``option("warehouse", w).load("db.table")`` (the table at ``w/db.db/table``)."""
    path = options.get("path")
    if not path:
        raise OptionError('format("paimon"): give the table directory, e.g. load("/warehouse/db.db/orders"), or '
                          'option("warehouse", ...) with load("db.table")')
    warehouse = options.get("warehouse")
    if warehouse is None:
        return path
    database, dot, table = path.partition(".")
    table, dollar, suffix = table.partition("$")  # "db.t$branch_x": the branch is branch_option's
    if dollar and (not suffix.startswith("branch_") or suffix == "branch_"):
        raise OptionError(f'format("paimon"): after "$" only "branch_<name>" is supported, got {path!r}')
    if not dot or not database or not table or "/" in path:
        raise OptionError(f'format("paimon"): with option "warehouse", load() takes "database.table", got {path!r}')
    return f"{warehouse.rstrip('/')}/{database}.db/{table}"


CATALOG_OPTION_PREFIX = "s3."


def catalog_options(options: Mapping[str, str]) -> dict[str, str]:
    """The ``s3.*`` options (``s3.endpoint``, ``s3.access-key``, ...): catalog options for ``open_table``, carried
    to the executors inside the reader or write plan (unset ones come from each process's AWS variables)."""
    return {k.lower(): v for k, v in options.items() if k.lower().startswith(CATALOG_OPTION_PREFIX)}


def read_options(options: Mapping[str, str]) -> ReadOptions:
    path = table_path(options)
    columns = None
    if options.get("columns"):
        columns = tuple(c.strip() for c in options["columns"].split(",") if c.strip())
        if not columns or len(set(columns)) != len(columns):
            raise OptionError(f"table at {path!r}: option 'columns' must list distinct columns, got "
                              f"{options['columns']!r}")
    snapshot_id = _int(options, "snapshot-id", path)
    tag = options.get("tag") or None
    incremental = None
    if options.get("incremental-between"):
        raw = options["incremental-between"]
        parts = [p.strip() for p in raw.split(",")]
        if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) > int(parts[1]):
            raise OptionError(f"table at {path!r}: option 'incremental-between' must be 'start,end' snapshot ids "
                              f"with start <= end, got {raw!r}")
        incremental = (int(parts[0]), int(parts[1]))
    chosen = [name for name, v in (("snapshot-id", snapshot_id), ("tag", tag), ("incremental-between", incremental))
              if v is not None]
    if len(chosen) > 1:
        raise OptionError(f"table at {path!r}: options {chosen} exclude each other; give one")
    pushdown = (options.get("pushdown") or "false").strip().lower()
    if pushdown not in ("true", "false"):
        raise OptionError(f"table at {path!r}: option 'pushdown' must be 'true' or 'false', got {pushdown!r}")
    return ReadOptions(
        path=path,
        pushdown=pushdown == "true" and incremental is None,
        columns=columns,
        snapshot_id=snapshot_id,
        tag=tag,
        incremental=incremental,
        target_split_size=_int(options, "source.split.target-size", path) or TARGET_SPLIT_SIZE,
        open_file_cost=_int(options, "source.split.open-file-cost", path) or OPEN_FILE_COST,
        min_partitions=_int(options, "min-partitions", path) or max(2, os.cpu_count() or 2),
        catalog_options=catalog_options(options),
        branch=branch_option(options),
        native_files_skipped=(options.get("lakehouse.native-files-skipped") or "").lower() == "true",
    )


def branch_option(options: Mapping[str, str]) -> str | None:
    """Option "branch", or the branch named by ``load("db.t$branch_x")`` with option "warehouse"."""
    path = options.get("path") or ""
    named = path.split("$branch_", 1)[1] if options.get("warehouse") and "$branch_" in path else None
    given = options.get("branch") or None
    if named and given and named != given:
        raise OptionError(f"table {path!r}: option 'branch' {given!r} differs from the branch the name gives")
    return given or named


def _int(options: Mapping[str, str], name: str, path: str) -> int | None:
    raw = options.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"table at {path!r}: option {name!r} must be an integer, got {raw!r}") from None
    if value < 0:
        raise OptionError(f"table at {path!r}: option {name!r} must be >= 0, got {raw!r}")
    return value
