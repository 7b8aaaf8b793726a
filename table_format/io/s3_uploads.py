"""Multipart uploads in progress: what a writer that crashed mid-upload leaves behind.

An unfinished multipart upload is no object: listings do not show it, yet the store keeps (and bills) its parts
until it is completed or aborted. `list_uploads` finds them under a prefix (``ListMultipartUploads``, paginated) and
`abort_uploads` discards them (``AbortMultipartUpload``, one request each); orphan removal uses both.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from table_format.io.file_io import PendingUpload
from table_format.io.s3_errors import NOT_FOUND, error_codes, s3_errors

try:
    from botocore.exceptions import ClientError
except ImportError:  # pragma: no cover - the s3 extra is not installed (S3FileIO says so)
    ClientError = None

log = logging.getLogger(__name__)
# ListMultipartUploads refused: not implemented by the store, or not allowed (s3:ListBucketMultipartUploads)
UNLISTABLE = {"501", "NotImplemented", "403", "AccessDenied"}


def list_uploads(client: Any, bucket: str, prefix: str) -> list[PendingUpload]:
    """The uploads in progress whose key starts with `prefix`; none, with a warning logged, when the store does not
    implement the listing or the credentials may not list uploads (orphan removal goes on without them)."""
    out: list[PendingUpload] = []
    with s3_errors(f"{bucket}/{prefix}"):
        try:
            for page in client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix):
                out += [PendingUpload(f"{bucket}/{u['Key']}", u["UploadId"],
                                      int(u["Initiated"].timestamp() * 1_000_000) * 1000)
                        for u in page.get("Uploads", ())]
        except ClientError as e:
            if not error_codes(e) & UNLISTABLE:
                raise
            log.warning("s3://%s/%s: multipart uploads not listed (%s); abandoned uploads are not aborted, leave "
                        "them to the bucket's lifecycle rules", bucket, prefix, e.response.get("Error", {}).get("Code"))
            return []
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
