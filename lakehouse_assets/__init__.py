"""Dagster layer: each Paimon table a materializable asset through an IO manager (built on table_format)."""
