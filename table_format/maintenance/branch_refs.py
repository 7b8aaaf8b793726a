"""What the other branches of a table use, so that expiration, rollback and tag deletion on one branch keep it.

All branches share the data, manifest, index and statistics files at the table root (a branch made from a tag starts
with the files of that snapshot). Java relies on the tag a branch is made from; here every deletion plan is also
filtered by what any other branch's snapshots and tags reference, so a branch stays readable whatever happens to
main (and main whatever happens to a branch). Paimon's file names carry a random UUID, so names identify files.
"""

from __future__ import annotations

from collections.abc import Iterable

from table_format.io.paths import BRANCH_DIR, BRANCH_PREFIX, MAIN_BRANCH
from table_format.maintenance.deletion import added_entries
from table_format.maintenance.references import live_data_entries, metadata_refs, tagged_snapshots
from table_format.meta.manifest import ManifestEntry
from table_format.store.file_store import FileStore
from table_format.store.schema_manager import SchemaManager


def branch_names(store: FileStore) -> list[str]:
    """Names of the branches other than main (directories `branch/branch-<name>`), sorted."""
    out = []
    for st in store.file_io.list_dir(f"{store.paths.root}/{BRANCH_DIR}"):
        if st.is_dir and st.name.startswith(BRANCH_PREFIX) and len(st.name) > len(BRANCH_PREFIX):
            out.append(st.name[len(BRANCH_PREFIX):])
    return sorted(out)


def other_branch_stores(store: FileStore) -> list[FileStore]:
    """The stores of every branch but `store`'s own (main included when `store` is a branch); empty branches
    (no schema yet) are left out."""
    names = [MAIN_BRANCH, *branch_names(store)]
    out = []
    for name in names:
        if name == store.paths.branch:
            continue
        paths = store.paths.for_branch(name)
        schema = SchemaManager(store.file_io, paths).latest()
        if schema is not None:
            out.append(FileStore(identifier=store.identifier, file_io=store.file_io, paths=paths, schema=schema))
    return out


def _entry_names(entries: Iterable[ManifestEntry], names: set[str]) -> None:
    for e in entries:
        names.add(e.file.file_name)
        names.update(e.file.extra_files)


def used_by_other_branches(store: FileStore) -> set[str]:
    """Names of the files any other branch's snapshots or tags reference: data and changelog files (with their extra
    files), manifest lists, manifests, index manifests, index files, statistics files. Strict: an unreadable
    manifest raises CorruptMetadataError (it protects files, so guessing would be unsafe)."""
    names: set[str] = set()
    for other in other_branch_stores(store):
        snapshots = other.snapshots.snapshots()
        tags = [snap for snap, _ in tagged_snapshots(other)]
        if snapshots:  # the earliest snapshot's files, then what each later one added
            _entry_names(live_data_entries(other, snapshots[0]), names)
        for snap in snapshots:
            _entry_names(added_entries(other, snap.delta_manifest_list), names)
            _entry_names(added_entries(other, snap.changelog_manifest_list), names)
        for tag in tags:
            _entry_names(live_data_entries(other, tag), names)
        names |= metadata_refs(other, [*snapshots, *tags], changelog=True).names
    return names


def keep_branch_files(store: FileStore, paths: Iterable[str]) -> list[str]:
    """`paths` without the files another branch uses (unchanged, and cheap, when the table has no branch)."""
    paths = list(paths)
    if store.paths.branch == MAIN_BRANCH and not branch_names(store):
        return paths
    used = used_by_other_branches(store)
    return [p for p in paths if p.rsplit("/", 1)[-1] not in used]
