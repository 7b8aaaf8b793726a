"""Fixtures of the command-line tests (helpers in cli_helpers.py): ``shop``, a fresh warehouse with
``shop.orders`` and ``shop.events``, and ``run``, the CLI runner against it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from cli.cli_helpers import Run, build_warehouse


@pytest.fixture
def shop(tmp_path: Any) -> str:
    """A fresh warehouse with shop.orders and shop.events."""
    path = str(tmp_path / "warehouse")
    os.mkdir(path)
    build_warehouse(path)
    return path


@pytest.fixture
def run(shop: str) -> Run:
    return Run(shop)
