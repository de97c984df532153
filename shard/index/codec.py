"""How documents and token records are stored: orjson (keeps field order) compressed with zstd."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import zstandard

# Level 3 is zstd's default: near its best ratio on small JSON at a fraction of the cost of higher levels.
_LEVEL = 3


class DocumentCodec:
    """One compressor and decompressor per store and thread.

    Reusing them avoids per-document context set-up; python-zstandard objects must not be used from
    two threads at once, and reads may come from a thread pool, hence one pair per thread.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def encode(self, value: Any) -> bytes:
        compressed: bytes = self._compressor().compress(orjson.dumps(value))
        return compressed

    def decode(self, data: bytes) -> Any:
        return orjson.loads(self._decompressor().decompress(data))

    def _compressor(self) -> zstandard.ZstdCompressor:
        compressor: zstandard.ZstdCompressor | None = getattr(self._local, "compressor", None)
        if compressor is None:
            compressor = self._local.compressor = zstandard.ZstdCompressor(level=_LEVEL)
        return compressor

    def _decompressor(self) -> zstandard.ZstdDecompressor:
        decompressor: zstandard.ZstdDecompressor | None = getattr(self._local, "decompressor", None)
        if decompressor is None:
            decompressor = self._local.decompressor = zstandard.ZstdDecompressor()
        return decompressor
