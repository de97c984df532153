"""``python -m bench.inprocess``: one shard's search in this process, on a data directory ``bench.run search
--data-dir`` loaded, with the garbage collections each pass paid.

Over HTTP a query's time mixes the gateway, gRPC, both shards sharing two cores and the load generator;
here it is the shard's own work, which is what ranking and caching changes move. Each class runs
``--passes`` times over the same queries: the first pass with an empty read cache (records decoded
from LMDB), later ones with what the earlier passes left in it (bounded, so a large corpus keeps
evicting). The process applies the shard's garbage collector settings unless ``--gc default``.
"""

from __future__ import annotations

import argparse
import gc
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import queries
from bench.search import TEXT_FIELDS, corpus
from common.gcpause import keep_full_collections_rare
from common.layout import DataLayout
from shard.index.read_cache import DEFAULT_BUDGET, ReadCache
from shard.store import ShardStore

QUERIES_PER_CLASS = 200


@dataclass
class Collections:
    """Garbage collections per generation while a pass ran: count and total seconds."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    _started: float = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.counts[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self._started


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.inprocess", description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="loaded by bench.run search")
    parser.add_argument("--dataset", choices=sorted(TEXT_FIELDS), default="movies")
    parser.add_argument("--docs", type=int, help="synthetic: the corpus size it was loaded with")
    parser.add_argument("--classes", default="exact,prefix,typo", help="query classes, comma-separated")
    parser.add_argument("--passes", type=int, default=2, help="passes over each class's queries")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--gc", choices=("shard", "default"), default="shard", help="collector settings")
    parser.add_argument(
        "--cache-mib", type=int, default=DEFAULT_BUDGET >> 20, help="read cache budget (a shard's share)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    layout = DataLayout(args.data_dir)
    # Its cluster's shard count: searches take their share of the index-wide budgets from it.
    store = ShardStore(layout.shard_dir(args.shard), shards=layout.existing_shards())
    sets = queries.build(corpus(args.dataset, args.docs, args.seed), args.seed, QUERIES_PER_CLASS)
    if args.gc == "shard":
        keep_full_collections_rare()
    print(f"{args.dataset} shard {args.shard} in process, gc {args.gc}; ms per query, then collections")
    print(f"{'class':<12}{'pass':>5}{'p50':>9}{'p90':>9}{'p99':>9}{'max':>9}   gen0 / gen1 / gen2: count, ms")
    for name in args.classes.split(","):
        store.cache = ReadCache(args.cache_mib << 20)
        for number in range(args.passes):
            collections = Collections()
            gc.callbacks.append(collections)
            took = sorted(_timed(store, args.dataset, body) for body in sets[name])
            gc.callbacks.remove(collections)
            quantiles = [took[int(len(took) * q)] for q in (0.5, 0.9, 0.99)] + [took[-1]]
            figures = "".join(f"{value:9.2f}" for value in quantiles)
            paid = " / ".join(
                f"{count}, {seconds * 1000:.0f}"
                for count, seconds in zip(collections.counts, collections.seconds, strict=True)
            )
            print(f"{name:<12}{number:>5}{figures}   {paid}")


def _timed(store: ShardStore, index: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    store.search(index, dict(body))
    return (time.perf_counter() - started) * 1000


if __name__ == "__main__":
    main()
