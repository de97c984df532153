"""The vector-only and hybrid modes of ``python -m bench.run relevance`` (``--modes``).

Cranfield is embedded at load time by the local all-MiniLM-L6-v2 (``huggingFace`` source) from a
template a user would write for it, title then text; each query is then searched:

- ``vector``: ``semanticRatio`` 1, the query's text embedded (no keyword leg at all);
- ``hybrid``: each ``--semantic-ratios`` value with each ``--strategies`` matching strategy, the two
  legs fused as search.md §7.6 says (with ``bm25``, their scores added); ``--page-limits`` runs each
  again asking for fewer hits than the 100 recall needs, as a user's first page does (row ``@10``).

What a user can tune is what these modes vary: ``semanticRatio``, ``matchingStrategy``, and the
embedder's ``distribution`` (``--distribution mean,sigma``), which maps MiniLM's similarities (most
within 0.5-0.8 once ``(1 + cos) / 2``) onto the keyword scores' range before they are compared.
Query embeddings are cached by the shards (``--experimental-embedding-cache-entries``), so only the
first mode pays for embedding the 225 queries.

Measured at 8a4e2fb (2 shards; ``--modes keyword,vector,hybrid --strategies last,frequency``, then the
same loaded index for the other settings): vector-only 0.3837 nDCG@10 (the published MiniLM figure is
0.382); hybrid 0.3837 for any ``semanticRatio`` from 0.6 with any strategy, 0.3797-0.3811 at 0.5,
0.3791 at 0.3 (frequency), 0.3675 at 0.2; every ``distribution`` tried lowers it ((0.75, 0.05):
0.30-0.36, (0.7, 0.1): 0.32-0.37, (0.8, 0.1): 0.26-0.38, (0.5, 1) and (0.9, 1): 0.377-0.384). The
reference engine given the same vectors answers the same (vector 0.3839, hybrid 0.5 last 0.3805,
0.7 frequency 0.3841, 0.3 frequency 0.3575): the contract's fusion interleaves the two lists by
weighted score, so keyword hits (0.11-0.20 alone) can only displace MiniLM's, and rarely improve them.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

EMBEDDER = "minilm"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TEMPLATE = "{{doc.title}} {{doc.text}}"
TEMPLATE_MAX_BYTES = 1000
"""About the model's 256 word pieces (abstracts take 1,104 bytes on average). Cut at 1,000 bytes, one
text reaches 256 pieces (164 on average); uncut, the tokenizer truncates 418 of 1,400 at 256. Measured
in-process with the same model and the engine's bm25 leg (nDCG@10 vector alone / hybrid sum 0.5 over
100 hits): 1,000 bytes 0.3837 / 0.4189; uncut (first 256 pieces) 0.3817 / 0.4200; the mean of
254-piece windows 0.3571 / 0.4156, weighted by window length 0.3857 / 0.4197. None is worth a change."""
MODES = ("keyword", "vector", "hybrid")
DEFAULT_RATIOS = (0.5, 0.7, 0.9)
CACHE_ENTRIES = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--modes",
        type=_modes,
        default=["keyword"],
        help="keyword (the matching strategies), vector (MiniLM alone), hybrid; comma-separated",
    )
    parser.add_argument(
        "--semantic-ratios",
        type=ratios,
        default=list(DEFAULT_RATIOS),
        help="hybrid semanticRatio values, comma-separated (0.5,0.7,0.9)",
    )
    parser.add_argument(
        "--page-limits",
        type=limits,
        default=[],
        help="also run each hybrid search at these limits, comma-separated (e.g. 10): the first page "
        "a user sees, where the legs' depth before fusion shows; recall then counts those hits only",
    )
    parser.add_argument(
        "--distribution",
        type=_distribution,
        default=None,
        help="the embedder's distribution as mean,sigma (e.g. 0.7,0.1); none by default",
    )


def _modes(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    if not values or any(value not in MODES for value in values):
        raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(MODES)}")
    return values


def ratios(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected numbers such as 0.5,0.7") from None
    if not values or any(not 0.0 <= value <= 1.0 for value in values):
        raise argparse.ArgumentTypeError("semantic ratios lie between 0 and 1")
    return values


def limits(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected limits such as 10,20") from None
    if any(value < 1 for value in values):
        raise argparse.ArgumentTypeError("limits are positive")
    return values


def _distribution(text: str) -> dict[str, float]:
    try:
        mean, sigma = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("expected mean,sigma such as 0.7,0.1") from None
    return {"mean": mean, "sigma": sigma}


def uses_vectors(args: argparse.Namespace) -> bool:
    return "vector" in args.modes or "hybrid" in args.modes


def embedder_settings(distribution: dict[str, float] | None = None) -> dict[str, Any]:
    """The ``embedders`` setting the index gets when a vector mode runs."""
    embedder: dict[str, Any] = {
        "source": "huggingFace",
        "model": MODEL,
        "documentTemplate": TEMPLATE,
        "documentTemplateMaxBytes": TEMPLATE_MAX_BYTES,
    }
    if distribution is not None:
        embedder["distribution"] = distribution
    return {"embedders": {EMBEDDER: embedder}}


CLUSTER_OPTIONS = ("--experimental-embedding-cache-entries", str(CACHE_ENTRIES))
"""Query embeddings cached, so that only a bench's first vector run pays for embedding the queries."""


def cluster_options(args: argparse.Namespace) -> tuple[str, ...]:
    return CLUSTER_OPTIONS if uses_vectors(args) else ()


def vector_runs(args: argparse.Namespace) -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, the search parameters besides ``q``) of each vector mode run."""
    if "vector" in args.modes:
        yield "vector", {"hybrid": {"embedder": EMBEDDER, "semanticRatio": 1.0}}
    if "hybrid" in args.modes:
        for ratio in args.semantic_ratios:
            for strategy in args.strategies:
                body = {
                    "hybrid": {"embedder": EMBEDDER, "semanticRatio": ratio},
                    "matchingStrategy": strategy,
                }
                yield f"hybrid {ratio:g} {strategy}", body
                for limit in args.page_limits:
                    yield f"hybrid {ratio:g} {strategy} @{limit}", {**body, "limit": limit}
