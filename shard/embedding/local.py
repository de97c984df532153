"""The ``huggingFace`` source: a sentence-transformers model run inside the shard's process.

Texts are tokenized by ``tokenizers`` (the model's own ``tokenizer.json``, truncated at the model's
``max_seq_length``), sorted by length and cut into batches so that padding stays small, run through
the encoder, pooled as the model's ``1_Pooling/config.json`` says (or as ``pooling`` forces) and
normalised when ``modules.json`` lists a Normalize module, as sentence-transformers does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import numpy as np
from threadpoolctl import threadpool_limits
from tokenizers import Tokenizer

from shard.embedding.base import Embedder, EmbeddingError
from shard.embedding.bert import BertEncoder
from shard.embedding.model_files import ModelFiles, read_safetensors
from shard.embedding.onnx_bert import OnnxBertEncoder

BATCH_SIZE: Final = 8
"""Texts per forward pass: on movies (96 tokens a text) 8 is a little faster than 16 and 32 in both
runtimes (bench/embedding.py; smaller batches keep the activations in cache)."""
_POOLINGS: Final = ("cls", "mean", "max", "mean_sqrt_len")

Runtime = Literal["numpy", "onnx"]
RUNTIME: Final[Runtime] = "onnx"
"""onnxruntime's fused kernels: 39 docs/s against numpy's 30 on movies, one thread (bench/embedding.py)."""
THREADS: Final = 1
"""Threads per forward pass: two shards share two cores, so a second thread per pass only competes
with the other shard. On the busy 2-core machine (load ~7), batch 8: onnx 27.2 docs/s with 1 thread
against 19.1 with 2; numpy 19.7 against 2.9 (its OpenBLAS threads spin while they wait)."""


class LocalEmbedder(Embedder):
    def __init__(
        self,
        model: str,
        pooling: str = "useModel",
        revision: str | None = None,
        batch_size: int = BATCH_SIZE,
        runtime: Runtime = RUNTIME,
        threads: int = THREADS,
    ) -> None:
        files = ModelFiles(model)
        try:
            files.check_revision(revision)
            config = files.json("config.json", {})
            encoder = BertEncoder(config, read_safetensors(files.read("model.safetensors"), model), model)
            self.tokenizer = Tokenizer.from_str(files.read("tokenizer.json").decode())
            modules = files.json("modules.json", [])
            self.pooling = _pooling_mode(files, modules, pooling)
            max_length = files.json("sentence_bert_config.json", {}).get("max_seq_length")
        except (ValueError, TypeError, AttributeError) as error:
            raise EmbeddingError(f"Model `{model}` cannot be loaded: {error}") from None
        finally:
            files.close()
        self.max_length = min(int(max_length or encoder.max_positions), encoder.max_positions)
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_length)
        self.normalize = any(str(module.get("type", "")).endswith(".Normalize") for module in modules)
        self.batch_size = batch_size
        self.dimensions = encoder.hidden
        self.runtime = runtime
        # onnxruntime holds its own copy of the weights: the numpy arrays are then let go (-90 MiB).
        self._forward: Callable[[np.ndarray, np.ndarray], np.ndarray] = (
            OnnxBertEncoder(encoder, threads) if runtime == "onnx" else _bounded(encoder, threads)
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        result = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return result
        ids = [encoding.ids for encoding in self.tokenizer.encode_batch(list(texts), add_special_tokens=True)]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start : start + self.batch_size]
            length = len(ids[chosen[-1]])
            batch = np.zeros((len(chosen), length), dtype=np.int64)
            mask = np.zeros((len(chosen), length), dtype=np.float32)
            for row, index in enumerate(chosen):
                batch[row, : len(ids[index])] = ids[index]
                mask[row, : len(ids[index])] = 1
            result[chosen] = self._pool(self._forward(batch, mask), mask)
        return result

    def _pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        elif self.pooling == "max":
            pooled = np.where(mask[:, :, None] > 0, hidden, np.float32(-1e9)).max(axis=1)
        else:
            counts = mask.sum(axis=1, keepdims=True)
            pooled = np.einsum("bld,bl->bd", hidden, mask) / (
                counts if self.pooling == "mean" else np.sqrt(counts)
            )
        if self.normalize:
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return pooled.astype(np.float32, copy=False)


def _bounded(encoder: BertEncoder, threads: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def forward(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with threadpool_limits(threads, user_api="blas"):
            return encoder(ids, mask)

    return forward


def _pooling_mode(files: ModelFiles, modules: list[dict[str, Any]], pooling: str) -> str:
    """``forceMean``/``forceCls`` as said; ``useModel``: the model's Pooling module (mean without one,
    as sentence-transformers does for a bare transformer)."""
    if pooling == "forceMean":
        return "mean"
    if pooling == "forceCls":
        return "cls"
    module = next((m for m in modules if str(m.get("type", "")).endswith(".Pooling")), None)
    config = files.json(f"{module.get('path', '')}/config.json", {}) if module else {}
    for mode in _POOLINGS:
        if config.get(f"pooling_mode_{mode}_token" if mode == "cls" else f"pooling_mode_{mode}_tokens"):
            return mode
    return "mean"
