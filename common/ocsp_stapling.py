"""OCSP stapling (``--ssl-ocsp-path``): the current DER response sent in every TLS handshake whose
client asks for the certificate's status (``common/tls.py`` says which response is current).

Python's ``ssl`` has no switch for it, and a library that has one cannot be used instead: pyOpenSSL's
``Context.set_ocsp_server_callback`` applies to pyOpenSSL connections, while the gateway's server
(Sanic on uvloop, as asyncio) only accepts an ``ssl.SSLContext`` (``TypeError: ssl argument must be
an SSLContext or None``). So the callback is set with OpenSSL's own API, through ctypes, on the
``SSL_CTX`` behind the ``ssl.SSLContext`` (the pointer following the object header in CPython's
``PySSLContext``), the libssl Python's ``_ssl`` module is linked with: the status request callback
(``SSL_CTX_set_tlsext_status_cb``) hands each handshake a copy of the response
(``SSL_set_tlsext_status_ocsp_resp``, which takes ownership of an ``OPENSSL_malloc`` buffer). The
pointer is checked against the context before anything is set (its options must read back the same).
"""

from __future__ import annotations

import _ssl
import ctypes
import ssl
import sys
from collections.abc import Callable
from typing import Any

# From OpenSSL's ssl.h and tls1.h (stable since 1.0): the ctrl numbers behind the two macros.
_SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB = 63
_SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP = 71
_SSL_TLSEXT_ERR_OK = 0
_StatusCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class StaplingUnavailable(Exception):
    """This Python's ``ssl`` cannot be reached as expected; the message says why."""


def staple(context: ssl.SSLContext, current: Callable[[], bytes]) -> None:
    """Send ``current()`` (a DER OCSP response, asked at each handshake) to the clients of ``context``
    that ask for it. ``current`` must not raise: it runs inside OpenSSL's callback."""
    libssl = _libssl()
    ssl_ctx = _ssl_ctx(context, libssl)

    def on_status_request(connection: int, _arg: int) -> int:
        response = current()
        copy = libssl.CRYPTO_malloc(len(response), b"sift-ocsp", 0)
        if copy:
            ctypes.memmove(copy, response, len(response))
            libssl.SSL_ctrl(connection, _SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP, len(response), copy)
        return _SSL_TLSEXT_ERR_OK

    callback = _StatusCallback(on_status_request)
    libssl.SSL_CTX_callback_ctrl(ssl_ctx, _SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB, callback)
    # OpenSSL keeps only the function pointer: the callback lives as long as the context.
    context._sift_ocsp_callback = callback  # type: ignore[attr-defined]


def _libssl() -> Any:
    """The libssl of the ``_ssl`` module (its symbols resolve through the module's dependencies)."""
    libssl = ctypes.CDLL(_ssl.__file__)
    libssl.SSL_CTX_get_options.restype = ctypes.c_uint64
    libssl.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
    libssl.SSL_CTX_callback_ctrl.restype = ctypes.c_long
    libssl.SSL_CTX_callback_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, _StatusCallback]
    libssl.SSL_ctrl.restype = ctypes.c_long
    libssl.SSL_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
    libssl.CRYPTO_malloc.restype = ctypes.c_void_p
    libssl.CRYPTO_malloc.argtypes = [ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int]
    return libssl


def _ssl_ctx(context: ssl.SSLContext, libssl: Any) -> int:
    """The ``SSL_CTX *`` of ``context``, once its options read back through OpenSSL as Python sees them."""
    if sys.implementation.name != "cpython" or not isinstance(context, _ssl._SSLContext):
        raise StaplingUnavailable("OCSP stapling needs CPython's own `ssl` module")
    pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
    if not pointer or libssl.SSL_CTX_get_options(pointer) != context.options:
        raise StaplingUnavailable("the TLS context of this Python's `ssl` module is not laid out as expected")
    return int(pointer)
