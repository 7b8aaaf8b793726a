"""Manifest records (manifest-*, manifest-list-*, index-manifest-*) and their Avro codecs.

* :mod:`.records`: the frozen dataclasses (DataFileMeta, ManifestEntry, ManifestFileMeta, IndexManifestEntry, ...)
  and ADD/DELETE folding (:func:`merge_entries`);
* :mod:`.schemas`: the Avro schemas writers emit (Java 1.4 field set, Java's record names);
* :mod:`.codecs`: row-wise encode/decode through fastavro (every field set from Paimon 0.9 to master);
* :mod:`.columnar`: the fast manifest decoder (whole columns through polars' Avro reader), equal to the row-wise
  one and falling back to it for anything it does not handle.
"""

from table_format.meta.manifest.codecs import (
    decode_index_manifest,
    decode_manifest_list,
    decode_manifest_rows,
    encode_index_manifest,
    encode_manifest,
    encode_manifest_list,
)
from table_format.meta.manifest.columnar import COLUMNAR_MIN_RECORDS, DecodedManifest, decode_manifest, read_manifest
from table_format.meta.manifest.records import (
    EMPTY_ROW,
    EMPTY_STATS,
    DataFileMeta,
    DeletionVectorMeta,
    FileIdentifier,
    FileKind,
    FileSource,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    local_wall_clock_millis,
    merge_entries,
)
from table_format.meta.manifest.schemas import (
    INDEX_MANIFEST_ENTRY_SCHEMA,
    MANIFEST_ENTRY_SCHEMA,
    MANIFEST_FILE_META_SCHEMA,
)

__all__ = [
    "EMPTY_STATS",
    "EMPTY_ROW",
    "MANIFEST_ENTRY_SCHEMA",
    "MANIFEST_FILE_META_SCHEMA",
    "INDEX_MANIFEST_ENTRY_SCHEMA",
    "DataFileMeta",
    "COLUMNAR_MIN_RECORDS",
    "DecodedManifest",
    "DeletionVectorMeta",
    "FileIdentifier",
    "FileKind",
    "FileSource",
    "GlobalIndexMeta",
    "IndexFileMeta",
    "IndexManifestEntry",
    "ManifestEntry",
    "ManifestFileMeta",
    "SimpleStats",
    "decode_index_manifest",
    "decode_manifest",
    "decode_manifest_list",
    "decode_manifest_rows",
    "encode_index_manifest",
    "encode_manifest",
    "encode_manifest_list",
    "local_wall_clock_millis",
    "merge_entries",
    "read_manifest",
]
