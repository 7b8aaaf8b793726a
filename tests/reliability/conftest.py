"""Soak variants (`@pytest.mark.slow`) run only when asked for: `-m slow` (or any -m naming slow) or RUN_SLOW=1;
otherwise they are deselected, so the default run stays a few minutes."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "slow" in (config.option.markexpr or "") or os.environ.get("RUN_SLOW") == "1":
        return
    soak = [i for i in items if "slow" in i.keywords and "reliability" in str(i.path)]
    if soak:
        config.hook.pytest_deselected(items=soak)
        items[:] = [i for i in items if i not in soak]
