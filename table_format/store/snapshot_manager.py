"""Finds, reads and publishes snapshots, and keeps the LATEST/EARLIEST hints.

Mirrors org.apache.paimon.utils.SnapshotManager and HintFileUtils: hints are trusted only when they
agree with the directory (LATEST only if snapshot-(LATEST+1) is absent, EARLIEST only if it exists);
publication is create-if-absent, so a snapshot is never overwritten.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TypeVar

from table_format.errors import CorruptMetadataError, SnapshotNotFoundError
from table_format.io.file_io import FileIO
from table_format.io.paths import EARLIEST, LATEST, SNAPSHOT_PREFIX, TablePaths
from table_format.meta.snapshot import Snapshot

_RACE_RETRIES = 5
T = TypeVar("T")


class SnapshotManager:
    def __init__(self, file_io: FileIO, paths: TablePaths) -> None:
        self.file_io = file_io
        self.paths = paths

    def list_ids(self) -> list[int]:
        ids = []
        for st in self.file_io.list_dir(self.paths.snapshot_dir):
            name = st.name
            if name.startswith(SNAPSHOT_PREFIX) and name[len(SNAPSHOT_PREFIX):].isdigit():
                ids.append(int(name[len(SNAPSHOT_PREFIX):]))
        return sorted(ids)

    def exists(self, snapshot_id: int) -> bool:
        return self.file_io.file_exists(self.paths.snapshot(snapshot_id))

    def _hint(self, name: str) -> int | None:
        try:
            text = self.file_io.read_bytes(f"{self.paths.snapshot_dir}/{name}").decode().strip()
        except (FileNotFoundError, OSError, UnicodeDecodeError):
            return None
        return int(text) if text.isdigit() else None

    def latest_id(self) -> int | None:
        hint = self._hint(LATEST)
        if hint is not None and self.exists(hint) and not self.exists(hint + 1):
            return hint
        ids = self.list_ids()
        if not ids:
            return None
        latest = ids[-1]
        while self.exists(latest + 1):  # a listing may lag behind the newest creates (eventually consistent stores)
            latest += 1
        return latest

    def earliest_id(self) -> int | None:
        hint = self._hint(EARLIEST)
        if hint is not None and self.exists(hint) and not self.exists(hint - 1):
            return hint
        ids = self.list_ids()
        return ids[0] if ids else None

    def snapshot(self, snapshot_id: int) -> Snapshot:
        path = self.paths.snapshot(snapshot_id)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise SnapshotNotFoundError(f"snapshot {snapshot_id} does not exist ({path})") from None
        snap = Snapshot.from_json(data, source=path)
        if snap.id != snapshot_id:
            raise CorruptMetadataError(f"{path}: holds snapshot id {snap.id}, expected {snapshot_id}")
        return snap

    def latest(self) -> Snapshot | None:
        hinted = self._hinted_latest()
        if hinted is not None:
            return hinted
        for _ in range(_RACE_RETRIES):
            sid = self.latest_id()
            if sid is None:
                return None
            try:
                return self.snapshot(sid)
            except SnapshotNotFoundError:
                # expired between listing and reading: only possible when newer snapshots exist, so look again
                if self.latest_id() == sid:
                    raise
        sid = self.latest_id()
        return self.snapshot(sid) if sid is not None else None

    def _hinted_latest(self) -> Snapshot | None:
        """The snapshot LATEST names, if it exists and is the newest: reading it doubles as the existence check
        (one request fewer than latest_id + snapshot on object stores); None when the hint cannot be used."""
        hint = self._hint(LATEST)
        if hint is None:
            return None
        try:
            snap = self.snapshot(hint)
        except SnapshotNotFoundError:
            return None
        return None if self.exists(hint + 1) else snap

    def read_latest(self, read: Callable[[Snapshot | None], T]) -> T:
        """`read(latest)`, again on the new latest when that snapshot was expired while `read` opened its files.

        Readers of the latest snapshot race snapshot expiration (which may remove it as soon as a newer one
        exists): a missing manifest of a snapshot that is gone means "look again", not corruption.
        """
        for attempt in range(_RACE_RETRIES):
            snapshot = self.latest()
            try:
                return read(snapshot)
            except (CorruptMetadataError, SnapshotNotFoundError):
                if snapshot is None or attempt == _RACE_RETRIES - 1 or self.exists(snapshot.id):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, oldest first; one expired while they are read is left out."""
        out = []
        for i in self.list_ids():
            try:
                out.append(self.snapshot(i))
            except SnapshotNotFoundError:
                continue
        return out

    def try_create(self, snapshot: Snapshot) -> bool:
        """Atomically create snapshot-<id> (no hint); False if it exists (a concurrent commit won the id)."""
        return self.file_io.try_create(self.paths.snapshot(snapshot.id), snapshot.to_json().encode())

    def try_publish(self, snapshot: Snapshot) -> bool:
        """Atomically create snapshot-<id> and point LATEST at it; False if it exists."""
        ok = self.try_create(snapshot)
        if ok:
            self.commit_latest_hint(snapshot.id)
        return ok

    def commit_latest_hint(self, snapshot_id: int) -> None:
        with contextlib.suppress(OSError):  # hints are advisory; readers verify them
            self.file_io.overwrite_hint(f"{self.paths.snapshot_dir}/{LATEST}", str(snapshot_id).encode())

    def commit_earliest_hint(self, snapshot_id: int) -> None:
        with contextlib.suppress(OSError):
            self.file_io.overwrite_hint(f"{self.paths.snapshot_dir}/{EARLIEST}", str(snapshot_id).encode())
