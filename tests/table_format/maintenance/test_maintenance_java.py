"""Maintenance that Java Paimon 0.9 accepts, and that does what Paimon 0.9's own maintenance code does.

* Java-written tables (several batches, compactions inside batches and a final full compaction; PK with and without
  deletion vectors, dynamic bucket with HASH index files, lookup and input changelogs, append tables): we tag,
  expire, remove orphans, delete tags and roll back; after each step Java reads the latest snapshot, every
  retained snapshot and every tag exactly as expected, and no referenced file is missing.
* Differential: the same operations run by Paimon 0.9 itself (``java_maintenance``: ``ExpireSnapshotsImpl``,
  ``TagManager``, ``RollbackHelper``, ``OrphanFilesClean``) on a copy of the table leave exactly the same files,
  except where 0.9 is known to be wrong (asserted, so that a change of either side shows up):
  - rollback: 0.9 leaves files of the expired snapshots between a restored tag and the old earliest snapshot
    (its own orphan clean deletes them later), we delete them at once;
  - rollback after a compaction that upgraded a file: 0.9 deletes the file the target still reads;
  - orphan clean: 0.9 treats a tag whose changelog manifest list has expired as referencing nothing and deletes
    its data (the table becomes unreadable); 0.9 also keeps empty bucket directories, which we remove.
* Tables written by us: Java's expiration of them deletes the same files as ours.

The first part and the expiration of our tables also run against Java 2.0 (``oracle_each``, ``java_maintenance2``);
the other differential parts pin 0.9's known faults (and 0.9's OrphanFilesClean), so they run against 0.9 only.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from interop_cases import (
    DB,
    SCENARIO_COLUMNS,
    Layout,
    Step,
    data_fields,
    expected_after_each_step,
    history,
    java_lines,
    layout_spec,
    load,
    our_lines,
    scenario_row,
    write_steps_ours,
)
from maintenance_helpers import (
    assert_no_orphans,
    assert_nothing_missing,
    directories,
    references,
    snapshot_ids,
    tree,
    tree_with_content,
)
from oracle_values import oracle_lines, ours_as_oracle

from table_format import FileSystemCatalog, Table

pytestmark = pytest.mark.interop

NOW = dt.timedelta(0)
r = scenario_row


@dataclass(frozen=True)
class Scenario:
    name: str
    layout: Layout
    options: dict[str, str] = field(default_factory=dict)

    @property
    def changelog(self) -> bool:
        return "changelog-producer" in self.options


SCENARIOS = [
    Scenario("pk-dt", Layout("pk", ("dt",), "parquet")),
    Scenario("pk-dv", Layout("pk", (), "parquet"), {"deletion-vectors.enabled": "true"}),
    Scenario("dynamic-bucket", Layout("pk", ("dt",), "orc"), {"bucket": "-1", "dynamic-bucket.target-row-num": "3"}),
    Scenario("lookup-changelog", Layout("pk", ("p",), "parquet"), {"changelog-producer": "lookup"}),
    Scenario("input-changelog", Layout("pk-rowkind", (), "parquet"), {"changelog-producer": "input"}),
    Scenario("append-unaware", Layout("append-unaware", ("dt",), "parquet")),
    Scenario("append-bucket", Layout("append-bucket", ("p",), "avro")),
]


def steps_of(s: Scenario) -> list[Step]:
    steps = history(s.layout)
    if s.layout.row_kinds:
        steps += [Step([("+U", r(i, 7)) for i in range(20, 30)]), Step([("-D", r(i, 7)) for i in range(20, 24)])]
    else:
        steps += [Step([("+I", r(i, 7)) for i in range(20, 30)]), Step([("+I", r(i, 8)) for i in range(25, 35)])]
    return steps


def java_write(oracle: Any, warehouse: str, name: str, s: Scenario) -> tuple[dict[int, list[str]], int]:
    """Java writes the scenario; returns the expected lines at each step's snapshot and the latest id."""
    steps = steps_of(s)
    spec = layout_spec(warehouse, name, s.layout, steps, compact=True)
    spec["schema"]["options"].update(s.options)
    if s.layout.has_pk:
        for i in (1, 4):
            spec["batches"][i]["compact"] = True  # full compactions inside some commits
    ids = oracle.write_spec(spec)["snapshot_after_each_step"]
    expected = expected_after_each_step(s.layout, steps)
    expected.append(expected[-1])  # the final full compaction
    states = dict(zip(ids, expected, strict=True))
    latest = max(ids)
    return states, latest


def java_tag_lines(oracle: Any, warehouse: str, table: str, tag: str) -> list[str]:
    return oracle_lines(oracle.read(warehouse, DB, table, "--option", f"scan.tag-name={tag}"))


def our_tag_lines(table: Table, tag: str) -> list[str]:
    return ours_as_oracle(table.scan(tag=tag).to_arrow(), list(table.schema.fields))


def assert_readable(oracle: Any, warehouse: str, name: str, states: dict[int, list[str]],
                    tags: dict[str, list[str]]) -> None:
    """Java and we read every retained snapshot alike (and as expected where known), every tag as expected."""
    table = load(warehouse, name)
    ids = snapshot_ids(table)
    assert ids == list(range(ids[0], ids[-1] + 1))
    for sid in ids:
        java = java_lines(oracle, warehouse, name, sid)
        assert our_lines(table, sid) == java, f"snapshot {sid}"
        if sid in states:
            assert java == states[sid], f"snapshot {sid}"
    latest = java_lines(oracle, warehouse, name)
    assert latest == our_lines(table)
    if ids[-1] in states:
        assert latest == states[ids[-1]]
    assert table.tags() == {n: table.tags()[n] for n in tags}
    for tag, lines in tags.items():
        assert java_tag_lines(oracle, warehouse, name, tag) == lines, f"tag {tag}"
        assert our_tag_lines(table, tag) == lines, f"tag {tag}"
    assert_nothing_missing(table)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_java_table_maintained_here_read_by_java(oracle_each: Any, warehouse: str, scenario: Scenario) -> None:
    """Against Java 0.9 and 2.0: Java writes with its defaults, we tag, expire, clean orphans, delete a tag and roll
    back, Java reads every step; then both write on top of the restored snapshot."""
    oracle = oracle_each
    states, latest = java_write(oracle, warehouse, "t", scenario)
    table = load(warehouse, "t")
    step_ids = sorted(states)
    tags: dict[str, list[str]] = {}
    # "early" carries tagCreateTime/tagTimeRetained (a Tag), "middle" is a plain snapshot JSON
    table.create_tag("early", snapshot_id=step_ids[1], time_retained=dt.timedelta(days=3, milliseconds=5))
    table.create_tag("middle", snapshot_id=step_ids[3])
    tags["early"], tags["middle"] = states[step_ids[1]], states[step_ids[3]]
    assert_readable(oracle, warehouse, "t", states, tags)

    # dry run: nothing changes
    before = tree_with_content(table.path)
    dry = table.maintenance.expire_snapshots(retain_min=2, older_than=NOW)
    assert tree_with_content(table.path) == before and dry.expired_snapshots

    for retain in (latest - 2, latest - 5, 2, 1):
        table.maintenance.expire_snapshots(retain_min=max(retain, 1), older_than=NOW, dry_run=False)
        assert_readable(oracle, warehouse, "t", states, tags)
    assert snapshot_ids(table) == [latest]

    time.sleep(0.01)
    table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert_no_orphans(table)
    assert_readable(oracle, warehouse, "t", states, tags)

    table.delete_tag("middle")
    del tags["middle"]
    assert_readable(oracle, warehouse, "t", states, tags)

    # back to the expired "early" snapshot, then both sides write on top of it
    table.rollback_to(tag="early")
    early = step_ids[1]
    assert snapshot_ids(table) == [early]
    assert_readable(oracle, warehouse, "t", states, tags)
    time.sleep(0.01)
    table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert_no_orphans(table)

    extra = Step([("+I", r(i, 9)) for i in (1, 40, 41)])
    ours_id = write_steps_ours(table, SCENARIO_COLUMNS, [extra])[0]
    assert ours_id >= early + 1  # (+1 more when the writer compacts, as with deletion vectors)
    spec = layout_spec(warehouse, "t", scenario.layout, [Step([("+I", r(i, 10)) for i in (2, 42)])], compact=False)
    spec["schema"]["options"].update(scenario.options)
    spec["if_exists"] = "append"
    java_id = oracle.write_spec(spec)["snapshot_after_each_step"][-1]
    model_rows = _model_after(scenario, steps_of(scenario)[:2], [extra, Step([("+I", r(i, 10)) for i in (2, 42)])])
    assert java_lines(oracle, warehouse, "t", java_id) == model_rows
    assert our_lines(load(warehouse, "t")) == model_rows
    assert_nothing_missing(load(warehouse, "t"))


def _model_after(s: Scenario, first: list[Step], more: list[Step]) -> list[str]:
    expected = expected_after_each_step(s.layout, [*first, *more])
    return expected[-1]


# ================================================================================================ differential


def _copy(warehouse: str, src: str, dst: str) -> Table:
    shutil.copytree(f"{warehouse}/{DB}.db/{src}", f"{warehouse}/{DB}.db/{dst}")
    return load(warehouse, dst)


_NEWER_SNAPSHOT_KEYS = ("baseManifestListSize", "deltaManifestListSize", "changelogManifestListSize")


def _tag_json(data: bytes) -> dict[str, Any]:
    """A tag file without the snapshot keys Paimon 0.9 does not know (it drops them when it writes a tag; we keep
    the snapshot's JSON as it is) and without null fields (Paimon 2.0 leaves out `"changelogManifestList": null`)."""
    obj = json.loads(data)
    return {k: v for k, v in obj.items() if k not in _NEWER_SNAPSHOT_KEYS and v is not None}


def _assert_same_files(java: Table, ours: Table, what: str) -> None:
    a, b = tree_with_content(java.path), tree_with_content(ours.path)
    assert sorted(set(a) - set(b)) == [] and sorted(set(b) - set(a)) == [], what
    differing = [k for k in a if a[k] != b[k] and not (k.startswith("tag/") and _tag_json(a[k]) == _tag_json(b[k]))]
    assert differing == [], what


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_same_files_as_paimon_0_9(oracle: Any, java_maintenance: Any, warehouse: str, scenario: Scenario) -> None:
    states, latest = java_write(oracle, warehouse, "src", scenario)
    java, ours = _copy(warehouse, "src", "java"), _copy(warehouse, "src", "ours")
    jm = java_maintenance
    step_ids = sorted(states)

    # tags: identical files (a tag without retention is the snapshot's JSON)
    for tag, sid in (("t1", step_ids[1]), ("t3", step_ids[3]), ("t3b", step_ids[3])):
        jm.call("tag-create", warehouse, DB, "java", tag, sid, "-")
        ours.create_tag(tag, snapshot_id=sid)
    _assert_same_files(java, ours, "tags")

    # expiration in several rounds, with tags in and around the expired ranges
    for retain in (latest - 2, latest - 4, 2, 1):
        now = int(time.time() * 1000) + 1
        jm.call("expire", warehouse, DB, "java", max(retain, 1), 2147483647, now, 50)
        ours.maintenance.expire_snapshots(retain_min=max(retain, 1), older_than=NOW, max_deletes=50, dry_run=False)
        _assert_same_files(java, ours, f"expire retain_min={retain}")

    # tag deletion: shared snapshot first (nothing goes), then the last tag of an expired snapshot
    for tag in ("t3", "t3b"):
        jm.call("tag-delete", warehouse, DB, "java", tag)
        ours.delete_tag(tag)
        _assert_same_files(java, ours, f"delete tag {tag}")

    # rollback to the expired t1: we delete what Java leaves for its orphan clean
    jm.call("rollback-tag", warehouse, DB, "java", "t1")
    ours.rollback_to(tag="t1")
    java_files, our_files = tree(java.path), tree(ours.path)
    assert our_files - java_files == set()
    leaked = java_files - our_files - {f"snapshot/snapshot-{step_ids[1]}"}
    assert not leaked & references(java).named, "we deleted a file Java's table still references"
    assert java_lines(oracle, warehouse, "java") == java_lines(oracle, warehouse, "ours") == states[step_ids[1]]

    # orphan clean converges both; 0.9 breaks tables whose tag lost its changelog manifest list
    time.sleep(1.1)  # Java compares millisecond modification times with a timestamp string
    cutoff = int(time.time() * 1000)
    java_deleted = set(jm.call("orphan", warehouse, DB, "java", cutoff))
    ours.maintenance.remove_orphan_files(older_than=dt.datetime.fromtimestamp(cutoff / 1000), dry_run=False)
    assert_no_orphans(ours)
    java_files, our_files = tree(java.path), tree(ours.path)
    if ours.snapshots()[0].changelog_manifest_list:
        # the restored snapshot's changelog manifest list expired with it: 0.9 then counts nothing as used by
        # it and deletes its live files (the table becomes unreadable); we keep them
        assert java_files <= our_files
        lost = our_files - java_files
        assert lost and lost <= references(ours).needed
        assert lost <= {p.split(f"/{DB}.db/java/", 1)[1] for p in java_deleted}
        with pytest.raises(oracle.Error):
            java_lines(oracle, warehouse, "java")
    else:
        assert java_files == our_files
        assert directories(ours.path) <= directories(java.path)  # we also remove emptied bucket directories
        assert java_lines(oracle, warehouse, "java") == states[step_ids[1]]
    assert java_lines(oracle, warehouse, "ours") == states[step_ids[1]]


def test_rollback_after_upgrade_compaction_keeps_files_java_0_9_deletes(
    oracle: Any, java_maintenance: Any, warehouse: str
) -> None:
    layout = Layout("pk", (), "parquet")
    first = Step([("+I", r(i, 1)) for i in range(1, 13)])
    ids = oracle.write_spec(layout_spec(warehouse, "src", layout, [first], compact=True))["snapshot_after_each_step"]
    assert ids == [1, 2]  # the append, then the final compaction
    src = load(warehouse, "src")
    assert [s.commit_kind.value for s in src.snapshots()] == ["APPEND", "COMPACT"]
    assert {f["level"] for f in src.system_table("files").to_pylist()} == {5}  # upgraded, not rewritten
    _java, ours = _copy(warehouse, "src", "java"), _copy(warehouse, "src", "ours")
    java_maintenance.call("rollback-snapshot", warehouse, DB, "java", 1)
    ours.rollback_to(snapshot_id=1)
    expected = expected_after_each_step(layout, [first])[0]
    assert java_lines(oracle, warehouse, "ours") == expected
    assert_no_orphans(ours)
    with pytest.raises(oracle.Error):
        java_lines(oracle, warehouse, "java")  # 0.9 deleted the upgraded files snapshot 1 still reads


def test_java_expires_our_tables_like_we_do(oracle_each: Any, request: pytest.FixtureRequest, warehouse: str) -> None:
    """Tables written by us (upserts, deletes, overwrites, dynamic bucket, compaction when available): Java's
    ExpireSnapshotsImpl (0.9 and 2.0) deletes exactly the files our expiration deletes."""
    oracle = oracle_each
    java_maintenance = request.getfixturevalue("java_maintenance" if oracle.paimon_version == "0.9"
                                                else "java_maintenance2")
    for kind, partitions, opts in (("pk-rowkind", ("dt",), {}), ("append-unaware", ("p",), {}),
                                   ("pk", (), {"bucket": "-1", "dynamic-bucket.target-row-num": "3"})):
        layout = Layout(kind, partitions, "parquet")
        name = f"src_{kind.replace('-', '_')}"
        catalog = FileSystemCatalog(warehouse)
        catalog.create_database(DB, exist_ok=True)
        table = catalog.create_table(f"{DB}.{name}", data_fields(SCENARIO_COLUMNS), primary_keys=layout.primary_keys,
                                     partition_keys=partitions, options={**layout.options, **opts})
        steps = history(layout)
        write_steps_ours(table, SCENARIO_COLUMNS, steps)
        compact = getattr(table.maintenance, "compact", None)
        if compact is not None and layout.has_pk:
            compact(full=True)
        write_steps_ours(table, SCENARIO_COLUMNS, [Step([("+I", r(i, 9)) for i in (1, 2, 50)])])
        java, ours = _copy(warehouse, name, f"{name}_java"), _copy(warehouse, name, f"{name}_ours")
        n = snapshot_ids(ours)[-1]
        ours.create_tag("t2", snapshot_id=2)
        java_maintenance.call("tag-create", warehouse, DB, f"{name}_java", "t2", 2, "-")
        for retain in (n - 2, 2, 1):
            java_maintenance.call("expire", warehouse, DB, f"{name}_java", retain, 2147483647,
                                  int(time.time() * 1000) + 1, 50)
            ours.maintenance.expire_snapshots(retain_min=retain, older_than=NOW, dry_run=False)
            _assert_same_files(java, ours, f"{kind} expire retain_min={retain}")
            for sid in snapshot_ids(ours):
                assert java_lines(oracle, warehouse, f"{name}_ours", sid) == our_lines(ours, sid)
        assert java_lines(oracle, warehouse, f"{name}_ours") == our_lines(ours)
        assert java_tag_lines(oracle, warehouse, f"{name}_ours", "t2") == our_tag_lines(ours, "t2")

