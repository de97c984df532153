"""The minimal keyword search: documents containing every query word, in internal id order.

Ranking (typos, prefixes, proximity, attribute and exactness buckets) replaces the id order in the
next step; candidates already come from the same postings and analysis the ranking will use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap

from common.documents.projection import select_attributes
from shard.analysis import AnalysisConfig, TokenKind
from shard.index.codec import DocumentCodec
from shard.index.documents import read_by_id
from shard.index.env import StoreEnv, Txn
from shard.index.indexer import analyzer_for
from shard.index.postings import term_docs
from shard.index.settings import Settings, displayed_attributes
from shard.index.state import load_state

Hit = tuple[int, dict[str, Any]]
"""(internal document id, projected document): the id orders hits across shards."""


@dataclass(frozen=True)
class SearchResult:
    hits: list[Hit]
    candidates: int


def query_words(settings: Settings, q: str | None) -> list[str]:
    """The query's normalised words, stop words left out."""
    if not q or not q.strip():
        return []
    analyzer = analyzer_for(AnalysisConfig.from_settings(settings))
    return [
        token.normalized
        for token in analyzer.tokens(q)
        if token.kind is TokenKind.WORD and not token.stop_word
    ]


def search(
    env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int, settings: Settings, params: dict[str, Any]
) -> SearchResult:
    candidates = _candidates(env, txn, index_id, query_words(settings, params.get("q")))
    wanted = params.get("offset", 0) + params.get("limit", 20)
    displayed = displayed_attributes(settings)
    retrieve = params.get("attributesToRetrieve")
    if retrieve is not None and "*" in retrieve:
        retrieve = None
    hits: list[Hit] = []
    for doc_id in candidates[:wanted] if wanted else ():
        document = read_by_id(env, codec, txn, index_id, doc_id)
        if document is None:
            continue
        if displayed is not None:
            document = select_attributes(document, displayed)
        if retrieve is not None:
            document = select_attributes(document, retrieve)
        hits.append((doc_id, document))
    return SearchResult(hits, len(candidates))


def _candidates(env: StoreEnv, txn: Txn, index_id: int, words: list[str]) -> BitMap:
    """Every live document when there is no word (placeholder search), else those having all words."""
    if not words:
        return load_state(env, txn, index_id).live
    found: BitMap | None = None
    for word in sorted(set(words), key=len, reverse=True):
        docs = term_docs(txn, env.words, index_id, word, None)
        found = docs if found is None else found & docs
        if not found:
            break
    return found if found is not None else BitMap()
