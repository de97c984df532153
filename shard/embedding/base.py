"""What every embedder is to its callers: texts in, float32 vectors out, provider failures as one error."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

import numpy as np

from common.errors import ApiError
from common.rest_templates import EMBEDDING_ERROR_PREFIX

Fault = Literal["user", "runtime"]


class EmbeddingError(ApiError):
    """An embedder could not embed (``vector_embedding_error``): a provider's refusal, an unreachable
    or refused URL, a model that is not available, an answer of the wrong shape.

    Worded as the reference words its own: ``Error while generating embeddings: <fault> error:
    <detail>``, the fault being the user's (configuration, input) or the run's (network, server).
    """

    def __init__(self, detail: str, fault: Fault = "user") -> None:
        super().__init__("vector_embedding_error", f"{EMBEDDING_ERROR_PREFIX}{fault} error: {detail}")
        self.detail = detail
        self.fault = fault


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
    rows: Sequence[Sequence[float]] | np.ndarray, expected: int, dimensions: int | None, url: str
) -> np.ndarray:
    """A server's vectors as an ``(expected, dimensions)`` float32 matrix, or an error saying what's wrong."""
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (ValueError, TypeError):
        raise EmbeddingError(
            f"the embeddings answered by `{url}` are not arrays of numbers of one length", "runtime"
        ) from None
    if matrix.ndim != 2 or matrix.shape[0] != expected:
        count = matrix.shape[0] if matrix.ndim else 0
        raise EmbeddingError(f"`{url}` answered {count} embeddings for {expected} texts", "runtime")
    if dimensions is not None and matrix.shape[1] != dimensions:
        raise EmbeddingError(
            f"`{url}` answered embeddings of {matrix.shape[1]} dimensions, the embedder has {dimensions}"
        )
    return matrix
