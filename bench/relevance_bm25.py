"""A plain BM25 computed by the bench itself, beside the engine's strategies in ``bench.run relevance``.

No Sift server is involved: the documents and queries are tokenised with Sift's own analyser under the
index's settings (so the stop words and word forms are the engine's), every word is replaced by its
Snowball English stem (the "BM25 + Porter" reference of ``shared/api/README.md``), title and text
form one field, and documents are scored with the textbook formula (Robertson's idf, never negative;
``K1``, ``B`` below). It is the bar the ``bm25`` matching strategy must reach on the same tokens.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from shard.analysis import AnalysisConfig, TokenKind
from shard.index.indexer import analyzer_for

K1 = 1.2
B = 0.75
LANGUAGE = "eng"


def rankings(
    documents: Iterable[dict[str, Any]],
    queries: list[tuple[str, str]],
    settings: dict[str, Any],
    fields: list[str],
    depth: int,
) -> dict[str, list[str]]:
    """Each query's first ``depth`` document ids by BM25 over ``fields`` concatenated."""
    analyzer = analyzer_for(AnalysisConfig.from_settings(settings))

    def terms(text: str) -> list[str]:
        words, _, _ = analyzer.index_text(text)
        return [analyzer.stem(word, LANGUAGE) for word in words]

    ids: list[str] = []
    frequencies: list[Counter[str]] = []
    lengths: list[int] = []
    postings: dict[str, list[int]] = {}
    for document in documents:
        words = [term for name in fields for term in terms(str(document.get(name) or ""))]
        counts = Counter(words)
        number = len(ids)
        ids.append(str(document["_id"]))
        frequencies.append(counts)
        lengths.append(len(words))
        for term in counts:
            postings.setdefault(term, []).append(number)
    total = len(ids)
    average = sum(lengths) / max(total, 1)
    ranked: dict[str, list[str]] = {}
    for qid, text in queries:
        tokens = analyzer.tokens(text)
        query = [
            analyzer.stem(token.normalized, LANGUAGE)
            for token in tokens
            if token.kind is TokenKind.WORD and token.normalized and not token.stop_word
        ]
        scores: dict[int, float] = {}
        for term, repeats in Counter(query).items():
            docs = postings.get(term, [])
            weight = math.log(1 + (total - len(docs) + 0.5) / (len(docs) + 0.5))
            for number in docs:
                tf = frequencies[number][term]
                norm = tf + K1 * (1 - B + B * lengths[number] / average)
                scores[number] = scores.get(number, 0.0) + repeats * weight * tf * (K1 + 1) / norm
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:depth]
        ranked[qid] = [ids[number] for number, _ in best]
    return ranked
