"""Reads and commits schema/schema-N files (org.apache.paimon.schema.SchemaManager)."""

from __future__ import annotations

from table_format.errors import CorruptMetadataError, TableAlreadyExistsError
from table_format.io.file_io import FileIO
from table_format.io.paths import SCHEMA_PREFIX, TablePaths
from table_format.schema import TableSchema


class SchemaManager:
    def __init__(self, file_io: FileIO, paths: TablePaths) -> None:
        self.file_io = file_io
        self.paths = paths

    def list_ids(self) -> list[int]:
        ids = []
        for st in self.file_io.list_dir(self.paths.schema_dir):
            if st.name.startswith(SCHEMA_PREFIX):
                suffix = st.name[len(SCHEMA_PREFIX):]
                if suffix.isdigit():
                    ids.append(int(suffix))
        return sorted(ids)

    def schema(self, schema_id: int) -> TableSchema:
        path = self.paths.schema(schema_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(f"schema file {path} is missing") from None
        schema = TableSchema.from_json(data, source=path)
        if schema.id != schema_id:
            raise CorruptMetadataError(f"{path}: holds schema id {schema.id}, expected {schema_id}")
        return schema

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def all(self) -> list[TableSchema]:
        return [self.schema(i) for i in self.list_ids()]

    def commit(self, schema: TableSchema) -> bool:
        """Publish schema-<id> if absent (tryToWriteAtomic); False when another writer won."""
        return self.file_io.try_create(self.paths.schema(schema.id), schema.to_json().encode())

    def create(self, schema: TableSchema, *, table: str) -> None:
        if self.list_ids() or not self.commit(schema):
            raise TableAlreadyExistsError(f"table {table!r} already exists (schema files at {self.paths.schema_dir})")
