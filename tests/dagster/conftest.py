"""Dagster tests: an ephemeral instance per test and the IO manager on the test's warehouse."""

import dagster as dg
import pytest

from lakehouse_assets import PaimonIOManager


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/dagster/" in str(item.fspath):
            item.add_marker(pytest.mark.dagster)


@pytest.fixture
def instance() -> dg.DagsterInstance:
    """In memory: runs, event log and materialization history (the incremental cursor) for one test."""
    return dg.DagsterInstance.ephemeral()


@pytest.fixture
def io_manager(warehouse: str) -> PaimonIOManager:
    return PaimonIOManager(warehouse=warehouse)
