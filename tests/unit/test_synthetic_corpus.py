"""The synthetic benchmark corpus (``bench/synthetic.py``): reproducible, within its bounds, real words.

Benchmarks compare figures across runs and commits, so the same seed and N must give the same bytes
however the corpus is chunked; otherwise a change in chunk size would silently change the workload.
"""

from __future__ import annotations

import io
import re
import statistics
from collections import Counter
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from bench import synthetic
from bench.ingest import synthetic_payload

# Spans three generation blocks, the last one partial.
DOCS = 2 * synthetic.BLOCK_DOCS + 500


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return list(synthetic.documents(DOCS, seed=7))


def _words(text: str) -> list[str]:
    return [word.strip(",.").lower() for word in text.split()]


# --- Determinism --------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_docs", [1, 333, synthetic.BLOCK_DOCS, DOCS + 1])
def test_same_documents_whatever_the_chunk_size(corpus: list[dict[str, Any]], chunk_docs: int) -> None:
    chunks = list(synthetic.chunks(DOCS, chunk_docs, seed=7))
    assert all(len(chunk) == chunk_docs for chunk in chunks[:-1])
    assert list(chain.from_iterable(chunks)) == corpus


def test_ndjson_bytes_do_not_depend_on_chunk_size() -> None:
    small, large = io.BytesIO(), io.BytesIO()
    small_sizes = synthetic.write_ndjson(small, 1200, seed=5, chunk_docs=7)
    large_sizes = synthetic.write_ndjson(large, 1200, seed=5, chunk_docs=1000)
    assert small.getvalue() == large.getvalue()
    assert sum(small_sizes) == sum(large_sizes) == len(small.getvalue())
    assert len(small_sizes) == -(-1200 // 7) and len(large_sizes) == 2


def test_a_smaller_corpus_is_a_prefix_and_the_seed_matters(corpus: list[dict[str, Any]]) -> None:
    assert list(synthetic.documents(1234, seed=7)) == corpus[:1234]
    other = list(synthetic.documents(50, seed=8))
    assert [d["body"] for d in other] != [d["body"] for d in corpus[:50]]


def test_ids_are_one_to_n_and_blocks_do_not_repeat(corpus: list[dict[str, Any]]) -> None:
    assert [document["id"] for document in corpus] == list(range(1, DOCS + 1))
    # A block repeating another would make the corpus compress and deduplicate unrealistically well.
    assert len({document["body"] for document in corpus}) == DOCS


# --- Shape and bounds ---------------------------------------------------------------------------------


def test_fields_and_bounds(corpus: list[dict[str, Any]]) -> None:
    for document in corpus:
        assert set(document) == {"id", "title", "body", "year", "tags"}
        assert 2 <= len(document["title"].split()) <= 12
        assert 3 <= len(document["body"].split()) <= 600
        assert 1 <= len(document["tags"]) <= 4 and len(set(document["tags"])) == len(document["tags"])
        assert 1900 <= document["year"] <= 2025


def test_lengths_are_skewed_like_text(corpus: list[dict[str, Any]]) -> None:
    titles = [len(d["title"].split()) for d in corpus]
    bodies = [len(d["body"].split()) for d in corpus]
    assert Counter(titles).most_common(1)[0][0] in (4, 5, 6)
    assert 50 <= statistics.median(bodies) <= 70
    assert statistics.mean(bodies) > statistics.median(bodies) + 10  # long right tail
    assert max(bodies) > 300


def test_bodies_are_sentences(corpus: list[dict[str, Any]]) -> None:
    for document in corpus:
        sentences = document["body"].split(". ")
        assert document["body"].endswith(".")
        assert all(s[0] == s[0].upper() for s in sentences), document["body"]
    text = " ".join(d["body"] for d in corpus)
    words = len(text.split())
    assert 0.03 < text.count(",") / words < 0.09
    assert 8 < words / text.count(".") < 16


def test_ndjson_lines_parse_back(tmp_path: Path) -> None:
    payload = synthetic_payload(tmp_path / "corpus.ndjson", 250, seed=3, chunk_docs=100)
    bodies = list(payload.bodies)
    assert [body.count(b"\n") for body in bodies] == [100, 100, 50]
    assert payload.size == sum(map(len, bodies)) == (tmp_path / "corpus.ndjson").stat().st_size
    parsed = [orjson.loads(line) for line in b"".join(bodies).splitlines()]
    assert parsed == list(synthetic.documents(250, seed=3))


# --- Vocabulary and frequencies -----------------------------------------------------------------------


def test_words_come_from_the_datasets(corpus: list[dict[str, Any]]) -> None:
    vocabulary = set(synthetic.shared_vocabulary().words)
    used = {w for d in corpus for text in (d["title"], d["body"], *d["tags"]) for w in _words(text)}
    assert used <= vocabulary
    assert len(used) > 3000
    # Words only one of the two sources has: both feed the counts.
    assert {"aerodynamic", "supersonic", "detective", "princess"} <= vocabulary


def test_vocabulary_counts_match_the_source_text() -> None:
    text = " ".join(synthetic.source_texts()).lower()
    vocabulary = synthetic.shared_vocabulary()
    counts = dict(zip(vocabulary.words, vocabulary.counts, strict=True))
    letter = r"[^\W\d_]"
    for word in ("the", "flow", "love", "boundary"):
        # Whole words: no letter around, nor an apostrophe that joins another word ("they're").
        pattern = rf"(?<!{letter})(?<!{letter}'){word}(?!{letter})(?!'{letter})"
        assert counts[word] == len(re.findall(pattern, text)), word
    assert vocabulary.words[0] == "the"


def test_word_frequencies_follow_the_observed_ones(corpus: list[dict[str, Any]]) -> None:
    vocabulary = synthetic.shared_vocabulary()
    observed = np.asarray(vocabulary.counts, dtype=np.float64) / sum(vocabulary.counts)
    generated = Counter(w for d in corpus for w in _words(d["body"]))
    total = sum(generated.values())
    for rank in range(10):
        share = generated[vocabulary.words[rank]] / total
        assert share == pytest.approx(observed[rank], rel=0.1), vocabulary.words[rank]


def test_alias_table_reproduces_weights() -> None:
    table = synthetic.AliasTable.of(np.array([5.0, 1.0, 0.0, 4.0]))
    draws = table.draw(np.random.default_rng(0), 200_000)
    shares = np.bincount(draws, minlength=4) / len(draws)
    assert shares == pytest.approx([0.5, 0.1, 0.0, 0.4], abs=0.005)
