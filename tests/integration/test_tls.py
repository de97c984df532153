"""HTTPS (the ``--ssl-*`` options): the gateway serves TLS with the configured certificate, asks for
client certificates when told to, and resumes sessions only with ``--ssl-resumption``.

Certificates come from a throwaway certificate authority (``trustme``); the clients are httpx and, for
session resumption, the ``ssl`` module itself; ``openssl s_client -status`` reads a stapled OCSP
response, which the authority signs in the test (``tests/support/ocsp.py``).
"""

from __future__ import annotations

import socket
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import trustme
from cryptography import x509

from tests.support.cluster import RunningCluster
from tests.support.ocsp import ocsp_response


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def files(authority: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("tls")
    server = authority.issue_cert("127.0.0.1", "localhost")
    paths = {"cert": folder / "cert.pem", "key": folder / "key.pem", "ca": folder / "ca.pem"}
    server.cert_chain_pems[0].write_to_path(str(paths["cert"]))
    for extra in server.cert_chain_pems[1:]:
        extra.write_to_path(str(paths["cert"]), append=True)
    server.private_key_pem.write_to_path(str(paths["key"]))
    authority.cert_pem.write_to_path(str(paths["ca"]))
    return paths


def client_context(authority: trustme.CA, with_certificate: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    if with_certificate:
        authority.issue_cert("client@example.com").configure_cert(context)
    return context


def serve(files: dict[str, Path], tls: ssl.SSLContext, *options: str) -> RunningCluster:
    certificate = ("--ssl-cert-path", str(files["cert"]), "--ssl-key-path", str(files["key"]))
    return RunningCluster(*certificate, *options, shards=1, tls=tls)


@pytest.fixture(scope="module")
def plain_tls(authority: trustme.CA, files: dict[str, Path]) -> Iterator[RunningCluster]:
    with serve(files, client_context(authority)) as cluster:
        yield cluster


def test_the_api_answers_over_https_only(authority: trustme.CA, plain_tls: RunningCluster) -> None:
    with httpx.Client(base_url=plain_tls.url, verify=client_context(authority)) as client:
        assert client.get("/health").json() == {"status": "available"}
        created = client.post("/indexes", json={"uid": "books"})
        assert created.status_code == 202, created.text
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{plain_tls.port}/health", timeout=5)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(f"{plain_tls.url}/health", timeout=5, verify=ssl.create_default_context())


def _resumed(port: int, context: ssl.SSLContext) -> bool:
    """Whether a second connection resumes the first one's session."""
    session = None
    for _ in range(2):
        with (
            socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname="127.0.0.1", session=session) as tls,
        ):
            tls.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            while tls.recv(4096):  # TLS 1.3 tickets arrive after the handshake, with the data
                pass
            reused, session = tls.session_reused, tls.session
    return reused


def test_sessions_are_not_resumed_by_default(authority: trustme.CA, plain_tls: RunningCluster) -> None:
    assert not _resumed(plain_tls.port, client_context(authority))


def test_client_certificates_when_required(authority: trustme.CA, files: dict[str, Path]) -> None:
    with_certificate = client_context(authority, with_certificate=True)
    options = ("--ssl-auth-path", str(files["ca"]), "--ssl-require-auth", "--ssl-resumption")
    with serve(files, with_certificate, *options) as cluster:
        assert httpx.get(f"{cluster.url}/health", verify=with_certificate).status_code == 200
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{cluster.url}/health", verify=client_context(authority), timeout=5)
        stranger = ssl.create_default_context()
        authority.configure_trust(stranger)
        trustme.CA().issue_cert("stranger@example.com").configure_cert(stranger)
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{cluster.url}/health", verify=stranger, timeout=5)
        assert _resumed(cluster.port, with_certificate), "--ssl-resumption resumes sessions"


def test_client_certificates_are_optional_without_require_auth(
    authority: trustme.CA, files: dict[str, Path]
) -> None:
    anonymous = client_context(authority)
    with serve(files, anonymous, "--ssl-auth-path", str(files["ca"])) as cluster:
        assert httpx.get(f"{cluster.url}/health", verify=anonymous).status_code == 200
        signed = client_context(authority, with_certificate=True)
        assert httpx.get(f"{cluster.url}/health", verify=signed).status_code == 200


def _status_request(port: int, version: str) -> str:
    """What ``openssl s_client -status`` prints of the handshake's certificate status."""
    done = subprocess.run(
        ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-status", version],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout


def test_the_ocsp_response_is_stapled(
    authority: trustme.CA, files: dict[str, Path], plain_tls: RunningCluster, tmp_path: Path
) -> None:
    certificate = files["cert"].read_bytes()
    (tmp_path / "ocsp.der").write_bytes(ocsp_response(authority, certificate))
    serial = x509.load_pem_x509_certificate(certificate).serial_number
    for version in ("-tls1_2", "-tls1_3"):
        assert "OCSP response: no response sent" in _status_request(plain_tls.port, version)
    tls = client_context(authority)
    with serve(files, tls, "--ssl-ocsp-path", str(tmp_path / "ocsp.der")) as stapled:
        for version in ("-tls1_2", "-tls1_3"):
            shown = _status_request(stapled.port, version)
            assert "OCSP Response Status: successful (0x0)" in shown, shown
            assert "Cert Status: good" in shown and f"Serial Number: {serial:X}" in shown, shown
        assert httpx.get(f"{stapled.url}/health", verify=tls).json() == {"status": "available"}
        assert not any("ssl_ocsp_path" in line for line in stapled.output)  # no "ignored" warning

        # Renewed in place (written aside, then renamed, as a renewal job does): stapled at once.
        first = _next_update(_status_request(stapled.port, "-tls1_3"))
        (tmp_path / "renewed.der").write_bytes(ocsp_response(authority, certificate, days=30))
        (tmp_path / "renewed.der").replace(tmp_path / "ocsp.der")
        renewed = _next_update(_status_request(stapled.port, "-tls1_3"))
        assert renewed != first, (first, renewed)
        # A broken file is not stapled: the last good response still is.
        (tmp_path / "ocsp.der").write_bytes(b"not an OCSP response")
        shown = _status_request(stapled.port, "-tls1_2")
        assert "Cert Status: good" in shown and _next_update(shown) == renewed, shown


def _next_update(shown: str) -> str:
    (line,) = [line.strip() for line in shown.splitlines() if "Next Update:" in line]
    return line
