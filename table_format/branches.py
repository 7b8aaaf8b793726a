"""Branches: Paimon's `branch/branch-<name>/{schema,snapshot,tag}` beside the table's own metadata.

Facts of org.apache.paimon.utils.BranchManager (0.9; FileSystemBranchManager in 2.0) this follows:

* a branch is the directory `branch/branch-<name>` holding its own schema, snapshot, tag (and consumer) files; data,
  manifest and index files of every branch live at the table root (the path factory's root is the table path);
* create without a tag: the latest schema file only, no snapshot (the branch's first commit is snapshot 1);
  create from a tag: the tag file, the tag's snapshot file and its schema (here: every schema up to it, so files
  written with older schemas stay readable), under the same ids;
* names: not blank, not ``main``, not only digits, not an existing branch;
* fastForward: main's snapshots from the branch's earliest on, its schemas from that snapshot's schema on and its
  tags from that snapshot on are replaced by the branch's files, the LATEST hint reset.

Beyond Java: `from_latest=True` makes the branch from the latest snapshot through a tag `branch-<name>-base` kept
until the branch is deleted or fast-forwarded; fast-forward refuses, naming both snapshot ids, when the target
committed after the branch point (Java drops those commits silently), unless ``force=True``; snapshots are
published create-if-absent, so a writer committing to main meanwhile is never overwritten.
"""

from __future__ import annotations

import contextlib

from table_format.errors import BranchDivergedError, BranchError, SnapshotNotFoundError
from table_format.io.paths import MAIN_BRANCH
from table_format.maintenance.branch_refs import branch_names
from table_format.maintenance.references import tag_names
from table_format.maintenance.tags import create_tag, delete_tag, list_tags
from table_format.meta.snapshot import tag_from_json
from table_format.store.file_store import FileStore
from table_format.store.schema_manager import SchemaManager

__all__ = ["branch_store", "create_branch", "delete_branch", "fast_forward", "keeper_tag", "list_branches"]

BRANCH_SUFFIX = "$branch_"


def keeper_tag(name: str) -> str:
    """The tag of main that keeps the snapshot a `from_latest` branch starts at."""
    return f"branch-{name}-base"


def base_identifier(store: FileStore) -> str:
    return store.identifier.split("$", 1)[0]


def list_branches(store: FileStore) -> list[str]:
    return branch_names(store)


def _exists(store: FileStore, name: str) -> bool:
    return store.file_io.is_dir(store.paths.for_branch(name).branch_root)


def _check_new_name(store: FileStore, name: object) -> str:
    table = base_identifier(store)
    if not isinstance(name, str) or not name.strip():
        raise BranchError(f"table {table!r}: branch name {name!r} is blank")
    if name == MAIN_BRANCH:
        raise BranchError(f"table {table!r}: branch name 'main' is the default branch and cannot be created")
    if name.isdigit():
        raise BranchError(f"table {table!r}: branch name cannot be pure numeric string but is {name!r}")
    bad = [c for c in name if c in "$/\\" or ord(c) < 32 or ord(c) == 127]
    if bad or name != name.strip() or name.startswith("."):
        raise BranchError(
            f"table {table!r}: invalid branch name {name!r}: it becomes the directory branch/branch-<name> and the "
            "table name <table>$branch_<name>, so it must not contain '$', '/', '\\' or control characters, start "
            "with '.' or have surrounding spaces"
        )
    if _exists(store, name):
        raise BranchError(f"table {table!r}: branch {name!r} already exists")
    return name


def branch_store(store: FileStore, name: str) -> FileStore:
    """The store of branch `name` at its latest schema (main's when `name` is 'main')."""
    table = base_identifier(store)
    if not isinstance(name, str) or not name:
        raise BranchError(f"table {table!r}: branch name {name!r} is blank")
    paths = store.paths.for_branch(name)
    schema = SchemaManager(store.file_io, paths).latest()
    if schema is None:
        raise BranchError(f"table {table!r}: branch {name!r} does not exist (no schema under {paths.schema_dir})")
    ident = table if name == MAIN_BRANCH else f"{table}{BRANCH_SUFFIX}{name}"
    return FileStore(identifier=ident, file_io=store.file_io, paths=paths, schema=schema)


def _copy(store: FileStore, source: str, target: str, *, overwrite: bool = False) -> bool:
    data = store.file_io.read_bytes(source)
    if overwrite:
        store.file_io.write_bytes(target, data)
        return True
    return store.file_io.try_create(target, data)


def create_branch(store: FileStore, name: str, *, tag: str | None = None, from_latest: bool = False) -> None:
    """Create branch `name` of the table `store` belongs to, from `store`'s branch (see the module docstring)."""
    table = base_identifier(store)
    _check_new_name(store, name)
    if tag is not None and from_latest:
        raise BranchError(f"table {table!r}: pass tag or from_latest=True to create branch {name!r}, not both")
    target = store.paths.for_branch(name)
    if from_latest and store.snapshots.latest() is not None:
        tag = keeper_tag(name)
        create_tag(store, tag)
    if tag is None:
        schema = store.schemas.latest()
        assert schema is not None  # a loaded table has a schema
        if not _copy(store, store.paths.schema(schema.id), target.schema(schema.id)):
            raise BranchError(f"table {table!r}: branch {name!r} already exists")
        return
    tag_path = store.paths.tag(tag)
    try:
        tag_bytes = store.file_io.read_bytes(tag_path)
    except FileNotFoundError:
        raise BranchError(f"table {table!r}: tag {tag!r} to create branch {name!r} from does not exist") from None
    snapshot = tag_from_json(tag_bytes, source=tag_path).snapshot
    schema_ids = [i for i in store.schemas.list_ids() if i <= snapshot.schema_id]
    for i in schema_ids:  # first the schemas, the tag, then the snapshot that needs them (as a commit would)
        if not _copy(store, store.paths.schema(i), target.schema(i)) and i == schema_ids[0]:
            raise BranchError(f"table {table!r}: branch {name!r} already exists")
    store.file_io.write_bytes(target.tag(tag), tag_bytes)
    try:
        snapshot_bytes = store.file_io.read_bytes(store.paths.snapshot(snapshot.id))
    except FileNotFoundError:  # expired since: the tag holds the snapshot
        snapshot_bytes = snapshot.to_json().encode()
    store.file_io.write_bytes(target.snapshot(snapshot.id), snapshot_bytes)


def delete_branch(store: FileStore, name: str) -> None:
    """Delete the branch directory; then main's `from_latest` tag of it, with the files only that tag kept."""
    table = base_identifier(store)
    if name == MAIN_BRANCH or not isinstance(name, str) or not _exists(store, name):
        raise BranchError(f"table {table!r}: branch {name!r} does not exist")
    store.file_io.delete_dir(store.paths.for_branch(name).branch_root)
    _drop_keeper(store, name)


def _drop_keeper(store: FileStore, name: str) -> None:
    main = branch_store(store, MAIN_BRANCH)
    if keeper_tag(name) in tag_names(main):
        with contextlib.suppress(SnapshotNotFoundError):  # deleted meanwhile
            delete_tag(main, keeper_tag(name))


def fast_forward(store: FileStore, name: str, *, force: bool = False) -> int:
    """Make `store`'s branch (usually main) take branch `name`'s state; returns its latest snapshot id.

    Refused (BranchDivergedError, nothing changed) when the target committed after the branch point, unless
    `force=True`, which drops those commits as Java's fastForward does.
    """
    table = base_identifier(store)
    if name == store.paths.branch:
        raise BranchError(f"table {table!r}: cannot fast-forward branch {name!r} to itself")
    source = branch_store(store, name)
    ids = source.snapshots.list_ids()
    if not ids:
        raise BranchError(f"table {table!r}: branch {name!r} has no snapshot to fast-forward to")
    earliest = source.snapshots.snapshot(ids[0])
    target_latest = store.snapshots.latest_id()
    target_name = store.paths.branch
    if not force and target_latest is not None and target_latest >= earliest.id:
        same_start = target_latest == earliest.id and store.snapshots.snapshot(earliest.id) == earliest
        if not same_start:
            raise BranchDivergedError(
                f"table {table!r}: cannot fast-forward {target_name} to branch {name!r}: {target_name}'s latest "
                f"snapshot is {target_latest} but the branch starts at snapshot {earliest.id}, so {target_name} "
                f"committed after the branch point (fast-forwarding would drop its snapshots "
                f"{earliest.id}..{target_latest}); pass force=True to drop them"
            )
    paths, src, fio = store.paths, source.paths, store.file_io
    if not force:  # a schema main evolved to after the branch point under an id the branch also uses
        main_schemas = set(store.schemas.list_ids())
        for schema_id in source.schemas.list_ids():
            if schema_id in main_schemas and fio.read_bytes(paths.schema(schema_id)) != fio.read_bytes(
                    src.schema(schema_id)):
                raise BranchDivergedError(
                    f"table {table!r}: cannot fast-forward {target_name} to branch {name!r}: both changed schema "
                    f"{schema_id} differently after the branch point; pass force=True to take the branch's"
                )
    if force:  # Java's order: the hint, then the target's snapshots, schemas and tags from the branch point on
        fio.delete_quietly(f"{paths.snapshot_dir}/LATEST")
        for sid in reversed(store.snapshots.list_ids()):
            if sid >= earliest.id:
                fio.delete_quietly(paths.snapshot(sid))
        for schema_id in store.schemas.list_ids():
            if schema_id >= earliest.schema_id:
                fio.delete_quietly(paths.schema(schema_id))
        for tag, snap_id in list_tags(store).items():
            if snap_id >= earliest.id:
                fio.delete_quietly(paths.tag(tag))
    for schema_id in source.schemas.list_ids():
        _copy(store, src.schema(schema_id), paths.schema(schema_id), overwrite=force)
    for tag in tag_names(source):
        _copy(store, src.tag(tag), paths.tag(tag), overwrite=True)
    for sid in ids:
        if sid == earliest.id and store.snapshots.exists(sid) and not force:
            continue  # the branch point itself, the same snapshot on both sides
        if not _copy(store, src.snapshot(sid), paths.snapshot(sid), overwrite=force):
            raise BranchDivergedError(
                f"table {table!r}: fast-forward of {target_name} to branch {name!r} stopped: another writer "
                f"committed snapshot {sid} to {target_name} meanwhile (the branch's snapshot {sid} was not "
                f"published; {target_name} keeps that commit)"
            )
    store.snapshots.commit_latest_hint(ids[-1])
    if target_name == MAIN_BRANCH:
        _drop_keeper(store, name)
    from table_format.iceberg import sync_after_commit  # noqa: PLC0415 - lazy: readers never import Iceberg

    sync_after_commit(store)  # Iceberg metadata (main only) follows the new state
    return ids[-1]

