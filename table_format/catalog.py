"""FileSystemCatalog: databases are `<warehouse>/<db>.db`, tables are directories below them.

Mirrors org.apache.paimon.catalog.FileSystemCatalog over our FileIO (pyarrow.fs), so a warehouse can
be a local path or any URI pyarrow.fs understands.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from table_format.data.file_index import FileIndexOptions
from table_format.errors import (
    DatabaseNotFoundError,
    OptionError,
    SchemaError,
    TableAlreadyExistsError,
    TableFormatError,
    TableNotFoundError,
)
from table_format.features import check_table_features, check_write_features
from table_format.io.factory import file_io_for_uri, normalize_uri, path_of
from table_format.io.file_io import FileIO
from table_format.io.lock import CommitLock
from table_format.io.paths import MAIN_BRANCH, SCHEMA_DIR, TablePaths
from table_format.options import ChangelogProducer, CoreOptions, MergeEngine, check_option_keys
from table_format.schema import TableSchema, build_schema
from table_format.store.file_store import FileStore
from table_format.store.schema_manager import SchemaManager
from table_format.table import Table
from table_format.types import DataField

if TYPE_CHECKING:
    from table_format.schema_evolution import SchemaChange

DB_SUFFIX = ".db"
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")


def _check_name(name: str, what: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise SchemaError(
            f"invalid {what} name {name!r}: use letters, digits, '_' and '-' (not starting with '-')"
        )


def split_identifier(identifier: str) -> tuple[str, str]:
    if not isinstance(identifier, str) or identifier.count(".") != 1:
        raise SchemaError(f"invalid table identifier {identifier!r}: expected 'database.table'")
    db, name = identifier.split(".")
    _check_name(db, "database")
    _check_name(name, "table")
    return db, name


def split_branch(identifier: str) -> tuple[str, str | None]:
    """'db.t$branch_x' -> ('db.t', 'x'); 'db.t' -> ('db.t', None)."""
    if not isinstance(identifier, str) or "$" not in identifier:
        return identifier, None
    from table_format.branches import BRANCH_SUFFIX  # noqa: PLC0415 - lazy: opening a table needs no branches

    base, _, suffix = identifier.partition("$")
    if not suffix.startswith(BRANCH_SUFFIX[1:]) or len(suffix) == len(BRANCH_SUFFIX) - 1:
        raise SchemaError(
            f"invalid table identifier {identifier!r}: after '$' only 'branch_<name>' is supported (a branch)"
        )
    return base, suffix[len(BRANCH_SUFFIX) - 1:]


class FileSystemCatalog:
    """A warehouse of Paimon tables on a filesystem."""

    def __init__(
        self,
        warehouse: str,
        *,
        file_io: FileIO | None = None,
        commit_lock: CommitLock | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """`file_io`: the FileIO to use instead of one made from the warehouse URI (a wrapper, a test double);
        the warehouse is then a path inside its filesystem. `commit_lock`: makes snapshot publication safe on
        stores without create-if-absent; installed on the FileIO, see docs/commit-protocol.md. `options`:
        catalog options of s3:// warehouses (`s3.endpoint`, `s3.access-key`, `s3.secret-key`, `s3.region`, ...;
        unset keys come from the AWS environment variables), see docs/object-storage.md."""
        self.warehouse_uri = normalize_uri(str(warehouse))  # file:/x -> /x, s3a:// -> s3://
        if commit_lock is not None and not isinstance(commit_lock, CommitLock):
            raise OptionError(f"commit_lock must have a lock(key) context manager method, got {commit_lock!r}")
        if file_io is None:
            self.file_io, self.warehouse = file_io_for_uri(self.warehouse_uri, commit_lock=commit_lock,
                                                           options=options)
        else:
            if options:
                raise OptionError("pass catalog options or a file_io, not both (the file_io is already configured)")
            self.file_io, self.warehouse = file_io, path_of(self.warehouse_uri)
            if commit_lock is not None:
                file_io.commit_lock = commit_lock

    def __repr__(self) -> str:
        return f"FileSystemCatalog({self.warehouse_uri!r})"

    def table_uri(self, identifier: str) -> str:
        """The URI of table `identifier` (``s3://bucket/wh/db.db/t`` or a local path), for `open_table` and
        the Spark data source (with the same `options`)."""
        db, name = split_identifier(identifier)
        return f"{self.warehouse_uri.rstrip('/')}/{db}{DB_SUFFIX}/{name}"

    def _db_path(self, database: str) -> str:
        return f"{self.warehouse.rstrip('/')}/{database}{DB_SUFFIX}"

    def _table_path(self, database: str, table: str) -> str:
        return f"{self._db_path(database)}/{table}"

    # ---- databases -----------------------------------------------------------------------
    def create_database(self, name: str, *, exist_ok: bool = False) -> None:
        _check_name(name, "database")
        path = self._db_path(name)
        if self.file_io.exists(path):
            if exist_ok:
                return
            raise TableAlreadyExistsError(f"database {name!r} already exists")
        self.file_io.mkdirs(path)

    def list_databases(self) -> list[str]:
        return sorted(
            st.name[: -len(DB_SUFFIX)]
            for st in self.file_io.list_dir(self.warehouse)
            if st.is_dir and st.name.endswith(DB_SUFFIX)
        )

    def database_exists(self, name: str) -> bool:
        return self.file_io.is_dir(self._db_path(name))

    def drop_database(self, name: str, *, cascade: bool = False) -> None:
        _check_name(name, "database")
        if not self.database_exists(name):
            raise DatabaseNotFoundError(f"database {name!r} does not exist")
        if self.list_tables(name) and not cascade:
            raise TableFormatError(f"database {name!r} is not empty; pass cascade=True to drop its tables")
        self.file_io.delete_dir(self._db_path(name))

    # ---- tables --------------------------------------------------------------------------
    def list_tables(self, database: str) -> list[str]:
        _check_name(database, "database")
        if not self.database_exists(database):
            raise DatabaseNotFoundError(f"database {database!r} does not exist")
        out = []
        for st in self.file_io.list_dir(self._db_path(database)):
            if st.is_dir and SchemaManager(self.file_io, TablePaths(st.path)).list_ids():
                out.append(st.name)
        return sorted(out)

    def table_exists(self, identifier: str) -> bool:
        """Whether `db.t` exists (for `db.t$branch_x`: whether the table has that branch)."""
        base, branch = split_branch(identifier)
        db, name = split_identifier(base)
        paths = TablePaths(self._table_path(db, name), branch or MAIN_BRANCH)
        return bool(SchemaManager(self.file_io, paths).list_ids())

    def create_table(
        self,
        identifier: str,
        schema: pa.Schema | Sequence[DataField],
        *,
        primary_keys: Sequence[str] | None = (),
        partition_keys: Sequence[str] | None = (),
        options: Mapping[str, Any] | None = None,
        comment: str | None = None,
        exist_ok: bool = False,
    ) -> Table:
        db, name = split_identifier(identifier)
        if not self.database_exists(db):
            raise DatabaseNotFoundError(f"database {db!r} of table {identifier!r} does not exist; create_database first")
        if self.table_exists(identifier):
            if exist_ok:
                return self.load_table(identifier)
            raise TableAlreadyExistsError(f"table {identifier!r} already exists")
        opts = {str(k): str(v) for k, v in (options or {}).items()}
        table_schema = build_schema(
            schema, partition_keys=partition_keys, primary_keys=primary_keys, options=opts, comment=comment,
            table=identifier,
        )
        _validate_options(table_schema.options, table_schema, identifier)
        paths = TablePaths(self._table_path(db, name))
        from table_format.maintenance.post_commit import PostCommitMaintenance  # noqa: PLC0415 - lazy (writes only)

        # the options of the maintenance after each commit, checked now rather than at the first commit
        PostCommitMaintenance(FileStore(identifier=identifier, file_io=self.file_io, paths=paths, schema=table_schema),
                              commit_user="create-table")
        self.file_io.mkdirs(f"{paths.root}/{SCHEMA_DIR}")
        SchemaManager(self.file_io, paths).create(table_schema, table=identifier)
        return self.load_table(identifier)

    def alter_table(self, identifier: str, changes: Sequence[SchemaChange]) -> Table:
        """Apply `changes` as one new schema version (schema/schema-N, like Java's SchemaManager.commitChanges);
        returns the table at that schema. Refused changes raise SchemaError / OptionError and write nothing.
        Files keep the schema they were written with; reads map them to the new one by field id."""
        from table_format.alter import commit_schema_changes  # noqa: PLC0415 - lazy: readers never alter
        from table_format.iceberg import check_iceberg_writable, sync_after_commit  # noqa: PLC0415
        from table_format.maintenance.post_commit import PostCommitMaintenance  # noqa: PLC0415
        from table_format.schema_evolution import SetOption  # noqa: PLC0415

        table = self.load_table(identifier)

        def validate(schema: TableSchema) -> None:
            # the keys set now must be known (a table another engine created may hold keys we do not know)
            check_option_keys({c.key: c.value for c in changes if isinstance(c, SetOption)}, table=identifier,
                              columns=schema.field_names)
            _validate_options(schema.options, schema, identifier)
            store = FileStore(identifier=identifier, file_io=self.file_io, paths=table.store.paths, schema=schema)
            PostCommitMaintenance(store, commit_user="alter-table")
            check_iceberg_writable(store)
        commit_schema_changes(table.store, changes, validate=validate)
        altered = self.load_table(identifier)
        sync_after_commit(altered.store)  # e.g. metadata.iceberg.storage just set: the current state at once
        return altered

    def load_table(self, identifier: str) -> Table:
        """The table `db.t`, or its branch `x` as `db.t$branch_x`."""
        base, branch = split_branch(identifier)
        db, name = split_identifier(base)
        table = load_table_at(self.file_io, self._table_path(db, name), identifier=base)
        return table if branch is None else table.branch(branch)

    def drop_table(self, identifier: str, *, missing_ok: bool = False) -> None:
        db, name = split_identifier(identifier)
        if not self.table_exists(identifier):
            if missing_ok:
                return
            raise TableNotFoundError(f"table {identifier!r} does not exist")
        self.file_io.delete_dir(self._table_path(db, name))


def _validate_options(options: Mapping[str, str], schema: Any, identifier: str) -> None:
    check_table_features(options, table=identifier)
    check_write_features(options, table=identifier)
    try:
        parsed = CoreOptions.parse(options, has_primary_key=bool(schema.primary_keys))
    except TableFormatError as e:
        raise type(e)(f"table {identifier!r}: {e}") from None
    if parsed.bucket > 0 and not schema.primary_keys and not schema.bucket_keys:
        raise SchemaError(
            f"table {identifier!r}: an append table with option 'bucket' = {parsed.bucket} needs option 'bucket-key'"
        )
    if parsed.bucket > 0 and schema.primary_keys and not schema.trimmed_primary_keys and not options.get("bucket-key"):
        raise SchemaError(f"table {identifier!r}: the primary key must contain a column that is not a partition key")
    missing_parts = [k for k in schema.partition_keys if k not in schema.primary_keys]
    if parsed.bucket > 0 and schema.primary_keys and missing_parts:
        # Java's SchemaValidation: a key living in several partitions needs a cross-partition upsert (bucket -1)
        raise SchemaError(
            f"table {identifier!r}: in fixed-bucket mode (option 'bucket' = {parsed.bucket}) the primary key "
            f"{list(schema.primary_keys)} must contain every partition key; missing {missing_parts}"
        )
    for col in parsed.sequence_fields:
        if col not in schema.field_names:
            raise SchemaError(f"table {identifier!r}: option 'sequence.field' names unknown column {col!r}")
    from table_format.merge import validate_merge_options  # noqa: PLC0415 - lazy: checked on create/alter only

    validate_merge_options(schema, table=identifier)  # merge engine, aggregate functions, sequence groups
    FileIndexOptions.parse(options, schema.fields, table=repr(identifier))  # bloom-filter columns and settings
    if parsed.deletion_vectors_enabled and parsed.merge_engine == MergeEngine.FIRST_ROW:
        raise OptionError(
            f"table {identifier!r}: option 'deletion-vectors.enabled' does not go with merge-engine 'first-row' "
            "(first-row never deletes old data, as Paimon says)"
        )
    if parsed.deletion_vectors_enabled and parsed.changelog_producer == ChangelogProducer.FULL_COMPACTION:
        raise OptionError(  # SchemaValidation.validateForDeletionVectors
            f"table {identifier!r}: option 'deletion-vectors.enabled' works only with changelog-producer none, "
            "input or lookup, not 'full-compaction'"
        )


def load_table_at(file_io: FileIO, path: str, *, identifier: str | None = None) -> Table:
    """Open the table stored at `path` (any Paimon table: ours, Java's or pypaimon's)."""
    paths = TablePaths(path.rstrip("/"))
    ident = identifier or path.rstrip("/").rsplit("/", 1)[-1]
    schema = SchemaManager(file_io, paths).latest()
    if schema is None:
        raise TableNotFoundError(f"table {ident!r} does not exist (no schema under {paths.schema_dir})")
    check_table_features(schema.options, table=ident)
    return Table(FileStore(identifier=ident, file_io=file_io, paths=paths, schema=schema))


def open_table(
    path: str,
    *,
    file_io: FileIO | None = None,
    commit_lock: CommitLock | None = None,
    options: Mapping[str, Any] | None = None,
) -> Table:
    """Open a table by its path or URI, without a catalog (the Spark data source uses this); `options` as for
    FileSystemCatalog (s3:// settings)."""
    if file_io is None:
        file_io, inner = file_io_for_uri(path, commit_lock=commit_lock, options=options)
    else:
        if options:
            raise OptionError("pass catalog options or a file_io, not both (the file_io is already configured)")
        inner = path_of(path)
        if commit_lock is not None:
            file_io.commit_lock = commit_lock
    return load_table_at(file_io, inner)
