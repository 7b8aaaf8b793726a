"""FileStore: one table's storage collaborators and derived schema views, picklable for executors.

Plays the role of org.apache.paimon.AbstractFileStore (KeyValueFileStore / AppendOnlyFileStore):
it wires FileIO, paths and the schema/snapshot/manifest managers for a given schema version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from table_format.io.file_io import FileIO
from table_format.io.paths import TablePaths
from table_format.options import BucketMode, CoreOptions
from table_format.partition_path import partition_path
from table_format.row.binary_row import decode_row
from table_format.schema import TableSchema
from table_format.store.manifest_store import ManifestStore
from table_format.store.schema_manager import SchemaManager
from table_format.store.snapshot_manager import SnapshotManager
from table_format.types import DataField, DataType


@dataclass
class FileStore:
    identifier: str
    file_io: FileIO
    paths: TablePaths
    schema: TableSchema
    options: CoreOptions = field(init=False)
    schemas: SchemaManager = field(init=False)
    snapshots: SnapshotManager = field(init=False)
    manifests: ManifestStore = field(init=False)

    def __post_init__(self) -> None:
        self.options = CoreOptions.parse(self.schema.options, has_primary_key=bool(self.schema.primary_keys))
        self.schemas = SchemaManager(self.file_io, self.paths)
        self.snapshots = SnapshotManager(self.file_io, self.paths)
        self.manifests = ManifestStore(self.file_io, self.paths, self.options, self.partition_types)

    @property
    def has_primary_key(self) -> bool:
        return bool(self.schema.primary_keys)

    @cached_property
    def bucket_mode(self) -> BucketMode:
        return self.options.bucket_mode(has_primary_key=self.has_primary_key)

    @cached_property
    def partition_fields(self) -> list[DataField]:
        return self.schema.fields_of(self.schema.partition_keys)

    @cached_property
    def partition_types(self) -> list[DataType]:
        return [f.type for f in self.partition_fields]

    @cached_property
    def key_fields(self) -> list[DataField]:
        """Trimmed primary-key fields: the physical key of PK data files."""
        return self.schema.fields_of(self.schema.trimmed_primary_keys)

    @cached_property
    def key_types(self) -> list[DataType]:
        return [f.type.copy(nullable=False) for f in self.key_fields]

    def decode_partition(self, partition: bytes) -> tuple[object, ...]:
        return decode_row(partition, self.partition_types)

    def partition_path(self, partition: bytes) -> str:
        if not self.partition_fields:
            return ""
        return partition_path(
            self.decode_partition(partition),
            [f.name for f in self.partition_fields],
            self.partition_types,
            default_name=self.options.partition_default_name,
        )

    def data_file_path(self, partition: bytes, bucket: int, file_name: str, external_path: str | None = None) -> str:
        if external_path:
            return external_path
        return self.paths.data_file(self.partition_path(partition), bucket, file_name)

    def schema_by_id(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id:
            return self.schema
        return self._schema_cache(schema_id)

    def _schema_cache(self, schema_id: int) -> TableSchema:
        cache: dict[int, TableSchema] = self.__dict__.setdefault("_schemas_by_id", {})
        if schema_id not in cache:
            cache[schema_id] = self.schemas.schema(schema_id)
        return cache[schema_id]

    def with_schema(self, schema: TableSchema) -> FileStore:
        """This table's store at another schema version (an older one for time travel, a newer one after an
        alter, or a pending one a writer publishes at commit); shares the cache of schemas read from files."""
        if schema == self.schema:
            return self
        other = FileStore(identifier=self.identifier, file_io=self.file_io, paths=self.paths, schema=schema)
        other.__dict__["_schemas_by_id"] = self.__dict__.setdefault("_schemas_by_id", {})
        return other

    def latest(self) -> FileStore:
        """The store at the table's latest schema (self when that is already the one)."""
        latest = self.schemas.latest()
        return self if latest is None or latest.id <= self.schema.id else self.with_schema(latest)
