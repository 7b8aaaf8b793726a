"""The S3 suites reuse the interop suite's cases (tests/interop) on s3:// warehouses."""

from __future__ import annotations

import sys
from pathlib import Path

INTEROP = str(Path(__file__).resolve().parent.parent / "interop")
if INTEROP not in sys.path:
    sys.path.append(INTEROP)
