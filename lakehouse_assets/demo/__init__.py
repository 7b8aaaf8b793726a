"""The demo lakehouse: Paimon's documented table kinds as Dagster assets (see assets.py)."""

from lakehouse_assets.demo.assets import DEMO_ASSETS, BatchConfig

__all__ = ["DEMO_ASSETS", "BatchConfig"]
