"""Where a table's files live, and how new files are named (FileStorePathFactory, DataFilePathFactory)."""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field

SCHEMA_DIR = "schema"
SNAPSHOT_DIR = "snapshot"
MANIFEST_DIR = "manifest"
INDEX_DIR = "index"
TAG_DIR = "tag"
SNAPSHOT_PREFIX = "snapshot-"
SCHEMA_PREFIX = "schema-"
TAG_PREFIX = "tag-"
LATEST = "LATEST"
EARLIEST = "EARLIEST"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"
MAIN_BRANCH = "main"


def bucket_dir_name(bucket: int) -> str:
    return "bucket-postpone" if bucket == -2 else f"bucket-{bucket}"


@dataclass
class TablePaths:
    """Paths of one table; new-file names are `<prefix><uuid>-<n>` with one uuid per instance.

    On a branch other than main, the metadata of the branch (schema, snapshot, tag, consumer, changelog) lives under
    `branch/branch-<name>/` (BranchManager.branchPath); data, manifest, index and statistics files stay at the root.
    """

    root: str
    branch: str = MAIN_BRANCH
    _uuid: str = field(default_factory=lambda: str(uuid.uuid4()), repr=False)
    _counter: itertools.count = field(default_factory=itertools.count, repr=False)

    def __getstate__(self) -> dict[str, object]:
        return {"root": self.root, "branch": self.branch}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.root = str(state["root"])
        self.branch = str(state.get("branch", MAIN_BRANCH))
        self._uuid = str(uuid.uuid4())
        self._counter = itertools.count()

    @property
    def branch_root(self) -> str:
        """Where this branch's metadata lives: the table root for main, else `branch/branch-<name>`."""
        return self.root if self.branch == MAIN_BRANCH else f"{self.root}/{BRANCH_DIR}/{BRANCH_PREFIX}{self.branch}"

    def for_branch(self, branch: str) -> TablePaths:
        """The paths of another branch of the same table."""
        return TablePaths(self.root, branch)

    @property
    def schema_dir(self) -> str:
        return f"{self.branch_root}/{SCHEMA_DIR}"

    @property
    def snapshot_dir(self) -> str:
        return f"{self.branch_root}/{SNAPSHOT_DIR}"

    @property
    def manifest_dir(self) -> str:
        return f"{self.root}/{MANIFEST_DIR}"

    @property
    def index_dir(self) -> str:
        return f"{self.root}/{INDEX_DIR}"

    @property
    def tag_dir(self) -> str:
        return f"{self.branch_root}/{TAG_DIR}"

    def schema(self, schema_id: int) -> str:
        return f"{self.schema_dir}/{SCHEMA_PREFIX}{schema_id}"

    def snapshot(self, snapshot_id: int) -> str:
        return f"{self.snapshot_dir}/{SNAPSHOT_PREFIX}{snapshot_id}"

    def tag(self, name: str) -> str:
        return f"{self.tag_dir}/{TAG_PREFIX}{name}"

    def manifest(self, name: str) -> str:
        return f"{self.manifest_dir}/{name}"

    def index_file(self, name: str) -> str:
        return f"{self.index_dir}/{name}"

    def bucket_dir(self, partition_path: str, bucket: int) -> str:
        """partition_path is '' for unpartitioned tables, else 'k=v/k2=v2/' (trailing slash)."""
        return f"{self.root}/{partition_path}{bucket_dir_name(bucket)}"

    def data_file(self, partition_path: str, bucket: int, name: str) -> str:
        return f"{self.bucket_dir(partition_path, bucket)}/{name}"

    def new_name(self, prefix: str, suffix: str = "") -> str:
        return f"{prefix}{self._uuid}-{next(self._counter)}{suffix}"
