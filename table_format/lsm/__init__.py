"""LSM structure of primary-key buckets: levels, sorted runs, compaction picking (pure, given the files)."""
