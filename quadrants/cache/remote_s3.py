"""The remote cache on S3-compatible object storage (boto3, the `s3` extra: `pip install 'quadrants-fastcache[s3]'`).

URL `s3://bucket/prefix`. Everything else is boto3's standard configuration: credentials from the environment,
`~/.aws` or an instance role; the endpoint of an S3-compatible server (MinIO, Ceph, R2, ...) from
`AWS_ENDPOINT_URL` (or `AWS_ENDPOINT_URL_S3`); the region from `AWS_DEFAULT_REGION`. Connecting and each read
may take `timeout` seconds, with no retries: a remote that fails is turned off by the caller. S3 has no
multi-key read, so several keys are read by parallel GETs (and written by parallel PUTs). An entry is one
object, `<prefix>/qd/v<format>/<kind>/<key>`; bound the bucket with a lifecycle rule.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from quadrants.cache.remote_store import RemoteError

PARALLEL = 16  # concurrent requests of one get_many / put_many


class S3Store:
    def __init__(self, url: str, timeout: float) -> None:
        try:
            import boto3
            import botocore.config
            import botocore.exceptions
        except ImportError:
            raise RemoteError("the S3 client is not installed: pip install 'quadrants-fastcache[s3]'") from None
        parts = urlsplit(url)
        if not parts.netloc:
            raise RemoteError(f"bad S3 URL {url!r}: expected s3://bucket/prefix")
        self.bucket = parts.netloc
        self.prefix = parts.path.strip("/")
        self._errors = (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, OSError)
        self._client_error = botocore.exceptions.ClientError
        config = botocore.config.Config(connect_timeout=timeout, read_timeout=timeout, max_pool_connections=PARALLEL,
                                        retries={"total_max_attempts": 1})  # fmt: skip
        try:
            self.client = boto3.session.Session().client("s3", config=config)
        except self._errors as e:
            raise RemoteError(f"S3: {type(e).__name__}: {e}") from None

    def _name(self, key: str) -> str:
        path = key.replace(":", "/")  # qd:v3:kind:key -> qd/v3/kind/key
        return f"{self.prefix}/{path}" if self.prefix else path

    def _missing(self, e: BaseException) -> bool:
        if not isinstance(e, self._client_error):
            return False
        code = e.response.get("Error", {}).get("Code", "")  # type: ignore[attr-defined]
        return code in ("NoSuchKey", "404", "NotFound")

    def _get(self, key: str) -> bytes | None:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._name(key))["Body"].read()
        except self._errors as e:
            if self._missing(e):
                return None
            raise RemoteError(f"S3 GET: {type(e).__name__}: {e}") from None

    def _put(self, item: tuple[str, bytes]) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._name(item[0]), Body=item[1])
        except self._errors as e:
            raise RemoteError(f"S3 PUT: {type(e).__name__}: {e}") from None

    def _parallel(self, fn: Any, items: list[Any]) -> list[Any]:
        """`fn` of each item, on up to PARALLEL threads (plain threads: pushes run at exit, when
        concurrent.futures refuses new work); the first RemoteError is raised."""
        if len(items) <= 1:
            return [fn(x) for x in items]
        import threading

        results: list[Any] = [None] * len(items)
        errors: list[BaseException] = []

        def work(start: int) -> None:
            for i in range(start, len(items), PARALLEL):
                if errors:
                    return
                try:
                    results[i] = fn(items[i])
                except BaseException as e:  # handed to the calling thread
                    errors.append(e)
                    return

        threads = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(min(PARALLEL, len(items)))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        return {k: v for k, v in zip(keys, self._parallel(self._get, keys)) if v is not None}

    def put_many(self, items: dict[str, bytes]) -> None:
        self._parallel(self._put, list(items.items()))

    def contains(self, key: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self._name(key))
            return True
        except self._errors as e:
            if self._missing(e):
                return False
            raise RemoteError(f"S3 HEAD: {type(e).__name__}: {e}") from None
