"""Paimon features this implementation does not implement, refused by name instead of half-handled.

Newer Java Paimon (1.x, 2.0) can turn these on per table; reading or writing such a table as if they were off
could give wrong answers or leave a table Java cannot read, so loading one raises UnsupportedFeatureError.
"""

from __future__ import annotations

from collections.abc import Mapping

from table_format.errors import UnsupportedFeatureError

# option -> feature name, refused when the option is 'true' (Paimon 1.3+ row tracking, 1.3+ data evolution)
_REFUSED_WHEN_TRUE = {
    "row-tracking.enabled": "row tracking",
    "data-evolution.enabled": "data evolution",
}
POSTPONE_BUCKET = -2  # Paimon 1.1+: records wait in bucket-postpone/ until a compaction assigns buckets
EXTERNAL_PATHS = "data-file.external-paths"


def check_table_features(options: Mapping[str, str], *, table: str) -> None:
    """Refuse (on read and write) a table whose options turn on a feature we do not implement."""
    for key, feature in _REFUSED_WHEN_TRUE.items():
        if str(options.get(key, "false")).strip().lower() == "true":
            raise UnsupportedFeatureError(f"table {table!r}: {feature} (option {key!r} = true) is not supported")
    bucket = str(options.get("bucket", "-1")).strip()
    if bucket.lstrip("-").isdigit() and int(bucket) == POSTPONE_BUCKET:
        raise UnsupportedFeatureError(
            f"table {table!r}: postpone bucket mode (option 'bucket' = {POSTPONE_BUCKET}) is not supported"
        )


def check_write_features(options: Mapping[str, str], *, table: str) -> None:
    """Refuse writing a table whose options ask for something our writer does not do (reads still work)."""
    if options.get(EXTERNAL_PATHS):
        raise UnsupportedFeatureError(
            f"table {table!r}: writing to external data paths (option {EXTERNAL_PATHS!r}) is not supported; "
            "reading files stored there is"
        )
