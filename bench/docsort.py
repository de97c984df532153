"""``python -m bench.run docsort``: ``sort`` on ``POST /documents/fetch`` over ``cities`` (171k documents).

The cities are loaded, ``country`` made filterable and ``name``, ``country``, ``id`` and ``_geo``
sortable, then each class of document reads is driven through the closed-loop load generator like
``bench.run geo`` (whose loading, probing, measuring and report this reuses): one string field from a
random offset, two fields, a filter with a sort, a numeric field descending, and distance to a city.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from bench.configured import Configured, parse_options, run_classes
from bench.datasets import DATASETS
from bench.search import render as render_search

DATASET = "cities"
SETTINGS = {"filterableAttributes": ["country"], "sortableAttributes": ["name", "country", "id", "_geo"]}
CLASSES = ("name_asc", "country_name", "filter_name", "id_desc", "geo_point")
SCENARIO = Configured(
    "docsort", "sort on POST /documents/fetch over cities", DATASET, SETTINGS, "documents/fetch"
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("docsort", __doc__.splitlines()[0], argv, [1], CLASSES)


def bodies(seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Request bodies per class: offsets up to 1,000, countries and points drawn from the dataset
    (country codes quoted: ``IN`` and ``TO`` are filter keywords)."""
    rng = random.Random(seed)
    cities = rng.sample(list(DATASETS[DATASET].documents()), count)
    offsets = [rng.randrange(1000) for _ in range(count)]
    return {
        "name_asc": [{"sort": ["name:asc"], "offset": offset, "limit": 20} for offset in offsets],
        "country_name": [
            {"sort": ["country:desc", "name:asc"], "offset": offset, "limit": 20} for offset in offsets
        ],
        "filter_name": [
            {"filter": f"country = '{city['country']}'", "sort": ["name:desc"], "limit": 20}
            for city in cities
        ],
        "id_desc": [{"sort": ["id:desc"], "offset": offset, "limit": 20} for offset in offsets],
        "geo_point": [
            {"sort": [f"_geoPoint({city['_geo']['lat']}, {city['_geo']['lng']}):asc"], "limit": 20}
            for city in cities
        ],
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    return run_classes(args, environment, SCENARIO, bodies(args.seed, args.queries))


def render(report: dict[str, Any]) -> str:
    return render_search(report)
