"""Paimon tables on PySpark, Dagster-free: the `format("paimon")` data source and distributed maintenance."""
