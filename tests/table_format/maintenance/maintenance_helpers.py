"""Helpers of the maintenance suites: directory listings and an independent account of what a table references.

``references(table)`` reads every snapshot and tag file on disk by itself (not through the maintenance code) and
returns two sets of paths relative to the table directory:

* ``needed``: what a reader of some snapshot or tag opens: schema files, snapshot and tag files, hints, consumer
  files, manifest lists, manifests, the live data files (+ extra files) of every snapshot and tag, the changelog
  files of every snapshot, index manifests and index files, statistics files. All must exist.
* ``named``: ``needed`` plus every other file some manifest still names (data files of DELETE entries, changelog
  files of tags). After orphan removal nothing outside ``named`` may be left.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from table_format import Table
from table_format.meta.manifest import FileKind, merge_entries
from table_format.meta.snapshot import Snapshot, tag_from_json


def tree(path: str) -> set[str]:
    """Every file below `path`, relative, hidden temp files included."""
    out = set()
    for dirpath, _, names in os.walk(path):
        for n in names:
            out.add(os.path.relpath(os.path.join(dirpath, n), path))
    return out


def tree_with_content(path: str) -> dict[str, bytes]:
    out = {}
    for rel in tree(path):
        with open(os.path.join(path, rel), "rb") as f:
            out[rel] = f.read()
    return out


def directories(path: str) -> set[str]:
    return {os.path.relpath(d, path) for d, _, _ in os.walk(path)}


@dataclass
class References:
    needed: set[str] = field(default_factory=set)
    named: set[str] = field(default_factory=set)
    missing_optional: set[str] = field(default_factory=set)


def _rel(table: Table, path: str) -> str:
    return os.path.relpath(path, table.path)


def snapshot_sources(table: Table) -> list[tuple[str, Snapshot, bool]]:
    """(relative file, snapshot, is tag) for every snapshot-N and tag file."""
    out = []
    for sub, prefix, is_tag in (("snapshot", "snapshot-", False), ("tag", "tag-", True)):
        d = os.path.join(table.path, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.startswith(prefix):
                continue
            with open(os.path.join(d, name), "rb") as f:
                data = f.read()
            snap = tag_from_json(data).snapshot if is_tag else Snapshot.from_json(data)
            out.append((f"{sub}/{name}", snap, is_tag))
    return out


def references(table: Table) -> References:
    store = table.store
    refs = References()
    root = table.path
    for sub in ("schema", "consumer"):
        d = os.path.join(root, sub)
        if os.path.isdir(d):
            refs.needed.update(f"{sub}/{n}" for n in os.listdir(d) if not n.startswith("."))
    for hint in ("EARLIEST", "LATEST"):
        if os.path.exists(os.path.join(root, "snapshot", hint)):
            refs.needed.add(f"snapshot/{hint}")
    for rel, snap, is_tag in snapshot_sources(table):
        refs.needed.add(rel)
        lists = [snap.base_manifest_list, snap.delta_manifest_list]
        refs.needed.update(f"manifest/{n}" for n in lists)
        entries = []
        for name in lists:
            for meta in store.manifests.read_manifest_list(name):
                refs.needed.add(f"manifest/{meta.file_name}")
                entries.extend(store.manifests.read_manifest(meta.file_name))
        live = {id(e) for e in merge_entries(entries) if e.kind == FileKind.ADD}
        for e in entries:
            bucket_dir = store.paths.bucket_dir(store.partition_path(e.partition), e.bucket)
            paths = [f"{bucket_dir}/{e.file.file_name}", *(f"{bucket_dir}/{x}" for x in e.file.extra_files)]
            target = refs.needed if id(e) in live else refs.named
            target.update(_rel(table, p) for p in paths)
        if snap.changelog_manifest_list:
            changelog_list = f"manifest/{snap.changelog_manifest_list}"
            if not os.path.exists(os.path.join(root, changelog_list)):
                # a tag does not keep its snapshot's changelog (nor does a snapshot restored from a tag)
                refs.missing_optional.add(changelog_list)
            else:
                target = refs.named if is_tag else refs.needed
                target.add(changelog_list)
                for meta in store.manifests.read_manifest_list(snap.changelog_manifest_list):
                    target.add(f"manifest/{meta.file_name}")
                    for e in store.manifests.read_manifest(meta.file_name):
                        bucket_dir = store.paths.bucket_dir(store.partition_path(e.partition), e.bucket)
                        target.add(_rel(table, f"{bucket_dir}/{e.file.file_name}"))
        if snap.index_manifest:
            refs.needed.add(f"manifest/{snap.index_manifest}")
            for ie in store.manifests.read_index_manifest(snap.index_manifest):
                refs.needed.add(f"index/{ie.index_file.file_name}")
        if snap.statistics:
            refs.needed.add(f"statistics/{snap.statistics}")
    tags = os.path.join(root, "tag")
    if os.path.isdir(tags):
        refs.needed.update(f"tag/{n}" for n in os.listdir(tags) if not n.startswith("."))
    refs.named |= refs.needed
    return refs


def assert_nothing_missing(table: Table) -> References:
    """Every file a reader of any snapshot or tag needs exists."""
    refs = references(table)
    missing = refs.needed - tree(table.path)
    assert not missing, f"referenced files missing: {sorted(missing)[:10]}"
    return refs


def assert_no_orphans(table: Table) -> None:
    """Nothing but referenced files is left (after orphan removal)."""
    refs = assert_nothing_missing(table)
    extra = tree(table.path) - refs.named
    assert not extra, f"unreferenced files left: {sorted(extra)[:10]}"


def snapshot_ids(table: Table) -> list[int]:
    return [s.id for s in table.snapshots()]


def hint(table: Table, name: str) -> str | None:
    try:
        with open(os.path.join(table.path, "snapshot", name)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return None


def write_consumer(table: Table, consumer_id: str, next_snapshot: int) -> None:
    d = os.path.join(table.path, "consumer")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"consumer-{consumer_id}"), "w") as f:
        json.dump({"nextSnapshot": next_snapshot}, f)
