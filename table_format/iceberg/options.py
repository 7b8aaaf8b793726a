"""The `metadata.iceberg.*` table options we honour (Java Paimon 1.0+ names and defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from table_format.errors import OptionError, UnsupportedFeatureError
from table_format.store.file_store import FileStore

STORAGE = "metadata.iceberg.storage"
STORAGE_LOCATION = "metadata.iceberg.storage-location"
FORMAT_VERSION = "metadata.iceberg.format-version"
COMPRESSION = "metadata.iceberg.manifest-compression"
PREVIOUS_VERSIONS_MAX = "metadata.iceberg.previous-versions-max"
DELETE_AFTER_COMMIT = "metadata.iceberg.delete-after-commit.enabled"
COMPACTION_MIN = "metadata.iceberg.compaction.min.file-num"
COMPACTION_MAX = "metadata.iceberg.compaction.max.file-num"
_STORAGES = ("disabled", "table-location", "hadoop-catalog", "hive-catalog", "rest-catalog")
_COMPRESSIONS = ("snappy", "deflate", "zstandard", "null", "none", "uncompressed")


@dataclass(frozen=True)
class IcebergOptions:
    """Where and how Iceberg metadata is written for one table."""

    metadata_dir: str
    location: str
    compression: str
    previous_versions_max: int
    delete_after_commit: bool
    compaction_min_files: int
    compaction_max_files: int
    format_version: int = 2

    @staticmethod
    def of(store: FileStore) -> IcebergOptions | None:
        """None when the table asks for no Iceberg metadata (the default)."""
        raw = store.options.raw
        table = store.identifier
        storage = raw.get(STORAGE, "disabled").strip().lower()
        if storage not in _STORAGES:
            raise OptionError(f"table {table!r}: option {STORAGE!r} = {storage!r}: expected one of {_STORAGES}")
        if storage == "disabled":
            return None
        if storage in ("hive-catalog", "rest-catalog"):
            raise UnsupportedFeatureError(
                f"table {table!r}: option {STORAGE!r} = {storage!r} needs a metastore; 'table-location' and "
                "'hadoop-catalog' are supported")
        version = raw.get(FORMAT_VERSION, "2").strip()
        if version not in ("2", "3"):
            raise OptionError(f"table {table!r}: option {FORMAT_VERSION!r} = {version!r}: expected 2 or 3")
        if store.options.deletion_vectors_enabled and version == "2":
            raise UnsupportedFeatureError(
                f"table {table!r}: Iceberg metadata ({STORAGE!r}) for a table with deletion vectors needs Iceberg "
                f"format version 3 (set {FORMAT_VERSION}=3, written as Puffin deletion vectors): an Iceberg v2 "
                "reader cannot apply Paimon's deletion vectors and would return deleted rows")
        compression = raw.get(COMPRESSION, "snappy").strip().lower()
        if compression not in _COMPRESSIONS:
            raise OptionError(f"table {table!r}: option {COMPRESSION!r} = {compression!r}: expected one of "
                              f"{_COMPRESSIONS}")
        root = store.paths.root
        location = root
        if storage == "hadoop-catalog" and raw.get(STORAGE_LOCATION, "catalog-location") != "table-location":
            table_dir = root.rstrip("/").rsplit("/", 1)
            db_dir = table_dir[0].rsplit("/", 1)
            database = db_dir[1][:-3] if db_dir[1].endswith(".db") else db_dir[1]
            location = f"{db_dir[0]}/iceberg/{database}/{table_dir[1]}"
        return IcebergOptions(
            metadata_dir=f"{location}/metadata", location=location, compression=compression,
            previous_versions_max=_int(raw, PREVIOUS_VERSIONS_MAX, 0, table),
            delete_after_commit=raw.get(DELETE_AFTER_COMMIT, "true").strip().lower() == "true",
            compaction_min_files=_int(raw, COMPACTION_MIN, 10, table),
            compaction_max_files=_int(raw, COMPACTION_MAX, 50, table),
            format_version=int(version),
        )


def _int(raw: Mapping[str, str], key: str, default: int, table: str) -> int:
    text = raw.get(key)
    if text is None:
        return default
    try:
        value = int(str(text).strip())
    except ValueError:
        raise OptionError(f"table {table!r}: option {key!r} = {text!r} is not an integer") from None
    if value < 0:
        raise OptionError(f"table {table!r}: option {key!r} = {text!r} must be >= 0")
    return value
