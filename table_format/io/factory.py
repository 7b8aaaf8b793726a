"""The FileIO of a warehouse or table URI: local paths, s3:// (S3FileIO), anything else pyarrow.fs understands."""

from __future__ import annotations

from collections.abc import Mapping

from table_format.errors import OptionError
from table_format.io.file_io import FileIO
from table_format.io.lock import CommitLock

S3_SCHEMES = ("s3://", "s3a://")
_LOCAL_HOSTS = ("", "localhost")


def is_s3(uri: str) -> bool:
    return uri.startswith(S3_SCHEMES)


def normalize_uri(uri: str) -> str:
    """One spelling per location, whatever form Spark or Hadoop passes: ``file:/x``, ``file:///x`` and
    ``file://localhost/x`` -> ``/x``; ``s3a://b/k`` -> ``s3://b/k``; anything else unchanged."""
    text = str(uri)
    if text[:5].lower() == "file:":
        rest = text[5:]
        if rest.startswith("//"):
            host, slash, path = rest[2:].partition("/")
            if host.lower() not in _LOCAL_HOSTS:
                raise OptionError(f"{uri!r} names the host {host!r}: only local file: URIs are supported")
            rest = slash + path
        if not rest.startswith("/"):
            raise OptionError(f"{uri!r} is not an absolute file: URI (file:/path or file:///path)")
        return "/" + rest.lstrip("/")
    if text[:6].lower() == "s3a://":
        return "s3://" + text[6:]
    return text


def file_io_for_uri(
    uri: str, *, commit_lock: CommitLock | None = None, options: Mapping[str, object] | None = None
) -> tuple[FileIO, str]:
    """(FileIO, path inside its store) for `uri`; `options` are catalog options (`s3.*`, see s3_config)."""
    uri = normalize_uri(uri)
    if is_s3(uri):
        from table_format.io.s3_config import S3Config  # noqa: PLC0415 - lazy: local tables never load S3
        from table_format.io.s3_file_io import S3FileIO  # noqa: PLC0415

        return S3FileIO(S3Config.resolve(options), commit_lock=commit_lock), path_of(uri)
    if options:
        raise OptionError(f"catalog options {sorted(options)} apply to s3:// warehouses only, not {uri!r}")
    return FileIO.for_uri(uri, commit_lock=commit_lock)


def path_of(uri: str) -> str:
    """The path inside its store of a local path or URI (`s3://bucket/key` -> `bucket/key`)."""
    uri = normalize_uri(uri)
    if is_s3(uri):
        path = uri.split("://", 1)[1].strip("/")
        if not path:
            raise OptionError(f"warehouse {uri!r} names no bucket")
        return path
    return FileIO.path_of(uri)
