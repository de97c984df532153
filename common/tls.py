"""The gateway's TLS settings (`--ssl-*` options) as an ``ssl.SSLContext``.

Built once at launch to refuse unusable files with a clear message, then again by the gateway, which
serves HTTPS with it. Session resumption and tickets are off unless asked for: TLS 1.3 resumes through
tickets only, so ``num_tickets = 0`` turns resumption off, and ``OP_NO_TICKET`` leaves resumption to
the server's session cache instead of stateless tickets. Python's ``ssl`` has no switch for TLS 1.2's
session-id cache nor for OCSP stapling (``--ssl-ocsp-path`` is accepted with a launch warning).
"""

from __future__ import annotations

import ssl

from common.config.model import Config, ConfigError


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
    return context


def _reason(error: OSError) -> str:
    return str(error.strerror or error)
