"""Request body decoding: ``Content-Encoding`` and the payload size limit.

The limit applies to the decoded body, so a small compressed request cannot expand past it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli

from common.config.sizes import format_size
from common.errors import ApiError
from common.errors import payload_too_large as _payload_too_large

_CHUNK = 1 << 16


def decode_body(body: bytes, content_encoding: str | None, limit: int) -> bytes:
    """Return the decoded body; unknown encodings pass through undecoded, as the contract says."""
    if len(body) > limit:
        raise payload_too_large(limit)
    encoding = (content_encoding or "").strip().lower()
    if not body or encoding in ("", "identity"):
        return body
    decoder = _DECODERS.get(encoding)
    if decoder is None:
        return body
    try:
        return decoder(body, limit)
    except (zlib.error, brotli.error) as error:
        raise ApiError(
            "bad_request", f"The request body could not be decoded as `{encoding}`: {error}."
        ) from error


def payload_too_large(limit: int) -> ApiError:
    return _payload_too_large(format_size(limit))


def _inflate(wbits: int) -> Callable[[bytes, int], bytes]:
    def decode(body: bytes, limit: int) -> bytes:
        inflater = zlib.decompressobj(wbits)
        decoded = inflater.decompress(body, limit + 1)
        if len(decoded) > limit:
            raise payload_too_large(limit)
        if not inflater.eof:
            raise zlib.error("truncated stream")
        return decoded

    return decode


def _unbrotli(body: bytes, limit: int) -> bytes:
    decompressor = brotli.Decompressor()
    parts: list[bytes] = []
    size = 0
    for start in range(0, len(body), _CHUNK):
        part = decompressor.process(body[start : start + _CHUNK])
        size += len(part)
        if size > limit:
            raise payload_too_large(limit)
        parts.append(part)
    if not decompressor.is_finished():
        raise brotli.error("truncated stream")
    return b"".join(parts)


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _inflate(16 + zlib.MAX_WBITS),
    "x-gzip": _inflate(16 + zlib.MAX_WBITS),
    "deflate": _inflate(zlib.MAX_WBITS),
    "br": _unbrotli,
}
