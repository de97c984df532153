"""``python -m bench.run multisearch``: ``POST /multi-search`` on ``movies``, separate and federated.

Two queries per request, drawn like ``bench.run search``'s exact class (consecutive words of a title
or overview), against one search of the first query for reference:

- ``single``: ``POST /indexes/movies/search`` with the first query;
- ``separate``: both queries, each answered on its own (one response per query);
- ``federated``: both queries merged into one list; the index is named twice, so the total is one more
  fan-out that counts the union of their candidates;
- ``federated-distinct``: the same with ``federation.distinct`` on ``genres`` (each query deduplicates
  its index, the merge deduplicates across queries).

``--data-dir`` keeps a loaded cluster.
"""

from __future__ import annotations

import argparse
from itertools import pairwise
from typing import Any

from bench import queries
from bench.configured import Configured, parse_options, run_classes
from bench.search import corpus
from bench.search import render as render_search

DATASET = "movies"
SETTINGS = {"filterableAttributes": ["genres"]}
CLASSES = ("single", "separate", "federated", "federated-distinct")
SCENARIO = Configured(
    "multisearch",
    "multi-search on movies, separate and federated (bench/multisearch.py)",
    DATASET,
    SETTINGS,
    path_of={name: "/multi-search" for name in CLASSES if name != "single"},
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("multisearch", __doc__.splitlines()[0], argv, [1, 16], CLASSES)


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    words = [
        body["q"]
        for body in queries.build(corpus(DATASET, None, args.seed), args.seed, args.queries + 1)["exact"]
    ]
    pairs = list(pairwise(words))[: args.queries]

    def both(first: str, second: str) -> list[dict[str, Any]]:
        return [{"indexUid": DATASET, "q": first}, {"indexUid": DATASET, "q": second}]

    sets = {
        "single": [{"q": first} for first, _ in pairs],
        "separate": [{"queries": both(*pair)} for pair in pairs],
        "federated": [{"queries": both(*pair), "federation": {}} for pair in pairs],
        "federated-distinct": [
            {"queries": both(*pair), "federation": {"distinct": "genres"}} for pair in pairs
        ],
    }
    return run_classes(args, environment, SCENARIO, sets)


def render(report: dict[str, Any]) -> str:
    return render_search(report)
