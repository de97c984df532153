"""The query classes of ``bench.run compare`` (issue 23's table), drawn from each dataset with a seed.

Every class is many distinct requests (``--queries``, default 200; fewer where the data has fewer
distinct values, as countries), drawn from a seeded sample of the documents that were loaded, so that
neither engine can answer one repeated query from a cache, and a dataset and seed give the same
requests on every run and commit. Every body has ``limit`` 20 but ``placeholder``'s.

- ``placeholder``: ``q`` empty, each request a distinct page: ``offset`` 0 to 9 and ``limit`` 11 to 30
  (20 on average; at most 200 requests). Deep offsets would measure pagination instead: each shard
  returns ``offset + limit`` hits to the gateway;
- ``word`` / ``two-words``: one word, two consecutive words of a title (``name``) or, for movies and
  the synthetic corpus half of the time, the body (``overview`` / ``body``);
- ``prefix3``: the first 3 letters of a title word of 4+ letters, as typed;
- ``typo``: ``bench/queries.py``'s typo class (1 or 2 words, each of 5+ letters misspelt as far as the
  typo rules allow);
- ``title3-highlight``: 3 consecutive title words with ``attributesToHighlight: ["*"]``;
- ``title4``: 4 consecutive title words (the 1M corpus's proximity-heavy class);
- ``name``: a city's whole name, as written;
- ``filter``: ``q`` empty, ``filter: country = X`` for the country of a sampled city;
- ``geo-sort``: ``q`` empty, sorted by distance to a sampled city (``_geoPoint(lat, lng):asc``);
- ``prefix3-facets``: ``prefix3`` with the ``country`` facet distribution.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from bench import queries, synthetic
from bench.datasets import DATASETS
from bench.synthetic import tokenize

LIMIT = 20
CLASSES: dict[str, tuple[str, ...]] = {
    "movies": ("placeholder", "word", "two-words", "prefix3", "typo", "title3-highlight"),
    "cities": ("word", "name", "prefix3", "filter", "geo-sort", "prefix3-facets"),
    "synthetic": ("placeholder", "word", "two-words", "prefix3", "typo", "title4"),
}
ALL_CLASSES = tuple(dict.fromkeys(name for names in CLASSES.values() for name in names))
# Title-like and body-like field of each dataset, the text queries are drawn from.
TEXT_FIELDS: dict[str, tuple[str, str | None]] = {
    "movies": ("title", "overview"),
    "cities": ("name", None),
    "synthetic": ("title", "body"),
}
# Settings given to both engines before the documents (the classes above need these and no more).
SETTINGS: dict[str, dict[str, Any]] = {
    "movies": {},
    "cities": {"filterableAttributes": ["country", "_geo"], "sortableAttributes": ["_geo"]},
    "synthetic": {},
}
SAMPLE_DOCS = 2000
# Synthetic documents are independent draws: the first 20,000 represent any N.
SYNTHETIC_SAMPLE_FROM = 20_000

Document = dict[str, Any]
Draw = Callable[[Document, random.Random], dict[str, Any] | None]


def sample(dataset: str, docs: int | None, seed: int) -> list[Document]:
    """``SAMPLE_DOCS`` documents of the dataset, drawn with ``seed`` from what was loaded."""
    if dataset == "synthetic":
        assert docs is not None
        documents = list(synthetic.documents(min(docs, SYNTHETIC_SAMPLE_FROM), seed))
    else:
        documents = list(DATASETS[dataset].documents())
    return random.Random(f"{seed}:{dataset}").sample(documents, min(SAMPLE_DOCS, len(documents)))


def build(
    dataset: str, docs: int | None, seed: int, count: int, classes: list[str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Distinct request bodies per class of ``dataset`` (``classes``: a subset, in the table's order).

    Each class draws from its own generator, so adding a class changes no other's requests.
    """
    documents = sample(dataset, docs, seed)
    title, body = TEXT_FIELDS[dataset]
    draws = _draws(title, body, documents)
    sets: dict[str, list[dict[str, Any]]] = {}
    for name in CLASSES[dataset]:
        if classes is not None and name not in classes:
            continue
        rng = random.Random(f"{seed}:{dataset}:{name}")
        if name == "placeholder":
            pages = [(offset, limit) for offset in range(10) for limit in range(11, 31)]
            sets[name] = [{"q": "", "offset": o, "limit": n} for o, n in rng.sample(pages, min(count, 200))]
            continue
        found: dict[bytes, dict[str, Any]] = {}
        for _ in range(100 * count):
            if len(found) == count:
                break
            if (drawn := draws[name](rng.choice(documents), rng)) is not None:
                drawn["limit"] = LIMIT
                found.setdefault(orjson.dumps(drawn), drawn)
        if not found:
            raise ValueError(f"{dataset} has nothing to draw {name} queries from")
        sets[name] = list(found.values())
    return sets


def _draws(title: str, body: str | None, documents: list[Document]) -> dict[str, Draw]:
    def words(document: Document, rng: random.Random, titles_only: bool = False) -> list[str]:
        text = tokenize(str(document.get(title) or ""))
        if body and not titles_only and rng.random() < 0.5:
            text = tokenize(str(document.get(body) or "")) or text
        return text

    def consecutive(size: int, titles_only: bool = False) -> Draw:
        def draw(document: Document, rng: random.Random) -> dict[str, Any] | None:
            text = words(document, rng, titles_only)
            return {"q": " ".join(queries.window(text, size, rng))} if len(text) >= size else None

        return draw

    def prefix3(document: Document, rng: random.Random) -> dict[str, Any] | None:
        long = [word for word in tokenize(str(document.get(title) or "")) if len(word) >= 4]
        return {"q": rng.choice(long)[:3]} if long else None

    def typo(document: Document, rng: random.Random) -> dict[str, Any] | None:
        text = queries.window(words(document, rng), rng.randint(1, 2), rng)
        if not any(len(word) >= 5 for word in text):
            return None
        return {"q": " ".join(queries.misspell(word, rng) for word in text)}

    def highlighted(document: Document, rng: random.Random) -> dict[str, Any] | None:
        drawn = consecutive(3, titles_only=True)(document, rng)
        return None if drawn is None else {**drawn, "attributesToHighlight": ["*"]}

    def name(document: Document, rng: random.Random) -> dict[str, Any] | None:
        return {"q": document[title]} if document.get(title) else None

    def country(document: Document, rng: random.Random) -> dict[str, Any] | None:
        value = document.get("country")
        return {"q": "", "filter": f"country = {orjson.dumps(value).decode()}"} if value else None

    def geo_sort(document: Document, rng: random.Random) -> dict[str, Any] | None:
        point = document.get("_geo")
        return {"q": "", "sort": [f"_geoPoint({point['lat']}, {point['lng']}):asc"]} if point else None

    def facets(document: Document, rng: random.Random) -> dict[str, Any] | None:
        drawn = prefix3(document, rng)
        return None if drawn is None else {**drawn, "facets": ["country"]}

    return {
        "word": consecutive(1),
        "two-words": consecutive(2),
        "prefix3": prefix3,
        "typo": typo,
        "title3-highlight": highlighted,
        "title4": consecutive(4, titles_only=True),
        "name": name,
        "filter": country,
        "geo-sort": geo_sort,
        "prefix3-facets": facets,
    }


def classes_of(datasets: list[str], wanted: list[str] | None) -> Iterator[tuple[str, str]]:
    """(dataset, class) pairs in the table's order, limited to ``wanted`` when given."""
    for dataset in datasets:
        for name in CLASSES[dataset]:
            if wanted is None or name in wanted:
                yield dataset, name
