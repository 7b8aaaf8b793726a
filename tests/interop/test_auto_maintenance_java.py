"""The maintenance after each commit, against real Java Paimon 0.9 (whose TableCommitImpl runs its own).

The same history is written by Java (one oracle ``write`` per batch commit, each a fresh BatchTableCommit, as a
batch job) and by us, with the same table options; afterwards both tables hold the same snapshot ids (and commit
kinds), tags, consumers and partitions, we read Java's table as Java does, and Java reads ours, at every
remaining snapshot and tag, as we do.

Time-based cases use gaps (sleeps) much longer than the retention they test, and checks that hold for either
reading of ``snapshot.time-retained`` (0.9 looks at the snapshot's own time, we at its successor's, as later Paimon
does): the snapshot at the time boundary is also protected by ``snapshot.num-retained.min``. Tag names follow from
the snapshots' commit times by the period rules (``expected_auto_tags``), so crossing midnight does not matter.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import time
from typing import Any

import pyarrow as pa
import pytest
from oracle_values import oracle_lines, ours_as_oracle

from table_format import FileSystemCatalog, Table, write_table
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore

DB = "db"
FIELDS = [("id", "BIGINT"), ("dt", "STRING"), ("v", "STRING")]
ARROW = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])

Batch = list[tuple[int, str]]  # (id, dt) rows of one batch commit


@pytest.fixture
def oracle(oracle_each: Any) -> Any:
    """Every test of this module runs against Java Paimon 0.9 and 2.0."""
    return oracle_each


def batch(ids: range | list[int], dt_: str = "2999-01-01") -> Batch:
    return [(i, dt_) for i in ids]


def table_dir(warehouse: str, name: str) -> str:
    return os.path.join(warehouse, f"{DB}.db", name)


def java_write(oracle: Any, warehouse: str, name: str, rows: Batch, *, options: dict[str, str],
               pk: bool = False, partitioned: bool = False, first: bool = False,
               dynamic: dict[str, str] | None = None, compact: bool = False) -> None:
    """One Java batch commit (a fresh BatchWriteBuilder/BatchTableCommit, so its own post-commit maintenance)."""
    spec: dict[str, Any] = {
        "warehouse": warehouse, "database": DB, "table": name, "if_exists": "error" if first else "append",
        "schema": {
            "fields": [{"name": n, "type": t} for n, t in FIELDS],
            "primary_keys": ["id", "dt"] if pk else [],
            "partition_keys": ["dt"] if partitioned else [],
            "options": options,
        },
        "batches": [{"rows": [["+I", i, d, f"v{i}"] for i, d in rows]}] if rows else [],
        "compact": compact,
    }
    if compact:
        spec["compact_options"] = {"write-only": "false"}
    if dynamic:
        spec["dynamic_options"] = dynamic
    oracle.write_spec(spec)


def our_table(warehouse: str, name: str, *, options: dict[str, str], pk: bool = False,
              partitioned: bool = False) -> Table:
    cat = FileSystemCatalog(warehouse)
    cat.create_database(DB, exist_ok=True)
    return cat.create_table(f"{DB}.{name}", ARROW, primary_keys=("id", "dt") if pk else (),
                            partition_keys=("dt",) if partitioned else (), options=options)


def our_write(table: Table, rows: Batch) -> int | None:
    data = pa.table({"id": [i for i, _ in rows], "dt": [d for _, d in rows], "v": [f"v{i}" for i, _ in rows]},
                    schema=ARROW)
    return write_table(table, data)


def load(warehouse: str, name: str) -> Table:
    return FileSystemCatalog(warehouse).load_table(f"{DB}.{name}")


def snapshots_on_disk(warehouse: str, name: str) -> dict[int, Snapshot]:
    d = os.path.join(table_dir(warehouse, name), "snapshot")
    out = {}
    for f in os.listdir(d):
        if f.startswith("snapshot-"):
            with open(os.path.join(d, f), "rb") as fh:
                snap = Snapshot.from_json(fh.read())
            out[snap.id] = snap
    return dict(sorted(out.items()))


def tags_on_disk(warehouse: str, name: str) -> dict[str, dict[str, Any]]:
    d = os.path.join(table_dir(warehouse, name), "tag")
    if not os.path.isdir(d):
        return {}
    out = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("tag-"):
            with open(os.path.join(d, f)) as fh:
                out[f[len("tag-"):]] = json.load(fh)
    return out


def shape(warehouse: str, name: str) -> dict[str, Any]:
    """What the maintenance decides: snapshot ids with their kinds, tags with their snapshots, consumers."""
    consumer_dir = os.path.join(table_dir(warehouse, name), "consumer")
    return {
        "snapshots": {i: s.commit_kind.value for i, s in snapshots_on_disk(warehouse, name).items()},
        "tags": {n: t["id"] for n, t in tags_on_disk(warehouse, name).items()},
        "consumers": sorted(os.listdir(consumer_dir)) if os.path.isdir(consumer_dir) else [],
    }


def ours_lines(table: Table, **scan: Any) -> list[str]:
    return ours_as_oracle(table.scan(**scan).to_arrow(), list(table.schema.fields))


def java_lines(oracle: Any, warehouse: str, name: str, *flags: str) -> list[str]:
    return oracle_lines(oracle.read(warehouse, DB, name, *flags))


def assert_read_alike(oracle: Any, warehouse: str, name: str) -> None:
    """Java and we read the table alike: latest, every remaining snapshot, every tag."""
    table = load(warehouse, name)
    assert java_lines(oracle, warehouse, name) == ours_lines(table)
    for sid in snapshots_on_disk(warehouse, name):
        assert java_lines(oracle, warehouse, name, "--snapshot", str(sid)) == ours_lines(table, snapshot_id=sid), sid
    for tag in tags_on_disk(warehouse, name):
        assert java_lines(oracle, warehouse, name, "--option", f"scan.tag-name={tag}") == ours_lines(table, tag=tag)


def run_both(oracle: Any, warehouse: str, batches: list[Batch], options: dict[str, str], *, pk: bool = False,
             partitioned: bool = False, pause: float = 0.0) -> tuple[Table, dict[str, Any], dict[str, Any]]:
    """The history by Java (table "java") and by us (table "ours"); returns our table and both shapes."""
    ours = our_table(warehouse, "ours", options=options, pk=pk, partitioned=partitioned)
    for i, rows in enumerate(batches):
        java_write(oracle, warehouse, "java", rows, options=options, pk=pk, partitioned=partitioned, first=i == 0)
        our_write(ours, rows)
        time.sleep(pause)
    for name in ("java", "ours"):
        assert_read_alike(oracle, warehouse, name)
    return ours, shape(warehouse, "java"), shape(warehouse, "ours")


# ---- snapshots ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_num_retained(oracle: Any, warehouse: str, pk: bool) -> None:
    options = {"bucket": "2" if pk else "-1", "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"}
    batches = [batch(range(i * 3, i * 3 + 3)) for i in range(7)]
    _, java, ours = run_both(oracle, warehouse, batches, options, pk=pk)
    assert java == ours
    assert len(ours["snapshots"]) == 3


def test_defaults_expire_nothing_young(oracle: Any, warehouse: str) -> None:
    batches = [batch([i]) for i in range(12)]
    _, java, ours = run_both(oracle, warehouse, batches, {"bucket": "-1"})
    assert java == ours
    assert list(ours["snapshots"]) == list(range(1, 13))


def test_time_retained(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "snapshot.num-retained.min": "2", "snapshot.time-retained": "1 ms"}
    batches = [batch([i]) for i in range(5)]
    _, java, ours = run_both(oracle, warehouse, batches, options, pause=0.05)
    assert java == ours
    assert list(ours["snapshots"]) == [4, 5]


def test_time_retained_protects_young_snapshots(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "snapshot.num-retained.min": "1", "snapshot.time-retained": "1 h"}
    _, java, ours = run_both(oracle, warehouse, [batch([i]) for i in range(4)], options)
    assert java == ours
    assert list(ours["snapshots"]) == [1, 2, 3, 4]


def test_expire_limit_and_write_only_with_dedicated_compaction(oracle: Any, warehouse: str) -> None:
    """write-only commits expire nothing; the compaction (run with write-only=false) expires at most
    snapshot.expire.limit snapshots."""
    options = {"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1",
               "snapshot.time-retained": "1 ms", "snapshot.expire.limit": "2"}
    ours = our_table(warehouse, "ours", options=options, pk=True)
    for i in range(6):
        java_write(oracle, warehouse, "java", batch([i, 100]), options=options, pk=True, first=i == 0)
        our_write(ours, batch([i, 100]))
    assert shape(warehouse, "java") == shape(warehouse, "ours")
    assert list(shape(warehouse, "ours")["snapshots"]) == [1, 2, 3, 4, 5, 6]
    time.sleep(0.05)
    java_write(oracle, warehouse, "java", [], options=options, pk=True, compact=True)
    assert ours.maintenance.compact(full=True).snapshot_id == 7
    java, mine = shape(warehouse, "java"), shape(warehouse, "ours")
    assert java == mine
    assert mine["snapshots"] == {3: "APPEND", 4: "APPEND", 5: "APPEND", 6: "APPEND", 7: "COMPACT"}
    for name in ("java", "ours"):
        assert_read_alike(oracle, warehouse, name)


# ---- consumers ----------------------------------------------------------------------------------------------------


def test_consumer_expiration(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    ours = our_table(warehouse, "ours", options=options)
    java_write(oracle, warehouse, "java", batch([1]), options=options, first=True)
    our_write(ours, batch([1]))
    for name in ("java", "ours"):
        d = os.path.join(table_dir(warehouse, name), "consumer")
        os.makedirs(d, exist_ok=True)
        for consumer in ("old", "young"):
            with open(os.path.join(d, f"consumer-{consumer}"), "w") as f:
                json.dump({"nextSnapshot": 1}, f)
        old = time.time() - 7200
        os.utime(os.path.join(d, "consumer-old"), (old, old))
    # the consumers protect snapshot 1
    java_write(oracle, warehouse, "java", batch([2]), options=options)
    our_write(ours, batch([2]))
    assert shape(warehouse, "java") == shape(warehouse, "ours")
    assert list(shape(warehouse, "ours")["snapshots"]) == [1, 2]
    # consumer.expiration-time (a dynamic option of Java's write; a table option here) removes the old one
    with open(os.path.join(table_dir(warehouse, "ours"), "consumer", "consumer-young"), "w") as f:
        json.dump({"nextSnapshot": 3}, f)
    with open(os.path.join(table_dir(warehouse, "java"), "consumer", "consumer-young"), "w") as f:
        json.dump({"nextSnapshot": 3}, f)
    java_write(oracle, warehouse, "java", batch([3]), options=options, dynamic={"consumer.expiration-time": "1 h"})
    ours = _with_options(ours, {"consumer.expiration-time": "1 h"})
    our_write(ours, batch([3]))
    java, mine = shape(warehouse, "java"), shape(warehouse, "ours")
    assert java == mine
    assert mine["consumers"] == ["consumer-young"] and list(mine["snapshots"]) == [3]
    for name in ("java", "ours"):
        assert_read_alike(oracle, warehouse, name)


def _with_options(table: Table, extra: dict[str, str]) -> Table:
    """The table with dynamic options (Java's table.copy(options)); the schema on disk is unchanged."""
    store = table.store
    schema = dataclasses.replace(store.schema, options={**store.schema.options, **extra})
    return Table(FileStore(identifier=store.identifier, file_io=store.file_io, paths=store.paths, schema=schema))


# ---- partitions ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "dropped"),
    [
        ({"partition.expiration-check-interval": "0"}, True),
        ({"end-input.check-partition-expire": "true"}, True),
        ({}, False),  # the check interval (1 h) starts with each batch commit: a batch commit never checks
        ({"partition.expiration-check-interval": "0", "write-only": "true"}, False),
    ],
    ids=["interval-0", "end-input", "default-interval", "write-only"],
)
def test_partition_expiration(oracle: Any, warehouse: str, extra: dict[str, str], dropped: bool) -> None:
    options = {"bucket": "-1", "partition.expiration-time": "1 d", **extra}
    batches = [batch([1, 2], "2999-01-01") + batch([3], "2020-01-01"), batch([4], "2999-01-02"),
               batch([5], "2021-05-06 07:08:09")]
    ours, java, mine = run_both(oracle, warehouse, batches, options, partitioned=True)
    assert java == mine
    table = load(warehouse, "java")
    dts = sorted(set(table.scan().to_arrow().column("dt").to_pylist()))
    if dropped:
        assert mine["snapshots"] == {1: "APPEND", 2: "OVERWRITE", 3: "APPEND", 4: "APPEND", 5: "OVERWRITE"}
        assert dts == ["2999-01-01", "2999-01-02"]
    else:
        assert list(mine["snapshots"]) == [1, 2, 3]
        assert dts == ["2020-01-01", "2021-05-06 07:08:09", "2999-01-01", "2999-01-02"]
    if dropped:  # the drop is committed by the same committer as the commit before it
        assert ours.snapshots()[-1].commit_user == ours.snapshots()[-2].commit_user


def test_partition_expiration_with_formatter(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "partition.expiration-time": "1 d", "partition.expiration-check-interval": "0",
               "partition.timestamp-formatter": "yyyyMMdd"}
    batches = [batch([1], "20200101") + batch([2], "29990101") + batch([3], "not-a-date")]
    _, java, mine = run_both(oracle, warehouse, batches, options, partitioned=True)
    assert java == mine
    assert sorted(load(warehouse, "ours").scan().to_arrow().column("id").to_pylist()) == [2, 3]


# ---- tags -----------------------------------------------------------------------------------------------------------


def _local(millis: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(millis / 1000)


def expected_auto_tags(snapshots: dict[int, Snapshot], start: dict[str, int]) -> dict[str, int]:
    """Daily process-time tags by the rules of TagAutoCreation (no delay): the first snapshot after the last auto
    tag whose day is at least two days after that tag's day gets the tag of the day before its own; with no tag
    yet, the first snapshot gets it."""
    tags = dict(start)
    last_day = max((dt.date.fromisoformat(n) for n in tags), default=None)
    after = max(tags.values(), default=0)
    for sid, snap in snapshots.items():
        if sid <= after:
            continue
        day = _local(snap.time_millis).date()
        if last_day is None or day >= last_day + dt.timedelta(days=2):
            last_day = day - dt.timedelta(days=1)
            tags.setdefault(last_day.isoformat(), sid)
    return tags


def test_process_time_tags(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "tag.automatic-creation": "process-time", "tag.default-time-retained": "1 d"}
    _, java, mine = run_both(oracle, warehouse, [batch([i]) for i in range(3)], options)
    for name, got in (("java", java), ("ours", mine)):
        assert got["tags"] == expected_auto_tags(snapshots_on_disk(warehouse, name), {}), name
    assert java == mine
    # both tag files end with tagCreateTime and tagTimeRetained (from tag.default-time-retained)
    (java_tag,) = tags_on_disk(warehouse, "java").values()
    (our_tag,) = tags_on_disk(warehouse, "ours").values()
    assert list(java_tag)[-2:] == list(our_tag)[-2:] == ["tagCreateTime", "tagTimeRetained"]
    assert java_tag["tagTimeRetained"] == our_tag["tagTimeRetained"] == 86400.0


def test_auto_tags_continue_and_are_pruned(oracle: Any, warehouse: str) -> None:
    """Existing auto-named tags set where creation continues; tag.num-retained-max deletes the oldest auto tags
    (not other tags) and the files only they kept alive."""
    base = {"bucket": "-1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    ours = our_table(warehouse, "ours", options=base)
    for name in ("java", "ours"):
        for i in range(3):
            if name == "java":
                java_write(oracle, warehouse, "java", batch([i]), options=base, first=i == 0)
            else:
                our_write(ours, batch([i]))
            tag = {0: "2020-01-01", 1: "2020-01-02", 2: "manual"}[i]
            load(warehouse, name).create_tag(tag)
    assert shape(warehouse, "java") == shape(warehouse, "ours")
    extra = {"tag.automatic-creation": "process-time", "tag.num-retained-max": "2"}
    java_write(oracle, warehouse, "java", batch([3]), options=base, dynamic=extra)
    our_write(_with_options(ours, extra), batch([3]))
    java, mine = shape(warehouse, "java"), shape(warehouse, "ours")
    today = _local(snapshots_on_disk(warehouse, "ours")[4].time_millis).date()
    auto = (today - dt.timedelta(days=1)).isoformat()
    if oracle.paimon_version != "0.9":
        # Paimon 2.0 creates auto tags before it expires snapshots (TableCommitImpl.maintain), so the new tag takes
        # snapshot 3, still there; 0.9 (and we) expire first, so it takes snapshot 4
        assert java["tags"][auto] == 3
        java["tags"][auto] = 4
    assert java == mine
    assert mine["tags"] == {"2020-01-02": 2, "manual": 3, auto: 4}
    assert list(mine["snapshots"]) == [4]
    for name in ("java", "ours"):
        assert_read_alike(oracle, warehouse, name)


def test_tag_time_expiration(oracle: Any, warehouse: str) -> None:
    options = {"bucket": "-1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    ours = our_table(warehouse, "ours", options=options)
    java_write(oracle, warehouse, "java", batch([1]), options=options, first=True)
    our_write(ours, batch([1]))
    for name in ("java", "ours"):
        t = load(warehouse, name)
        t.create_tag("short", time_retained=dt.timedelta(milliseconds=1))
        t.create_tag("long", time_retained=dt.timedelta(hours=1))
        t.create_tag("plain")
    time.sleep(0.05)
    java_write(oracle, warehouse, "java", batch([2]), options=options)
    our_write(ours, batch([2]))
    java, mine = shape(warehouse, "java"), shape(warehouse, "ours")
    assert java == mine
    assert mine["tags"] == {"long": 1, "plain": 1} and list(mine["snapshots"]) == [2]
    for name in ("java", "ours"):
        assert_read_alike(oracle, warehouse, name)


def test_batch_and_watermark_modes(oracle: Any, warehouse: str) -> None:
    """Java's TableCommitImpl creates no tag in batch mode (the Flink batch sink does: we do it like that sink) and
    none in watermark mode for batch commits (no watermark); Java reads our batch-write tag."""
    for mode in ("batch", "watermark"):
        options = {"bucket": "-1", "tag.automatic-creation": mode}
        ours = our_table(warehouse, f"ours_{mode}", options=options)
        java_write(oracle, warehouse, f"java_{mode}", batch([1]), options=options, first=True)
        our_write(ours, batch([1]))
        assert shape(warehouse, f"java_{mode}")["tags"] == {}
        day = _local(ours.latest_snapshot().time_millis).date().isoformat()  # type: ignore[union-attr]
        assert shape(warehouse, f"ours_{mode}")["tags"] == ({f"batch-write-{day}": 1} if mode == "batch" else {})
        assert_read_alike(oracle, warehouse, f"ours_{mode}")


def test_mixed_history_each_side_expires_the_others_snapshots(oracle: Any, warehouse: str) -> None:
    """One table, commits alternating between us and Java: each side's post-commit maintenance expires snapshots
    the other wrote and keeps the auto tag our first commit made; both read every state alike."""
    options = {"bucket": "-1", "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2",
               "tag.automatic-creation": "process-time"}
    our_write(our_table(warehouse, "mixed", options=options), batch([0]))
    first = snapshots_on_disk(warehouse, "mixed")
    for i in range(1, 6):
        if i % 2:
            java_write(oracle, warehouse, "mixed", batch([i]), options=options)
        else:
            our_write(load(warehouse, "mixed"), batch([i]))
        snapshots = snapshots_on_disk(warehouse, "mixed")
        assert list(snapshots) == [i, i + 1]
        assert shape(warehouse, "mixed")["tags"] == expected_auto_tags({**first, **snapshots}, {})
        assert_read_alike(oracle, warehouse, "mixed")
    assert [json.loads(line)["id"] for line in ours_lines(load(warehouse, "mixed"))] == list(range(6))
