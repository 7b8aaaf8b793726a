"""Pure-Python Apache Paimon table format."""
