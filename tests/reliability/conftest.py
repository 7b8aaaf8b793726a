"""Soak variants (`@pytest.mark.slow`) run only when asked for: `-m slow` (or any -m naming slow) or RUN_SLOW=1."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "slow" in (config.option.markexpr or "") or os.environ.get("RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="soak variant: run with -m slow (see README, Reliability)")
    for item in items:
        if "slow" in item.keywords and "reliability" in str(item.path):
            item.add_marker(skip)
