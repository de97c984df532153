"""``python -m bench.run geo``: geo filters, numeric range filters and geo sort on ``cities`` (issue 6).

The 171k cities are loaded, then ``_geo`` and ``id`` made filterable and ``_geo`` sortable, then each class of
placeholder searches is driven through the closed-loop load generator like ``bench.run search``
(whose loading, probing and report this reuses): ``_geoRadius`` of 10 km and of 1000 km around
cities, a selective (``id a TO a+100``) and a broad (``id > a``, most documents) numeric range, and a
sort by distance to a city.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from bench.configured import Configured, parse_options, run_classes
from bench.datasets import DATASETS
from bench.search import render as render_search

DATASET = "cities"
SETTINGS = {"filterableAttributes": ["_geo", "id"], "sortableAttributes": ["_geo"]}
SCENARIO = Configured(
    "geo", "geo filters, numeric ranges and geo sort on cities (placeholder searches)", DATASET, SETTINGS
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("geo", __doc__.splitlines()[0], argv, [1, 16])


def bodies(seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Requests per class, centred on cities drawn from the dataset."""
    rng = random.Random(seed)
    cities = list(DATASETS[DATASET].documents())
    points = [(city["_geo"]["lat"], city["_geo"]["lng"]) for city in rng.sample(cities, count)]
    top = len(cities)
    return {
        "radius_10km": [{"q": "", "filter": f"_geoRadius({lat}, {lng}, 10000)"} for lat, lng in points],
        "radius_1000km": [{"q": "", "filter": f"_geoRadius({lat}, {lng}, 1000000)"} for lat, lng in points],
        "range_selective": [
            {"q": "", "filter": f"id {low} TO {low + 100}"} for low in rng.sample(range(top - 100), count)
        ],
        "range_broad": [{"q": "", "filter": f"id > {low}"} for low in rng.sample(range(top // 10), count)],
        "geo_sort": [{"q": "", "sort": [f"_geoPoint({lat}, {lng}):asc"]} for lat, lng in points],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    return run_classes(args, environment, SCENARIO, bodies(args.seed, args.queries))


def render(report: dict[str, Any]) -> str:
    return render_search(report)
