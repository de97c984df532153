"""``python -m bench.run geo``: geo filters, numeric range filters and geo sort on ``cities`` (issue 6).

The 171k cities are loaded, then ``_geo`` and ``id`` made filterable and ``_geo`` sortable, then each class of
placeholder searches is driven through the closed-loop load generator like ``bench.run search``
(whose loading, probing and report this reuses): ``_geoRadius`` of 10 km and of 1000 km around
cities, a selective (``id a TO a+100``) and a broad (``id > a``, most documents) numeric range, and a
sort by distance to a city. A second index, ``cities_geojson``, holds every city as a ``_geojson`` point
(``_geojson`` filterable, no ``_geo``) for a ``_geoPolygon`` of about 50 km around a city and a
``_geoRadius`` of 10 km on shapes.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from typing import Any

import httpx

from bench.configured import Configured, parse_options, run_classes
from bench.datasets import DATASETS, add_documents, wait_for_task
from bench.search import render as render_search

DATASET = "cities"
SETTINGS = {"filterableAttributes": ["_geo", "id"], "sortableAttributes": ["_geo"]}
SHAPES_INDEX = "cities_geojson"
SHAPES_SETTINGS = {"filterableAttributes": ["_geojson"]}
CLASSES = (
    "radius_10km", "radius_1000km", "range_selective", "range_broad", "geo_sort", "polygon_geojson",
    "radius_10km_geojson",
)


def load_shapes(client: httpx.Client) -> dict[str, Any]:
    """Every city as a ``_geojson`` point in ``cities_geojson``, unless the data directory holds it."""
    cities = DATASETS[DATASET]
    stats = client.get(f"/indexes/{SHAPES_INDEX}/stats")
    if stats.status_code == 200:
        return {"reused": True, "documents": stats.json()["numberOfDocuments"], "load_s": None}
    started = time.monotonic()
    task = client.patch(f"/indexes/{SHAPES_INDEX}/settings", json=SHAPES_SETTINGS).json()["taskUid"]
    wait_for_task(client, task, started + 60)
    shapes = (
        {"id": city["id"], "_geojson": {"type": "Point", "coordinates": [geo["lng"], geo["lat"]]}}
        for city in cities.documents()
        if (geo := city["_geo"])
    )
    tasks = add_documents(str(client.base_url), SHAPES_INDEX, shapes, cities.primary_key, 20_000, 1200.0)
    documents = sum(task["details"]["indexedDocuments"] for task in tasks)
    return {"reused": False, "documents": documents, "load_s": round(time.monotonic() - started, 2)}


SCENARIO = Configured(
    "geo",
    "geo filters, numeric ranges and geo sort on cities (placeholder searches)",
    DATASET,
    SETTINGS,
    index_of={"polygon_geojson": SHAPES_INDEX, "radius_10km_geojson": SHAPES_INDEX},
    prepare=load_shapes,
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("geo", __doc__.splitlines()[0], argv, [1, 16], CLASSES)


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
        "polygon_geojson": [{"q": "", "filter": _polygon(rng, lat, lng)} for lat, lng in points],
        "radius_10km_geojson": [
            {"q": "", "filter": f"_geoRadius({lat}, {lng}, 10000)"} for lat, lng in points
        ],
    }


def _polygon(rng: random.Random, lat: float, lng: float) -> str:
    """An irregular pentagon of about 0.25 degrees of radius around the point, inside the valid ranges."""
    corners = []
    for k in range(5):
        angle, radius = 2 * math.pi * k / 5, rng.uniform(0.15, 0.35)
        corners.append((max(-90.0, min(90.0, lat + radius * math.sin(angle))),
                        max(-180.0, min(180.0, lng + radius * math.cos(angle)))))
    return "_geoPolygon(" + ", ".join(f"[{a:.5f}, {b:.5f}]" for a, b in corners) + ")"


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    return run_classes(args, environment, SCENARIO, bodies(args.seed, args.queries))


def render(report: dict[str, Any]) -> str:
    return render_search(report)
