"""Snapshot uploads to a real S3-compatible server on loopback (moto's server, S3 and STS).

The objects are downloaded back with boto3 and compared byte for byte (after zstd decompression when a
level is set). A refusing part goes through a small forwarding proxy in front of the server, which
answers 403 to one part number and passes everything else on, so the abort is checked against the
server's own list of multipart uploads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import boto3
import httpx
import meilisearch
import pytest
import zstandard
from moto.server import ThreadedMotoServer

from scheduler.objstore import MIN_PART_SIZE, ObjectStorage, ObjectStorageError, part_size_for, upload_file
from tests.support.cluster import RunningCluster, free_port

BUCKET = "objstore-snapshots"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    previous = os.environ.get("AWS_ENDPOINT_URL_STS")
    os.environ["AWS_ENDPOINT_URL_STS"] = url  # botocore's own override, read when the STS client is made
    admin(url).create_bucket(Bucket=BUCKET)
    yield url
    if previous is None:
        del os.environ["AWS_ENDPOINT_URL_STS"]
    else:
        os.environ["AWS_ENDPOINT_URL_STS"] = previous
    server.stop()


def admin(url: str) -> Any:
    return boto3.client(
        "s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="a"
    )


def storage(url: str, **changes: object) -> ObjectStorage:
    base = ObjectStorage(
        url=url,
        region="us-east-1",
        bucket=BUCKET,
        prefix="/backups/nightly/",
        access_key="ak",
        secret_key="sk",
        role_arn=None,
        web_identity_token_file=None,
        max_in_flight_parts=2,
        compression_level=0,
        signature_duration_seconds=600,
        part_size=MIN_PART_SIZE,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def snapshot_file(tmp_path: Path, size: int) -> Path:
    """Half random (incompressible), half repetitive: several parts either way."""
    path = tmp_path / "data.ms.snapshot"
    path.write_bytes(os.urandom(size // 2) + b"sift snapshot " * (size // 28))
    return path


def downloaded(url: str, key: str) -> bytes:
    body: bytes = admin(url).get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return body


def open_uploads(url: str) -> list[dict[str, Any]]:
    uploads: list[dict[str, Any]] = admin(url).list_multipart_uploads(Bucket=BUCKET).get("Uploads", [])
    return uploads


def test_static_keys_upload_in_parts_and_download_back(s3_url: str, tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, 12 * 1024**2)
    key = upload_file(storage(s3_url), path, "data.ms.snapshot")
    assert key == "backups/nightly/data.ms.snapshot"
    assert downloaded(s3_url, key) == path.read_bytes()
    parts = admin(s3_url).head_object(Bucket=BUCKET, Key=key, PartNumber=1)["PartsCount"]
    assert parts == 3  # 12 MiB in 5 MiB parts
    assert open_uploads(s3_url) == []


def test_web_identity_upload_is_compressed_at_the_level(s3_url: str, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzaWZ0In0.c2lnbmF0dXJl")
    path = snapshot_file(tmp_path, 16 * 1024**2)
    web = storage(
        s3_url,
        access_key=None,
        secret_key=None,
        role_arn="arn:aws:iam::123456789012:role/sift-snapshots",
        web_identity_token_file=token,
        compression_level=3,
        prefix=None,
    )
    key = upload_file(web, path, "web.snapshot")
    assert key == "web.snapshot"
    stored = downloaded(s3_url, key)
    assert len(stored) < path.stat().st_size * 0.6
    assert zstandard.ZstdDecompressor().stream_reader(stored).read() == path.read_bytes()
    assert admin(s3_url).head_object(Bucket=BUCKET, Key=key)["ContentEncoding"] == "zstd"


def test_a_missing_web_identity_token_fails_clearly(s3_url: str, tmp_path: Path) -> None:
    web = storage(
        s3_url, access_key=None, secret_key=None, role_arn="arn:aws:iam::1:role/r",
        web_identity_token_file=tmp_path / "absent",
    )
    with pytest.raises(ObjectStorageError, match="Could not start uploading the snapshot to `backups"):
        upload_file(web, snapshot_file(tmp_path, 1024), "x.snapshot")


class _RefusingProxy(BaseHTTPRequestHandler):
    """Forwards to the S3 server, except part ``refused_part`` of any upload: 403."""

    target = ""
    refused_part = "2"
    seen: ClassVar[list[tuple[str, str]]] = []

    def _forward(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        part = query.get("partNumber", [""])[0]
        self.seen.append((self.command, part or ("abort" if "uploadId" in query else "")))
        if self.command == "PUT" and part == self.refused_part:
            reply = b"<Error><Code>AccessDenied</Code><Message>refused by the test</Message></Error>"
            self.send_response(403)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        answer = httpx.request(self.command, self.target + self.path, headers=headers, content=body)
        self.send_response(answer.status_code)
        for name, value in answer.headers.items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_refused_part_aborts_the_upload_and_leaves_no_part(s3_url: str, tmp_path: Path) -> None:
    _RefusingProxy.target = s3_url
    _RefusingProxy.seen = []
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _RefusingProxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        proxied = storage(f"http://127.0.0.1:{proxy.server_port}", max_in_flight_parts=1)
        with pytest.raises(ObjectStorageError) as failure:
            upload_file(proxied, snapshot_file(tmp_path, 16 * 1024**2), "refused.snapshot")
    finally:
        proxy.shutdown()
    message = str(failure.value)
    assert message.startswith("Uploading the snapshot to `backups/nightly/refused.snapshot` in bucket")
    assert "upload aborted: part 2 was refused with HTTP 403" in message
    assert ("PUT", "1") in _RefusingProxy.seen  # a part was stored before the failure
    assert ("PUT", "3") not in _RefusingProxy.seen  # nothing sent after it
    assert ("DELETE", "abort") in _RefusingProxy.seen
    assert open_uploads(s3_url) == []
    objects = admin(s3_url).list_objects_v2(Bucket=BUCKET, Prefix="backups/nightly/refused").get("Contents")
    assert objects is None


def test_an_unknown_bucket_fails_before_any_part(s3_url: str, tmp_path: Path) -> None:
    refused = r"Could not start uploading .* bucket `absent`.*NoSuchBucket"
    with pytest.raises(ObjectStorageError, match=refused):
        upload_file(storage(s3_url, bucket="absent"), snapshot_file(tmp_path, 1024), "x.snapshot")


@pytest.mark.parametrize(
    ("file_size", "wanted", "expected"),
    [
        (10, 5 * 1024**2, 5 * 1024**2),
        (200 * 1024**3, 5 * 1024**2, 21 * 1024**2),  # 10,000 parts of 5 MiB hold 48.8 GiB
        (1024**3, 375 * 1024**2, 375 * 1024**2),
    ],
)
def test_part_size_keeps_within_ten_thousand_parts(file_size: int, wanted: int, expected: int) -> None:
    size = part_size_for(file_size, wanted)
    assert size == expected
    assert (file_size + file_size // 128) / size <= 10_000


def test_a_file_beyond_ten_thousand_largest_parts_is_refused() -> None:
    with pytest.raises(ObjectStorageError, match="cannot be uploaded in 10000 parts"):
        part_size_for(60 * 1024**4, 5 * 1024**2)


def objstore_options(s3_url: str, bucket: str, *credentials: str) -> tuple[str, ...]:
    return (
        *("--objstore-bucket-url", s3_url, "--objstore-bucket-region", "us-east-1"),
        *("--objstore-bucket-name", bucket, "--objstore-snapshot-prefix", "cluster/"),
        *credentials,
    )


def test_post_snapshots_uploads_the_snapshot_with_web_identity(s3_url: str, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzaWZ0In0.c2lnbmF0dXJl")
    options = objstore_options(
        s3_url,
        BUCKET,
        *("--experimental-objstore-role-arn", "arn:aws:iam::123456789012:role/sift"),
        *("--experimental-objstore-web-identity-token-file", str(token)),
        *("--experimental-objstore-compression-level", "1", "--snapshot-dir", str(tmp_path / "snapshots")),
    )
    with RunningCluster(*options, shards=1) as cluster:
        client = meilisearch.Client(cluster.url)
        added = client.index("objstore_movies").add_documents([{"id": 1, "title": "Carol"}])
        client.wait_for_task(added.task_uid, timeout_in_ms=60_000)
        task = client.wait_for_task(client.create_snapshot().task_uid, timeout_in_ms=60_000)
        assert task.status == "succeeded", task.error
    local = (tmp_path / "snapshots" / "data.ms.snapshot").read_bytes()
    stored = downloaded(s3_url, "cluster/data.ms.snapshot")
    assert zstandard.ZstdDecompressor().stream_reader(stored).read() == local


def test_a_failed_upload_fails_the_snapshot_task(s3_url: str, tmp_path: Path) -> None:
    options = objstore_options(
        s3_url, "absent", "--objstore-access-key", "ak", "--objstore-secret-key", "sk",
        "--snapshot-dir", str(tmp_path / "snapshots"),
    )
    with RunningCluster(*options, shards=1) as cluster:
        client = meilisearch.Client(cluster.url)
        task = client.wait_for_task(client.create_snapshot().task_uid, timeout_in_ms=60_000)
    assert task.status == "failed"
    assert task.error is not None
    assert (task.error["code"], task.error["type"]) == ("s_3_snapshot_server_error", "internal")
    assert task.error["message"].startswith(
        f"Could not start uploading the snapshot to `cluster/data.ms.snapshot` in bucket `absent` at {s3_url}"
    )
    assert "NoSuchBucket" in task.error["message"]
    assert open_uploads(s3_url) == []
