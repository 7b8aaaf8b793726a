"""The demo lakehouse: Paimon's documented table kinds as Dagster assets (see assets.py)."""

from lakehouse_assets.demo.assets import AUDIT_ASSETS, AUDIT_CHECKS, DEMO_ASSETS, BatchConfig, PaymentsConfig

__all__ = ["AUDIT_ASSETS", "AUDIT_CHECKS", "DEMO_ASSETS", "BatchConfig", "PaymentsConfig"]
