"""Snapshots uploaded to object storage (S3 or compatible) as one multipart upload each.

The file is read once, through a zstd stream when a compression level is set, and cut into parts
sent concurrently: at most ``--experimental-objstore-max-in-flight-parts`` are held in memory and in
flight at once. Each part goes out as a presigned ``UploadPart`` request whose signature lives
``--experimental-objstore-signature-duration-seconds``, so a long upload never depends on
credentials refreshed mid-part. Credentials are the static keys, or a role assumed with the web
identity token (STS ``AssumeRoleWithWebIdentity``, refreshed by botocore as they near expiry; the
STS endpoint is botocore's, ``AWS_ENDPOINT_URL_STS`` overriding it). Any failure aborts the upload,
so no orphan part stays billed in the bucket, and raises :class:`ObjectStorageError`.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import zstandard
from botocore.exceptions import BotoCoreError, ClientError

from common.config import Config
from common.logging import get_logger

# S3's multipart limits: every part but the last at least 5 MiB, at most 5 GiB, at most 10,000 parts.
MIN_PART_SIZE = 5 * 1024**2
MAX_PART_SIZE = 5 * 1024**3
MAX_PARTS = 10_000
_PART_ATTEMPTS = 3
_READ_SIZE = 1024**2

log = get_logger(__name__)


class ObjectStorageError(Exception):
    """An upload that did not complete; the message says which object and why."""


@dataclass(frozen=True)
class ObjectStorage:
    """Where and how snapshots are uploaded, from the ``--objstore-*`` options."""

    url: str
    region: str
    bucket: str
    prefix: str | None
    access_key: str | None
    secret_key: str | None
    role_arn: str | None
    web_identity_token_file: Path | None
    max_in_flight_parts: int
    compression_level: int
    signature_duration_seconds: int
    part_size: int

    @classmethod
    def from_config(cls, config: Config) -> ObjectStorage | None:
        """None without a bucket; the launch rules have checked that the rest goes with it."""
        if config.objstore_bucket_url is None:
            return None
        assert config.objstore_bucket_region is not None and config.objstore_bucket_name is not None
        return cls(
            url=config.objstore_bucket_url,
            region=config.objstore_bucket_region,
            bucket=config.objstore_bucket_name,
            prefix=config.objstore_snapshot_prefix,
            access_key=config.objstore_access_key,
            secret_key=config.objstore_secret_key,
            role_arn=config.experimental_objstore_role_arn,
            web_identity_token_file=config.experimental_objstore_web_identity_token_file,
            max_in_flight_parts=config.experimental_objstore_max_in_flight_parts,
            compression_level=config.experimental_objstore_compression_level,
            signature_duration_seconds=config.experimental_objstore_signature_duration_seconds,
            part_size=config.experimental_objstore_multipart_part_size,
        )

    def key_for(self, name: str) -> str:
        """``<prefix>/<name>``, the prefix's surrounding slashes dropped."""
        prefix = (self.prefix or "").strip("/")
        return f"{prefix}/{name}" if prefix else name

    def client(self) -> Any:
        # boto3 takes ~0.4 s to import: paid by the first upload, not by every scheduler start.
        from scheduler.objstore_client import s3_client

        return s3_client(self, _PART_ATTEMPTS)


def snapshot_uploader(storage: ObjectStorage) -> Callable[[Path], Awaitable[None]]:
    """``Snapshots.on_snapshot``: the finished file uploaded as ``<prefix>/<file name>``, off the loop."""

    async def upload(path: Path) -> None:
        key = await asyncio.to_thread(upload_file, storage, path, path.name)
        log.info("snapshot uploaded", bucket=storage.bucket, key=key)

    return upload


def part_size_for(file_size: int, wanted: int) -> int:
    """The option's part size, raised (to whole MiB) when the file would need more than 10,000 parts;
    a compressed stream is bounded by zstd's worst case (incompressible data grows by ~1/256)."""
    bound = file_size + file_size // 128 + _READ_SIZE
    size = max(wanted, MIN_PART_SIZE, math.ceil(math.ceil(bound / MAX_PARTS) / _READ_SIZE) * _READ_SIZE)
    if size > MAX_PART_SIZE:
        raise ObjectStorageError(
            f"A file of {file_size} bytes cannot be uploaded in {MAX_PARTS} parts of at most "
            f"{MAX_PART_SIZE} bytes."
        )
    return size


def upload_file(storage: ObjectStorage, path: Path, name: str) -> str:
    """Upload ``path`` as ``<prefix>/<name>``; return the key. Raises :class:`ObjectStorageError`
    after aborting the multipart upload when anything fails."""
    key = storage.key_for(name)
    where = f"`{key}` in bucket `{storage.bucket}` at {storage.url}"
    try:
        client = storage.client()
        extra = {"ContentEncoding": "zstd"} if storage.compression_level else {}
        upload_id = client.create_multipart_upload(Bucket=storage.bucket, Key=key, **extra)["UploadId"]
    except (BotoCoreError, ClientError, OSError) as error:
        raise ObjectStorageError(f"Could not start uploading the snapshot to {where}: {error}") from error
    try:
        part_size = part_size_for(path.stat().st_size, storage.part_size)
        with path.open("rb") as file:
            parts = _send_parts(storage, client, key, upload_id, _chunks(file, storage, part_size))
        client.complete_multipart_upload(
            Bucket=storage.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}
        )
    except Exception as error:
        _abort(client, storage, key, upload_id)
        reason = error if isinstance(error, ObjectStorageError) else f"{type(error).__name__}: {error}"
        raise ObjectStorageError(
            f"Uploading the snapshot to {where} failed, upload aborted: {reason}"
        ) from error
    return key


def _chunks(file: IO[bytes], storage: ObjectStorage, part_size: int) -> Iterator[bytes]:
    """The parts' bytes in order: the file, or its zstd stream, cut every ``part_size`` bytes."""
    source: IO[bytes] = file
    if storage.compression_level:
        compressor = zstandard.ZstdCompressor(level=storage.compression_level)
        source = compressor.stream_reader(file, read_size=_READ_SIZE)  # type: ignore[assignment]
    first = True
    while True:
        chunk = bytearray()
        while len(chunk) < part_size:
            data = source.read(min(_READ_SIZE * 8, part_size - len(chunk)))
            if not data:
                break
            chunk += data
        if not chunk and not first:
            return
        first = False
        yield bytes(chunk)
        if len(chunk) < part_size:
            return


def _send_parts(
    storage: ObjectStorage, client: Any, key: str, upload_id: str, chunks: Iterator[bytes]
) -> list[dict[str, object]]:
    """Send the parts, at most ``max_in_flight_parts`` read and unsent at once; stop at the first failure."""
    slots = threading.BoundedSemaphore(storage.max_in_flight_parts)
    failed = threading.Event()
    futures: list[Future[dict[str, object]]] = []
    with (
        httpx.Client(timeout=httpx.Timeout(60.0, write=None)) as http,
        ThreadPoolExecutor(storage.max_in_flight_parts, thread_name_prefix="objstore") as pool,
    ):

        def release(future: Future[dict[str, object]]) -> None:
            slots.release()
            if future.exception() is not None:
                failed.set()

        number = 0
        while True:
            slots.acquire()  # before reading the next part, so at most the bound is held in memory
            chunk = next(chunks, None) if not failed.is_set() else None
            if chunk is None:
                slots.release()
                break
            number += 1
            presigned = client.generate_presigned_url(
                "upload_part",
                Params={"Bucket": storage.bucket, "Key": key, "UploadId": upload_id, "PartNumber": number},
                ExpiresIn=storage.signature_duration_seconds,
            )
            future = pool.submit(_put_part, http, presigned, number, chunk)
            future.add_done_callback(release)
            futures.append(future)
        return [future.result() for future in futures]


def _put_part(http: httpx.Client, url: str, number: int, data: bytes) -> dict[str, object]:
    """One part, retried on connection errors and 5xx answers."""
    for attempt in range(1, _PART_ATTEMPTS + 1):
        try:
            response = http.put(url, content=data)
        except httpx.TransportError as error:
            if attempt == _PART_ATTEMPTS:
                raise ObjectStorageError(f"part {number} could not be sent: {error}") from error
            continue
        if response.status_code == 200:
            return {"PartNumber": number, "ETag": response.headers["ETag"]}
        if response.status_code < 500 or attempt == _PART_ATTEMPTS:
            raise ObjectStorageError(
                f"part {number} was refused with HTTP {response.status_code}: {response.text[:300]}"
            )
    raise AssertionError("unreachable")


def _abort(client: Any, storage: ObjectStorage, key: str, upload_id: str) -> None:
    try:
        client.abort_multipart_upload(Bucket=storage.bucket, Key=key, UploadId=upload_id)
    except (BotoCoreError, ClientError) as error:
        log.error("could not abort a failed multipart upload", key=key, upload_id=upload_id, error=str(error))

