"""``python -m bench.run facets``: facet distribution latency on ``cities`` (171k documents).

The dataset is loaded once with ``country``, ``admin1`` and ``admin2`` filterable, then each request
class is driven through the closed-loop load generator at each concurrency like ``bench.run geo``
(whose loading, probing, measuring and report this reuses): a distribution over every document
(placeholder search, no hits) of one field and of three, and one over the candidates of a text query.
``--data-dir`` keeps a loaded cluster.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench.configured import Configured, parse_options, run_classes
from bench.search import render as render_search

DATASET = "cities"
SETTINGS = {"filterableAttributes": ["country", "admin1", "admin2"]}
BODIES: dict[str, dict[str, Any]] = {
    "all-country": {"facets": ["country"], "limit": 0},
    "all-3-fields": {"facets": ["country", "admin1", "admin2"], "limit": 0},
    "query-country": {"q": "san", "facets": ["country"], "limit": 20},
}
SCENARIO = Configured("facets", "facet distributions on cities (bench/facets.py)", DATASET, SETTINGS)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("facets", __doc__.splitlines()[0], argv, [1, 16], tuple(BODIES))


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    return run_classes(args, environment, SCENARIO, {name: [body] for name, body in BODIES.items()})


def render(report: dict[str, Any]) -> str:
    return render_search(report)
