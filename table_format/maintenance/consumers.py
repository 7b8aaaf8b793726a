"""Paimon consumers: ``consumer/consumer-<id>`` files holding the next snapshot a reader will read.

Mirrors org.apache.paimon.consumer.ConsumerManager: a consumer's ``nextSnapshot`` pins that snapshot and every later
one against snapshot expiration (ours and Java's: `expire.py` keeps ``consumer_min_next_snapshot`` and later), and
``consumer.expiration-time`` deletes consumers whose file was not touched for that long. The file is JSON,
``{"nextSnapshot" : N}``, replaced atomically on every advance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

from table_format.errors import CorruptMetadataError, OptionError
from table_format.maintenance.references import CONSUMER_DIR, CONSUMER_PREFIX
from table_format.meta.snapshot import CommitKind, Snapshot
from table_format.store.file_store import FileStore

_VALID_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")
PINNING_CONSUMER_PREFIX = "dagster-"  # the Dagster incremental inputs' consumers (lakehouse_assets.incremental)
_ROW_CHANGING = frozenset({CommitKind.APPEND, CommitKind.OVERWRITE})  # COMPACT and ANALYZE change no row


@dataclass(frozen=True)
class Consumer:
    """One consumer of a table: its id, the next snapshot it will read, when its file was last written (ms)."""

    consumer_id: str
    next_snapshot: int
    modified_ms: int | None

    @property
    def pins_last_read(self) -> bool:
        """True for the Dagster incremental inputs' consumers: their ``nextSnapshot`` is the snapshot they read last
        (kept so that an overwrite right after it can be read as a replacement), not the one they read next."""
        return self.consumer_id.startswith(PINNING_CONSUMER_PREFIX)

    def unread(self, snapshots: Iterable[Snapshot]) -> int:
        """How many of `snapshots` (``Table.snapshots()``) hold row changes this consumer has not read: the APPEND
        and OVERWRITE commits from the one it reads next on. A compaction changes no row, so it leaves nothing unread."""
        first = self.next_snapshot + 1 if self.pins_last_read else self.next_snapshot
        return sum(1 for s in snapshots if s.id >= first and s.commit_kind in _ROW_CHANGING)


def _check_id(store: FileStore, consumer_id: str) -> None:
    if not isinstance(consumer_id, str) or not _VALID_ID.match(consumer_id):
        raise OptionError(
            f"table {store.identifier!r}: consumer id {consumer_id!r} must be letters, digits, '_', '-' or '.'"
        )


def consumer_path(store: FileStore, consumer_id: str) -> str:
    return f"{store.paths.branch_root}/{CONSUMER_DIR}/{CONSUMER_PREFIX}{consumer_id}"


def _parse(store: FileStore, path: str, data: bytes) -> int:
    try:
        value = json.loads(data)["nextSnapshot"]
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(value)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        raise CorruptMetadataError(
            f"table {store.identifier!r}: consumer file {path} has no integer 'nextSnapshot' ({e!r})"
        ) from None
    return value


def list_consumers(store: FileStore) -> list[Consumer]:
    """Every consumer of the table, sorted by id (ConsumerManager.consumers)."""
    result = []
    for st in store.file_io.list_dir(f"{store.paths.branch_root}/{CONSUMER_DIR}"):
        if st.is_dir or not st.name.startswith(CONSUMER_PREFIX):
            continue
        try:
            data = store.file_io.read_bytes(st.path)
        except FileNotFoundError:  # expired meanwhile
            continue
        modified = st.mtime_ns // 1_000_000 if st.mtime_ns is not None else None
        result.append(Consumer(st.name[len(CONSUMER_PREFIX):], _parse(store, st.path, data), modified))
    return sorted(result, key=lambda c: c.consumer_id)


def consumer_min_next_snapshot(store: FileStore) -> int | None:
    """min(nextSnapshot) over the consumers (ConsumerManager.minNextSnapshot): expiration keeps it and later ones."""
    return min((c.next_snapshot for c in list_consumers(store)), default=None)


def read_consumer(store: FileStore, consumer_id: str) -> Consumer | None:
    """The consumer `consumer_id`, None when it has no file (never registered, or expired)."""
    _check_id(store, consumer_id)
    path = consumer_path(store, consumer_id)
    st = store.file_io.status(path)
    if st is None:
        return None
    try:
        data = store.file_io.read_bytes(path)
    except FileNotFoundError:
        return None
    modified = st.mtime_ns // 1_000_000 if st.mtime_ns is not None else None
    return Consumer(consumer_id, _parse(store, path, data), modified)


def set_consumer(store: FileStore, consumer_id: str, *, next_snapshot: int) -> Consumer:
    """Create or advance consumer `consumer_id` to `next_snapshot` (ConsumerManager.resetConsumer)."""
    _check_id(store, consumer_id)
    if isinstance(next_snapshot, bool) or not isinstance(next_snapshot, int) or next_snapshot < 1:
        raise OptionError(
            f"table {store.identifier!r}: consumer {consumer_id!r}: next_snapshot must be an int >= 1, "
            f"not {next_snapshot!r}"
        )
    path = consumer_path(store, consumer_id)
    store.file_io.overwrite_hint(path, json.dumps({"nextSnapshot": next_snapshot}, indent=2).encode())
    st = store.file_io.status(path)
    return Consumer(consumer_id, next_snapshot, st.mtime_ns // 1_000_000 if st and st.mtime_ns else None)


def delete_consumer(store: FileStore, consumer_id: str) -> bool:
    """Remove consumer `consumer_id` (it no longer pins snapshots); False when it did not exist."""
    _check_id(store, consumer_id)
    return store.file_io.delete_quietly(consumer_path(store, consumer_id))
