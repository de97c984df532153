"""The gateway's TLS settings (`--ssl-*` options) as an ``ssl.SSLContext``.

Built once at launch to refuse unusable files with a clear message, then again by the gateway, which
serves HTTPS with it. Session resumption and tickets are off unless asked for: TLS 1.3 resumes through
tickets only, so ``num_tickets = 0`` turns resumption off, and ``OP_NO_TICKET`` leaves resumption to
the server's session cache instead of stateless tickets. Python's ``ssl`` has no switch for TLS 1.2's
session-id cache. ``--ssl-ocsp-path``'s response is checked here (a successful response about the
configured certificate) and stapled by ``common/ocsp_stapling.py``. Responses expire (a CA's last a
few days), so the file is watched: a handshake that asks for the status first compares the file's
identity (inode, size, modification time) with the one loaded, and a changed file is read and checked
again. A renewed response is then stapled without a restart; one that fails the checks is logged and
the previous response kept (a response is not stapled half-written or about another certificate).
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.x509 import ocsp

from common.config.model import Config, ConfigError
from common.logging import get_logger
from common.ocsp_stapling import StaplingUnavailable, staple

log = get_logger(__name__)


def server_context(config: Config) -> ssl.SSLContext | None:
    """None when no certificate is configured (plain HTTP)."""
    if config.ssl_cert_path is None or config.ssl_key_path is None:
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(config.ssl_cert_path, config.ssl_key_path)
    except OSError as error:  # ssl.SSLError included
        raise ConfigError(
            f"Cannot use the TLS certificate `{config.ssl_cert_path}` with the key `{config.ssl_key_path}`:"
            f" {_reason(error)}."
        ) from None
    if config.ssl_auth_path is not None:
        try:
            context.load_verify_locations(cafile=config.ssl_auth_path)
        except OSError as error:  # ssl.SSLError included
            raise ConfigError(
                f"Cannot use `{config.ssl_auth_path}` as the certificate authorities of clients:"
                f" {_reason(error)}."
            ) from None
        context.verify_mode = ssl.CERT_REQUIRED if config.ssl_require_auth else ssl.CERT_OPTIONAL
    if not config.ssl_tickets:
        context.options |= ssl.OP_NO_TICKET
    if not config.ssl_resumption:
        context.num_tickets = 0
    if config.ssl_ocsp_path is not None:
        try:
            staple(context, _OcspFile(config.ssl_ocsp_path, config.ssl_cert_path).current)
        except StaplingUnavailable as error:
            raise ConfigError(f"Cannot staple `{config.ssl_ocsp_path}`: {error}.") from None
    return context


class _OcspFile:
    """The response of ``--ssl-ocsp-path`` as the file now holds it, re-read when the file changed."""

    def __init__(self, path: Path, cert_path: Path) -> None:
        self.path = path
        self.cert_path = cert_path
        self._identity = _identity(path)
        self.der = _ocsp_response(path, cert_path)

    def current(self) -> bytes:
        identity = _identity(self.path)
        if identity is not None and identity != self._identity:
            self._identity = identity
            try:
                self.der = _ocsp_response(self.path, self.cert_path)
            except (ConfigError, OSError, ValueError) as error:  # never out of OpenSSL's callback
                log.warning("OCSP response not renewed, the previous one is still stapled", reason=str(error))
            else:
                log.info("OCSP response renewed", path=str(self.path))
        return self.der


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None  # being replaced: the response held is still the last good one
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _ocsp_response(path: Path, cert_path: Path) -> bytes:
    """The DER response of ``--ssl-ocsp-path``, once it is known to give the status of the first
    certificate of ``--ssl-cert-path``: a client would reject any other."""
    try:
        der = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"Cannot read the OCSP response `{path}`: {_reason(error)}.") from None
    try:
        response = ocsp.load_der_ocsp_response(der)
    except ValueError:
        raise ConfigError(f"`{path}` is not a DER-encoded OCSP response.") from None
    if response.response_status is not ocsp.OCSPResponseStatus.SUCCESSFUL:
        raise ConfigError(
            f"The OCSP response `{path}` holds no certificate status (its status is"
            f" `{response.response_status.name.lower()}`)."
        )
    certificate = x509.load_pem_x509_certificates(cert_path.read_bytes())[0]
    if response.serial_number != certificate.serial_number:
        raise ConfigError(
            f"The OCSP response `{path}` is about the certificate of serial number"
            f" {response.serial_number:x}, not `{cert_path}` ({certificate.serial_number:x})."
        )
    return der


def _reason(error: OSError) -> str:
    return str(error.strerror or error)
