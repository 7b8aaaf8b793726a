"""`python -m lakehouse_cli`: the same as the `lakehouse` console script."""

from lakehouse_cli.main import cli

cli(prog_name="lakehouse")
