"""Merge functions of primary-key tables (layer L3): deduplicate, first-row, partial-update, aggregation.

`merge_kv` merges the records of equal keys of a columnar batch exactly as Paimon 0.9's merge functions do;
readers, the write buffer and compaction share it. `merge_spec` / `validate_merge_options` parse and check a
table's merge options.
"""

from table_format.merge.engine import merge_kv
from table_format.merge.spec import FieldAgg, MergeSpec, SequenceGroup, merge_spec, validate_merge_options

__all__ = ["FieldAgg", "MergeSpec", "SequenceGroup", "merge_kv", "merge_spec", "validate_merge_options"]
