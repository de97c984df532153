"""``python -m bench.run distinct``: search with ``distinct`` on ``movies``, against the same queries without.

``genres`` is an array attribute with 19 values: after a handful of hits nearly every candidate
shares a value with a kept one, which is the hard case for a sharded distinct (the gateway walks the
merged hits, ``gateway/search/distinct.py``). Classes, drawn like ``bench.run search``'s:

- ``exact`` / ``exact-distinct``: the exact class without and with ``distinct: genres``;
- ``prefix`` / ``prefix-distinct``: the as-you-type class without and with it (short prefixes match
  most of the index).

``--data-dir`` keeps a loaded cluster.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench import queries
from bench.configured import Configured, parse_options, run_classes
from bench.search import corpus
from bench.search import render as render_search

DATASET = "movies"
SETTINGS = {"filterableAttributes": ["genres"]}
CLASSES = ("exact", "exact-distinct", "prefix", "prefix-distinct")
SCENARIO = Configured("distinct", "distinct on genres over movies (bench/distinct.py)", DATASET, SETTINGS)


def parse_args(argv: list[str]) -> argparse.Namespace:
    return parse_options("distinct", __doc__.splitlines()[0], argv, [1, 16], CLASSES)


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    drawn = queries.build(corpus(DATASET, None, args.seed), args.seed, args.queries)
    sets: dict[str, list[dict[str, Any]]] = {}
    for name in ("exact", "prefix"):
        sets[name] = drawn[name]
        sets[f"{name}-distinct"] = [{**body, "distinct": "genres"} for body in drawn[name]]
    return run_classes(args, environment, SCENARIO, {name: sets[name] for name in CLASSES})


def render(report: dict[str, Any]) -> str:
    return render_search(report)
