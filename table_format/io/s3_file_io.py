"""S3FileIO: an s3:// warehouse through botocore, with create-if-absent by conditional PUT.

Paths are `bucket/key` (what `FileIO.path_of("s3://bucket/key")` returns). What each FileIO operation sends:

| operation | requests |
| --- | --- |
| `try_create` (snapshot, schema, tag) | `PUT` with `If-None-Match: *`; `412 Precondition Failed` means another writer has it |
| `read_bytes` | one `GET` (manifests, manifest lists and index manifests are immutable: cached after the first) |
| `open_input_file` | `GET Range: bytes=-1MiB` (a small file whole, a large one's footer), then ranged GETs |
| `write_bytes`, `overwrite_hint`, `open_output_stream` | one `PUT` (multipart above 16 MiB); never a rename |
| `list_dir` / `list_recursive` | `ListObjectsV2` with / without a delimiter, paginated |
| `file_exists` / `exists` | `HEAD` (`exists` also lists the prefix when no object has that name: a "directory") |
| `delete_many` | `DeleteObjects`, 1000 keys per request |
| `mkdirs` | a zero-byte `<dir>/` marker, so that an empty database or table directory is listed |
| `pending_uploads` / `abort_uploads` | `ListMultipartUploads`, paginated / one `AbortMultipartUpload` per upload |

Stores without conditional PUT (catalog option `s3.conditional-put` = false) need a CommitLock: without one a
commit is refused (CommitFailedError) rather than published by check-then-write, which can lose a commit.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pyarrow as pa

from table_format.errors import CommitFailedError, TableFormatError
from table_format.io.file_io import FileIO, FileStatus, PendingUpload, lock_key
from table_format.io.lock import CommitLock
from table_format.io.requests import RequestCounter
from table_format.io.s3_config import CONDITIONAL_PUT, S3Config
from table_format.io.s3_errors import error_codes, os_error, s3_errors
from table_format.io.s3_streams import S3InputFile, S3OutputStream
from table_format.io.s3_uploads import abort_uploads, list_uploads

try:  # botocore.session and its config are imported when a client is made (a third of a second)
    import botocore
    from botocore.exceptions import BotoCoreError, ClientError
except ImportError:  # pragma: no cover - the s3 extra is not installed
    botocore = None

TAIL_BYTES = 1 << 20  # first read of a data file: small files whole, the footer of large ones
PART_SIZE = 16 << 20  # multipart upload above this size
DELETE_BATCH = 1000  # DeleteObjects limit
_IMMUTABLE_PREFIXES = ("manifest-", "index-manifest-")  # uuid-named, never rewritten (cacheable)
T = TypeVar("T")
R = TypeVar("R")


class S3FileIO(FileIO):
    """FileIO over S3 (or an S3-compatible store) for one client configuration."""

    def __init__(self, config: S3Config, *, commit_lock: CommitLock | None = None) -> None:
        if botocore is None:
            raise TableFormatError("s3:// warehouses need botocore: pip install 'lakehouse[s3]' (or botocore)")
        self.config = config
        self.local = False
        self.commit_lock = commit_lock
        self.requests = RequestCounter()
        self._client_lock = threading.Lock()
        self._client: Any = None
        self._client_pid = -1
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cache_bytes = 0
        self._cache_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = -1

    def __repr__(self) -> str:
        return f"S3FileIO(endpoint={self.config.endpoint_url!r}, region={self.config.region!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "commit_lock": self.commit_lock}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], commit_lock=state["commit_lock"])  # type: ignore[misc]

    @property
    def atomic_create(self) -> bool:
        return self.config.conditional_put

    @property
    def client(self) -> Any:
        """The botocore client of this process (rebuilt after a fork: connection pools are not fork-safe)."""
        with self._client_lock:
            if self._client is None or self._client_pid != os.getpid():
                self._client = self._new_client()
                self._client_pid = os.getpid()
            return self._client

    def _new_client(self) -> Any:
        import botocore.session
        from botocore.config import Config as BotoConfig

        cfg = self.config
        session = botocore.session.get_session()
        client = session.create_client(
            "s3",
            endpoint_url=cfg.endpoint_url,
            region_name=cfg.region,
            aws_access_key_id=cfg.access_key_id,
            aws_secret_access_key=cfg.secret_access_key,
            aws_session_token=cfg.session_token,
            config=BotoConfig(
                s3={"addressing_style": "path" if cfg.path_style else "virtual"},
                retries={"max_attempts": cfg.max_attempts, "mode": "standard"},
                max_pool_connections=cfg.max_connections,
                parameter_validation=False,  # our own calls only: saves CPU per request
                request_checksum_calculation="when_required",
                response_checksum_validation="when_required",
            ),
        )
        client.meta.events.register("before-send.s3", self._count)
        return client

    def _count(self, event_name: str = "", **_: Any) -> None:
        self.requests.add(event_name.rsplit(".", 1)[-1])

    def uri(self, path: str) -> str:
        return f"s3://{path}"

    def catalog_options(self) -> dict[str, str]:
        return self.config.as_options()

    def parallel_map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Concurrent calls (each waits on the network most of the time), results in order."""
        todo = list(items)
        if len(todo) < 2:
            return [fn(x) for x in todo]
        with self._client_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                self._pool = ThreadPoolExecutor(max_workers=min(16, self.config.max_connections),
                                                thread_name_prefix="s3-read")
                self._pool_pid = os.getpid()
            pool = self._pool
        return list(pool.map(fn, todo))

    # ---- reads ---------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        cacheable = self._immutable(path)
        if cacheable:
            with self._cache_lock:
                hit = self._cache.get(path)
                if hit is not None:
                    self._cache.move_to_end(path)
                    return hit
        bucket, key = split(path)
        with s3_errors(path):
            data: bytes = self.client.get_object(Bucket=bucket, Key=key)["Body"].read()
        if cacheable:
            self._remember(path, data)
        return data

    def file_exists(self, path: str) -> bool:
        return self._head(path) is not None

    def exists(self, path: str) -> bool:
        return self._head(path) is not None or self.is_dir(path)

    def is_dir(self, path: str) -> bool:
        bucket, key = split(path)
        with s3_errors(path):
            response = self.client.list_objects_v2(Bucket=bucket, Prefix=dir_prefix(key), MaxKeys=1)
        return bool(response.get("KeyCount") or response.get("Contents"))

    def status(self, path: str) -> FileStatus | None:
        head = self._head(path)
        if head is not None:
            return FileStatus(path, int(head["ContentLength"]), _ns(head["LastModified"]), False)
        return FileStatus(path, 0, None, True) if self.is_dir(path) else None

    def _head(self, path: str) -> dict[str, Any] | None:
        bucket, key = split(path)
        if not key:
            return None
        try:
            with s3_errors(path):
                return dict(self.client.head_object(Bucket=bucket, Key=key))
        except FileNotFoundError:
            return None

    def list_dir(self, path: str) -> list[FileStatus]:
        bucket, key = split(path)
        prefix = dir_prefix(key)
        out = []
        for page in self._pages(path, Bucket=bucket, Prefix=prefix, Delimiter="/"):
            out += [FileStatus(f"{bucket}/{p['Prefix'].rstrip('/')}", 0, None, True)
                    for p in page.get("CommonPrefixes", ())]
            out += [_file(bucket, o) for o in page.get("Contents", ()) if o["Key"] != prefix]
        return out

    def list_recursive(self, path: str) -> list[FileStatus]:
        """Every object below `path`, plus the directories their keys imply (as local listings have them)."""
        bucket, key = split(path)
        prefix = dir_prefix(key)
        files: list[FileStatus] = []
        dirs: set[str] = set()
        for page in self._pages(path, Bucket=bucket, Prefix=prefix):
            for o in page.get("Contents", ()):
                rel = o["Key"][len(prefix):]
                parts = rel.rstrip("/").split("/")
                dirs.update(prefix + "/".join(parts[:i]) for i in range(1, len(parts)))
                if o["Key"].endswith("/"):
                    if rel:
                        dirs.add(o["Key"].rstrip("/"))
                else:
                    files.append(_file(bucket, o))
        return [*(FileStatus(f"{bucket}/{d}", 0, None, True) for d in sorted(dirs)), *files]

    def _pages(self, path: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        with s3_errors(path):
            yield from self.client.get_paginator("list_objects_v2").paginate(**kwargs)

    def open_input_file(self, path: str) -> pa.NativeFile:
        bucket, key = split(path)
        with s3_errors(path):
            stream = S3InputFile(self.client, bucket, key, tail_bytes=TAIL_BYTES)
        whole = stream.whole
        if whole is not None:  # the usual data file: read natively from memory, no Python in the reader's loop
            return pa.BufferReader(whole)
        return pa.PythonFile(stream, mode="r")

    # ---- writes --------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        bucket, key = split(path)
        if key:
            with s3_errors(path):
                self.client.put_object(Bucket=bucket, Key=dir_prefix(key), Body=b"")

    def write_bytes(self, path: str, data: bytes) -> None:
        bucket, key = split(path)
        with s3_errors(path):
            self.client.put_object(Bucket=bucket, Key=key, Body=data)
        if self._immutable(path):
            self._remember(path, bytes(data))

    def open_output_stream(self, path: str) -> pa.NativeFile:
        bucket, key = split(path)
        return pa.PythonFile(S3OutputStream(self.client, bucket, key, part_size=PART_SIZE), mode="w")

    def overwrite_hint(self, path: str, data: bytes) -> None:
        """A PUT replaces an object atomically on S3: readers see the old or the new hint, never a torn one."""
        bucket, key = split(path)
        with s3_errors(path):
            self.client.put_object(Bucket=bucket, Key=key, Body=data)

    def try_create(self, path: str, data: bytes) -> bool:
        if self.commit_lock is None and not self.config.conditional_put:
            raise CommitFailedError(
                f"refusing to create {self.uri(path)} without a commit lock: this store is configured without "
                f"conditional PUT (catalog option {CONDITIONAL_PUT!r} = false), where check-then-write can lose a "
                "concurrent commit; pass commit_lock=... to the catalog (docs/commit-protocol.md)"
            )
        if self.commit_lock is not None:
            with self.commit_lock.lock(lock_key(path)):
                return self._create_if_absent(path, data)
        return self._create_if_absent(path, data)

    def _create_if_absent(self, path: str, data: bytes) -> bool:
        bucket, key = split(path)
        if not self.config.conditional_put:  # only ever reached under the commit lock
            if self.file_exists(path):
                return False
            self.write_bytes(path, data)
            return True
        try:
            self.client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
        except ClientError as e:
            # 412: the key exists; 409: a concurrent conditional PUT of the same key is in flight (AWS)
            if error_codes(e) & {"412", "PreconditionFailed", "409", "ConditionalRequestConflict"}:
                return False
            raise os_error(e, path) from e
        except BotoCoreError as e:
            raise OSError(f"{self.uri(path)}: {e}") from e
        return True

    def delete(self, path: str) -> None:
        bucket, key = split(path)
        self._forget(path)
        with s3_errors(path):
            self.client.delete_object(Bucket=bucket, Key=key)

    def delete_quietly(self, path: str) -> bool:
        """True when the object is gone afterwards (S3 does not say whether it existed)."""
        try:
            self.delete(path)
        except OSError:
            return False
        return True

    def delete_many(self, paths: Sequence[str]) -> list[str]:
        """Delete objects in batches (DeleteObjects, in order); returns the paths that are gone afterwards."""
        done: list[str] = []
        by_bucket: dict[str, list[str]] = {}
        for p in paths:
            by_bucket.setdefault(split(p)[0], []).append(p)
        for bucket, group in by_bucket.items():
            for i in range(0, len(group), DELETE_BATCH):
                batch = group[i:i + DELETE_BATCH]
                for p in batch:
                    self._forget(p)
                try:
                    with s3_errors(batch[0]):
                        response = self.client.delete_objects(
                            Bucket=bucket, Delete={"Objects": [{"Key": split(p)[1]} for p in batch], "Quiet": True})
                except OSError:
                    continue
                failed = {e["Key"] for e in response.get("Errors", ())}
                done += [p for p in batch if split(p)[1] not in failed]
        return done

    def delete_dir(self, path: str) -> None:
        bucket, key = split(path)
        keys = [f"{bucket}/{o['Key']}" for page in self._pages(path, Bucket=bucket, Prefix=dir_prefix(key))
                for o in page.get("Contents", ())]
        gone = set(self.delete_many(keys))
        if len(gone) != len(keys):
            raise OSError(f"{self.uri(path)}: {len(keys) - len(gone)} objects could not be deleted")

    def delete_empty_dir(self, path: str) -> bool:
        """Remove the directory marker when nothing else is below it; True if the directory is gone."""
        bucket, key = split(path)
        prefix = dir_prefix(key)
        with s3_errors(path):
            response = self.client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=2)
        keys = [o["Key"] for o in response.get("Contents", ())]
        if any(k != prefix for k in keys):
            return False
        if keys:
            self.delete_quietly(f"{bucket}/{prefix}")
        return True

    def pending_uploads(self, path: str) -> list[PendingUpload]:
        """Multipart uploads in progress below directory `path` (left by crashed writers, or still running)."""
        bucket, key = split(path)
        return list_uploads(self.client, bucket, dir_prefix(key))

    def abort_uploads(self, uploads: Sequence[PendingUpload]) -> list[PendingUpload]:
        return abort_uploads(self.client, uploads)

    # ---- cache of immutable metadata -----------------------------------------------------------
    @staticmethod
    def _immutable(path: str) -> bool:
        parent, _, name = path.rpartition("/")
        return parent.endswith("/manifest") and name.startswith(_IMMUTABLE_PREFIXES)

    def _remember(self, path: str, data: bytes) -> None:
        limit = self.config.metadata_cache_bytes
        if len(data) > limit // 4:
            return
        with self._cache_lock:
            if path in self._cache:
                return
            self._cache[path] = data
            self._cache_bytes += len(data)
            while self._cache_bytes > limit:
                _, old = self._cache.popitem(last=False)
                self._cache_bytes -= len(old)

    def _forget(self, path: str) -> None:
        with self._cache_lock:
            old = self._cache.pop(path, None)
            if old is not None:
                self._cache_bytes -= len(old)


def split(path: str) -> tuple[str, str]:
    """`bucket/key` -> (bucket, key); the key is '' for the bucket itself."""
    bucket, _, key = path.lstrip("/").partition("/")
    if not bucket:
        raise TableFormatError(f"S3 path {path!r} has no bucket")
    return bucket, key.rstrip("/")


def dir_prefix(key: str) -> str:
    return f"{key}/" if key else ""


def _ns(value: dt.datetime) -> int:
    return int(value.timestamp() * 1_000_000) * 1000


def _file(bucket: str, obj: dict[str, Any]) -> FileStatus:
    return FileStatus(f"{bucket}/{obj['Key']}", int(obj.get("Size", 0)), _ns(obj["LastModified"]), False)
