"""OCSP responses for test certificates, signed by their ``trustme`` authority (``cryptography``'s
builder), as a CA's responder would issue them."""

from __future__ import annotations

import datetime

import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp


def ocsp_response(authority: trustme.CA, certificate_pem: bytes, days: int = 1) -> bytes:
    """A DER response saying ``certificate_pem`` is good for ``days``, signed by ``authority``."""
    issuer = x509.load_pem_x509_certificate(authority.cert_pem.bytes())
    key = serialization.load_pem_private_key(authority.private_key_pem.bytes(), None)
    now = datetime.datetime.now(datetime.UTC)
    response = (
        ocsp.OCSPResponseBuilder()
        .add_response(
            cert=x509.load_pem_x509_certificate(certificate_pem),
            issuer=issuer,
            algorithm=hashes.SHA256(),
            cert_status=ocsp.OCSPCertStatus.GOOD,
            this_update=now,
            next_update=now + datetime.timedelta(days=days),
            revocation_time=None,
            revocation_reason=None,
        )
        .responder_id(ocsp.OCSPResponderEncoding.HASH, issuer)
        .sign(key, hashes.SHA256())  # type: ignore[arg-type]
    )
    return response.public_bytes(serialization.Encoding.DER)


def unauthorized_response() -> bytes:
    """A response without a certificate status (a responder's refusal)."""
    return ocsp.OCSPResponseBuilder.build_unsuccessful(ocsp.OCSPResponseStatus.UNAUTHORIZED).public_bytes(
        serialization.Encoding.DER
    )
