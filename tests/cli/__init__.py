"""Tests of the lakehouse command line (a package, so that its conftest and helpers get unique module names)."""
