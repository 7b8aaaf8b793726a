"""Table maintenance: compaction, snapshot expiration, orphan-file removal, rescale, tags and rollback."""
