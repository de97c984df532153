"""What every embedder is to its callers: texts in, float32 vectors out, provider failures as one error."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from common.errors import ApiError


class EmbeddingError(ApiError):
    """An embedder could not embed (``vector_embedding_error``): a provider's refusal, an unreachable
    or refused URL, a model that is not available, an answer of the wrong shape."""

    def __init__(self, message: str) -> None:
        super().__init__("vector_embedding_error", message)


class Embedder(ABC):
    """One embedder, built once per configuration and process; safe to call from several threads."""

    dimensions: int
    """The length of every vector this embedder returns."""

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dimensions)`` float32, in the order of ``texts``; batched and retried inside."""

    def embed_query(self, text: str) -> np.ndarray:
        """``(dimensions,)`` float32: a search query's vector."""
        return self.embed_documents([text])[0]


def as_matrix(
    rows: Sequence[Sequence[float]] | np.ndarray, expected: int, dimensions: int | None, source: str
) -> np.ndarray:
    """Provider vectors as a ``(expected, dimensions)`` float32 matrix, or the error saying what was wrong."""
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (ValueError, TypeError):
        raise EmbeddingError(
            f"{source}: the answer's embeddings are not arrays of numbers of one length"
        ) from None
    if matrix.ndim != 2 or matrix.shape[0] != expected:
        raise EmbeddingError(
            f"{source}: expected {expected} embedding{'s' if expected != 1 else ''}, got "
            f"{matrix.shape[0] if matrix.ndim else 0}"
        )
    if dimensions is not None and matrix.shape[1] != dimensions:
        raise EmbeddingError(
            f"{source}: expected embeddings of {dimensions} dimensions, got {matrix.shape[1]}"
        )
    return matrix
