"""Process-wide worker threads, one pool per purpose, reused by every read and write.

A pool started per call costs more than its threads: every new thread gets fresh allocator heaps (Arrow's
mimalloc, glibc's arenas) whose pages fault in again on first touch and go back to the system when the thread
ends, which showed as a third more system time on a merged read of 2M rows. Pools are keyed by purpose so that a
task never waits on a task of its own pool (no deadlock when one is full), and started again in a forked child
(Spark's Python workers fork), whose copy of the parent's pool has no threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Literal, TypeVar

Purpose = Literal["read", "write", "manifest"]
T = TypeVar("T")
R = TypeVar("R")

_LOCK = threading.Lock()
_POOLS: dict[Purpose, ThreadPoolExecutor] = {}


def _forget_in_child() -> None:
    """A forked child has none of the parent's worker threads (and maybe a lock held by one): start afresh."""
    global _LOCK
    _LOCK = threading.Lock()
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def worker_pool(purpose: Purpose) -> ThreadPoolExecutor:
    """The process's pool for `purpose` ("read": splits of a scan; "write": buckets of a write; "manifest":
    manifest files of a plan), started on first use."""
    with _LOCK:
        pool = _POOLS.get(purpose)
        if pool is None:
            pool = _POOLS[purpose] = ThreadPoolExecutor(max_workers=pool_size(purpose),
                                                        thread_name_prefix=f"paimon-{purpose}")
        return pool


def pool_size(purpose: Purpose) -> int:
    """How many tasks of `purpose` run at once."""
    cores = os.cpu_count() or 2
    if purpose == "read":
        return 2 * cores  # one split decodes (Arrow, no GIL) while another merges (numpy, partly under the GIL)
    if purpose == "write":
        return cores
    return 8  # manifests: small files, latency-bound on object stores


def run_all(purpose: Purpose, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`[fn(x) for x in items]` on the pool of `purpose`, in order. Every call has ended before this returns or
    raises (the first error, in item order): a failed write cleans up after all of its files were written."""
    futures = [worker_pool(purpose).submit(fn, x) for x in items]
    wait(futures)
    return [f.result() for f in futures]
