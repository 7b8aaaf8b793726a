"""botocore errors as the OSErrors the rest of table_format handles (404 -> FileNotFoundError)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

try:
    from botocore.exceptions import BotoCoreError, ClientError
except ImportError:  # pragma: no cover - the s3 extra is not installed (S3FileIO says so)
    BotoCoreError = ClientError = None

NOT_FOUND = {"404", "NoSuchKey", "NotFound"}


def error_codes(e: ClientError) -> set[str]:
    """The HTTP status and the S3 error code of a failed request, e.g. {"412", "PreconditionFailed"}."""
    status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return {str(status), str(e.response.get("Error", {}).get("Code", ""))}


def os_error(e: ClientError, path: str) -> OSError:
    if error_codes(e) & NOT_FOUND:
        return FileNotFoundError(f"s3://{path} does not exist")
    error = e.response.get("Error", {})
    return OSError(f"s3://{path}: {error.get('Code', '')} {error.get('Message', '')}".strip())


@contextlib.contextmanager
def s3_errors(path: str) -> Iterator[None]:
    """botocore errors as the OSErrors the rest of table_format handles (404 -> FileNotFoundError)."""
    try:
        yield
    except ClientError as e:
        raise os_error(e, path) from e
    except BotoCoreError as e:
        raise OSError(f"s3://{path}: {e}") from e

