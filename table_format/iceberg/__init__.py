"""Iceberg-compatible metadata beside Paimon's own (`metadata.iceberg.storage`), so Iceberg readers read our tables."""

from table_format.iceberg.commit import check_iceberg_writable, sync_after_commit, sync_iceberg
from table_format.iceberg.options import IcebergOptions

__all__ = ["IcebergOptions", "check_iceberg_writable", "sync_after_commit", "sync_iceberg"]
