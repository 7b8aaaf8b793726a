"""Counting the requests a FileIO sends to its store, to measure (and cut) round trips per commit and per scan.

    with file_io.requests.measure() as m:
        table.scan().plan()
    m.total, m.by_kind        # e.g. 7, {"GetObject": 5, "HeadObject": 1, "ListObjectsV2": 1}

S3FileIO counts every HTTP request it sends (retries included), by S3 operation name. The counter is shared by all
threads of a FileIO, so a measurement taken while other work runs on the same FileIO includes that work too.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Measurement:
    """Requests seen between the start and the end of a `measure()` block, by kind."""

    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


class RequestCounter:
    """Thread-safe running totals of requests by kind."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    def __getstate__(self) -> dict[str, int]:
        return {}  # a copy (a pickled FileIO on an executor) counts its own requests

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__()  # type: ignore[misc]

    def add(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._counts[kind] += n

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    @contextmanager
    def measure(self) -> Iterator[Measurement]:
        before = self.snapshot()
        result = Measurement()
        try:
            yield result
        finally:
            after = self.snapshot()
            result.by_kind = {k: v - before.get(k, 0) for k, v in sorted(after.items()) if v - before.get(k, 0)}
