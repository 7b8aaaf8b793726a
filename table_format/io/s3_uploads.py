"""Multipart uploads in progress: what a writer that crashed mid-upload leaves behind.

An unfinished multipart upload is no object: listings do not show it, yet the store keeps (and bills) its parts
until it is completed or aborted. `list_uploads` finds them under a prefix (``ListMultipartUploads``, paginated) and
`abort_uploads` discards them (``AbortMultipartUpload``, one request each); orphan removal uses both.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from table_format.io.file_io import PendingUpload
from table_format.io.s3_errors import NOT_FOUND, error_codes, s3_errors

try:
    from botocore.exceptions import ClientError
except ImportError:  # pragma: no cover - the s3 extra is not installed (S3FileIO says so)
    ClientError = None


def list_uploads(client: Any, bucket: str, prefix: str) -> list[PendingUpload]:
    """The uploads in progress whose key starts with `prefix`."""
    out: list[PendingUpload] = []
    with s3_errors(f"{bucket}/{prefix}"):
        for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
            out += [PendingUpload(f"{bucket}/{u['Key']}", u["UploadId"],
                                  int(u["Initiated"].timestamp() * 1_000_000) * 1000)
                    for u in page.get("Uploads", ())]
    return out


def abort_uploads(client: Any, uploads: Iterable[PendingUpload]) -> list[PendingUpload]:
    """Abort the uploads; returns those gone afterwards (aborted now, or already completed or aborted)."""
    gone: list[PendingUpload] = []
    for upload in uploads:
        bucket, _, key = upload.path.partition("/")
        try:
            with s3_errors(upload.path):
                try:
                    client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload.upload_id)
                except ClientError as e:
                    if not error_codes(e) & (NOT_FOUND | {"NoSuchUpload"}):
                        raise
        except OSError:
            continue
        gone.append(upload)
    return gone
