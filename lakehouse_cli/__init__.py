"""`lakehouse`: a command line to inspect and maintain the tables of a warehouse (docs/cli.md)."""
