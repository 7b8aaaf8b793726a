"""Maintenance jobs (compaction, expiration, rescale, orphan removal) executed on PySpark resources."""
