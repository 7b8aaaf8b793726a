"""Where an s3:// warehouse lives and how to reach it: catalog options first, then the usual AWS variables.

    FileSystemCatalog("s3://bucket/warehouse")                           # AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...
    FileSystemCatalog("s3://bucket/warehouse", options={"s3.endpoint": "http://127.0.0.1:8333",
                                                        "s3.access-key": "...", "s3.secret-key": "..."})

Keys without a value fall back to the environment (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`,
`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_DEFAULT_REGION`), then to botocore's own chain
(profiles, instance metadata) for credentials. Unknown `s3.*` keys are refused with the closest known key.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from table_format.errors import OptionError

ENDPOINT = "s3.endpoint"
ACCESS_KEY = "s3.access-key"
SECRET_KEY = "s3.secret-key"
SESSION_TOKEN = "s3.session-token"
REGION = "s3.region"
PATH_STYLE = "s3.path-style-access"
CONDITIONAL_PUT = "s3.conditional-put"
MAX_CONNECTIONS = "s3.max-connections"
RETRIES = "s3.max-attempts"
CACHE_BYTES = "s3.metadata-cache-bytes"
# Paimon's (Hadoop S3A-style) spellings, accepted for the same settings
ALIASES = {"s3.path.style.access": PATH_STYLE, "s3.access.key": ACCESS_KEY, "s3.secret.key": SECRET_KEY}
KNOWN = (ENDPOINT, ACCESS_KEY, SECRET_KEY, SESSION_TOKEN, REGION, PATH_STYLE, CONDITIONAL_PUT, MAX_CONNECTIONS,
         RETRIES, CACHE_BYTES)
DEFAULT_REGION = "us-east-1"


@dataclass(frozen=True, slots=True)
class S3Config:
    """Resolved settings of one S3 client (picklable: executors rebuild their client from it)."""

    endpoint_url: str | None = None
    region: str = DEFAULT_REGION
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    path_style: bool = True
    conditional_put: bool = True
    max_connections: int = 32
    max_attempts: int = 4
    metadata_cache_bytes: int = 64 << 20

    @classmethod
    def resolve(cls, options: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None) -> S3Config:
        """Settings from catalog `options` (keys `s3.*`), then the environment; OptionError names a bad key."""
        env = os.environ if env is None else env
        opts = _normalise(options or {})

        def pick(key: str, *env_names: str) -> str | None:
            if opts.get(key):
                return opts[key]
            return next((env[n] for n in env_names if env.get(n)), None)

        endpoint = pick(ENDPOINT, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
        if endpoint is not None and "://" not in endpoint:
            endpoint = f"https://{endpoint}"
        return cls(
            endpoint_url=endpoint,
            region=pick(REGION, "AWS_REGION", "AWS_DEFAULT_REGION") or DEFAULT_REGION,
            access_key_id=pick(ACCESS_KEY, "AWS_ACCESS_KEY_ID"),
            secret_access_key=pick(SECRET_KEY, "AWS_SECRET_ACCESS_KEY"),
            session_token=pick(SESSION_TOKEN, "AWS_SESSION_TOKEN"),
            # custom endpoints (MinIO, SeaweedFS, Ceph) usually serve bucket/key paths, AWS prefers virtual hosts
            path_style=_bool(opts, PATH_STYLE, default=endpoint is not None),
            conditional_put=_bool(opts, CONDITIONAL_PUT, default=True),
            max_connections=_int(opts, MAX_CONNECTIONS, 32, minimum=1),
            max_attempts=_int(opts, RETRIES, 4, minimum=1),
            metadata_cache_bytes=_int(opts, CACHE_BYTES, 64 << 20, minimum=0),
        )

    def as_options(self) -> dict[str, str]:
        """These settings as catalog options (every resolved key, secrets included: for the processes that must
        reopen the store, e.g. Spark executors, never for logs); `resolve` of them gives these settings back."""
        values = {
            ENDPOINT: self.endpoint_url, REGION: self.region, ACCESS_KEY: self.access_key_id,
            SECRET_KEY: self.secret_access_key, SESSION_TOKEN: self.session_token,
            PATH_STYLE: str(self.path_style).lower(), CONDITIONAL_PUT: str(self.conditional_put).lower(),
            MAX_CONNECTIONS: str(self.max_connections), RETRIES: str(self.max_attempts),
            CACHE_BYTES: str(self.metadata_cache_bytes),
        }
        return {key: value for key, value in values.items() if value is not None}


def _normalise(options: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw_key, value in options.items():
        key = ALIASES.get(str(raw_key), str(raw_key))
        if key not in KNOWN:
            close = difflib.get_close_matches(key, KNOWN, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(KNOWN)}"
            raise OptionError(f"unknown catalog option {raw_key!r}{hint}")
        out[key] = str(value)
    return out


def _bool(opts: Mapping[str, str], key: str, *, default: bool) -> bool:
    value = opts.get(key)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise OptionError(f"catalog option {key!r} must be true or false, got {value!r}")


def _int(opts: Mapping[str, str], key: str, default: int, *, minimum: int) -> int:
    value = opts.get(key)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"catalog option {key!r} must be an integer, got {value!r}") from None
    if number < minimum:
        raise OptionError(f"catalog option {key!r} must be at least {minimum}, got {number}")
    return number
