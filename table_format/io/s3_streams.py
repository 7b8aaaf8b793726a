"""Object streams over an S3 client: ranged reads that start with the tail, buffered and multipart writes.

`S3InputFile` opens with one `GET Range: bytes=-<tail>`: a small object arrives whole in that single request, and
for a large Parquet or ORC file the footer does (the reader asks for the tail first). Later reads outside the
cached tail are ranged GETs of exactly what the reader asks for (pyarrow coalesces column chunks itself).
`S3OutputStream` keeps the bytes until `part_size`, then switches to a multipart upload; a small file is one PUT.
Both are wrapped in `pyarrow.PythonFile`, so pyarrow's Parquet/ORC readers and writers use them directly.
"""

from __future__ import annotations

import io
import re
from typing import Any

from table_format.io.s3_errors import s3_errors

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


class S3InputFile(io.RawIOBase):
    """A seekable, read-only view of one object; `size` is known after the first (tail) request."""

    def __init__(self, client: Any, bucket: str, key: str, *, tail_bytes: int) -> None:
        super().__init__()
        self._client = client
        self._bucket = bucket
        self._key = key
        self._pos = 0
        response = client.get_object(Bucket=bucket, Key=key, Range=f"bytes=-{tail_bytes}")
        body = response["Body"].read()
        match = _CONTENT_RANGE.fullmatch(response.get("ContentRange") or "")
        if match is None:  # the whole object (stores that ignore a range covering everything)
            self.size, self._tail_start = len(body), 0
        else:
            self.size, self._tail_start = int(match.group(3)), int(match.group(1))
        self._tail = body

    @property
    def whole(self) -> bytes | None:
        """The whole object when the first request brought all of it (then no further request is needed)."""
        return self._tail if self._tail_start == 0 else None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._pos = offset
        elif whence == io.SEEK_CUR:
            self._pos += offset
        elif whence == io.SEEK_END:
            self._pos = self.size + offset
        else:
            raise ValueError(f"bad whence {whence}")
        if self._pos < 0:
            raise OSError(f"negative seek position in s3://{self._bucket}/{self._key}")
        return self._pos

    def read(self, size: int = -1) -> bytes:
        start = self._pos
        end = self.size if size is None or size < 0 else min(self.size, start + size)
        if start >= end:
            return b""
        if start >= self._tail_start:
            data = self._tail[start - self._tail_start:end - self._tail_start]
        elif end > self._tail_start:  # straddles the cached tail: fetch only the part before it
            head = self._get(start, self._tail_start)
            data = head + self._tail[:end - self._tail_start]
        else:
            data = self._get(start, end)
        self._pos = start + len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _get(self, start: int, end: int) -> bytes:
        with s3_errors(f"{self._bucket}/{self._key}"):
            response = self._client.get_object(Bucket=self._bucket, Key=self._key, Range=f"bytes={start}-{end - 1}")
            data: bytes = response["Body"].read()
        if len(data) != end - start:
            raise OSError(f"short read of s3://{self._bucket}/{self._key} [{start}, {end}): {len(data)} bytes")
        return data


class S3OutputStream(io.RawIOBase):
    """Write-only stream of a new object: one PUT when it stays below `part_size`, else a multipart upload."""

    def __init__(self, client: Any, bucket: str, key: str, *, part_size: int) -> None:
        super().__init__()
        self._client = client
        self._bucket = bucket
        self._key = key
        self._part_size = part_size
        self._buffer = bytearray()
        self._written = 0
        self._upload_id: str | None = None
        self._parts: list[dict[str, Any]] = []

    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._written

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError(f"write to closed stream s3://{self._bucket}/{self._key}")
        view = memoryview(data).cast("B")
        self._buffer += view
        self._written += len(view)
        while len(self._buffer) >= self._part_size:
            self._upload_part(bytes(self._buffer[:self._part_size]))
            del self._buffer[:self._part_size]
        return len(view)

    def _upload_part(self, chunk: bytes) -> None:
        with s3_errors(f"{self._bucket}/{self._key}"):
            self._send_part(chunk)

    def _send_part(self, chunk: bytes) -> None:
        if self._upload_id is None:
            self._upload_id = self._client.create_multipart_upload(Bucket=self._bucket, Key=self._key)["UploadId"]
        number = len(self._parts) + 1
        response = self._client.upload_part(Bucket=self._bucket, Key=self._key, UploadId=self._upload_id,
                                            PartNumber=number, Body=chunk)
        self._parts.append({"ETag": response["ETag"], "PartNumber": number})

    def close(self) -> None:
        if self.closed:
            return
        try:
            with s3_errors(f"{self._bucket}/{self._key}"):
                if self._upload_id is None:
                    self._client.put_object(Bucket=self._bucket, Key=self._key, Body=bytes(self._buffer))
                else:
                    if self._buffer or not self._parts:
                        self._send_part(bytes(self._buffer))
                    self._client.complete_multipart_upload(Bucket=self._bucket, Key=self._key,
                                                           UploadId=self._upload_id,
                                                           MultipartUpload={"Parts": self._parts})
        finally:
            self._buffer.clear()
            super().close()
