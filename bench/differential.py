"""``python -m bench.run differential``: the same seeded queries to Sift and to the reference engine.

Both engines get the same data (``movies``, ``cities``) and the same settings: the defaults plus the
filterable and sortable attributes the queries need. Each query's first page (the ids of its default
20 hits) is compared: **identical**; **extended**, when the reference's page is its whole result
(fewer hits than a page) and Sift's page starts with it in the same order, then holds more hits (the
documents Sift matches through stems, which the reference does not have); the **same hits** in another
order; or **differing**. Classes
(``bench/queries.py`` draws the words, from documents sampled with the seed):

- ``word``: one word of a document's title (``name``) or, for movies half of the time, its overview;
- ``pair``: two consecutive words;
- ``prefix``: 1 to 3 consecutive words, the last cut to a prefix (as typed);
- ``typo``: 1 or 2 words, each of 5+ letters misspelt as far as the typo rules allow and, half of the
  time, shorter ones of 3+ letters by one edit (which no typo rule allows to match);
- ``filter``: a word and an equality filter on the same document's ``genres`` / ``country``;
- ``geo``: on cities, a word (or nothing) sorted by distance to another city;
- ``facet``: a word with the distribution of ``genres`` / ``country`` (compared too).

The reference is unpacked from ``../shared/reference/`` and started on a free loopback port with a
temporary data directory (``bench/reference.py``); without the binary the run says so and stops.
Sift is started as the other benchmarks start it, on ``--data-dir`` when given (loaded once, reused).
Cases that are not identical or whose facet distributions differ (query, both id lists with their
titles, both totals and processing times, and for each hit of Sift's page that the reference's lacks,
the words it matched in each attribute) go to a JSON Lines file.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import queries
from bench.datasets import DATASETS, wait_for_task
from bench.loadgen import REPO_ROOT
from bench.reference import ARCHIVE, running_reference
from bench.search import TEXT_FIELDS, bench_cluster, ensure_loaded
from bench.synthetic import tokenize

CLASSES = ("word", "pair", "prefix", "typo", "filter", "geo", "facet")
DATASET_NAMES = ("movies", "cities")
FACET_FIELD = {"movies": "genres", "cities": "country"}
SETTINGS: dict[str, dict[str, Any]] = {
    "movies": {"filterableAttributes": ["genres"]},
    "cities": {"filterableAttributes": ["country", "_geo"], "sortableAttributes": ["_geo"]},
}
SAMPLE_DOCS = 2000
VERDICTS = ("identical", "extended", "other order", "differ", "error")
_SETTINGS_TIMEOUT = 1200.0

Draw = Callable[[dict[str, Any], random.Random], dict[str, Any] | None]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run differential", description=__doc__.splitlines()[0]
    )
    add_query_set_options(parser, "--classes", CLASSES, queries=60, seed=19)
    parser.add_argument("--reference-data-dir", type=Path, help="the reference's, kept and reused likewise")
    parser.add_argument("--reference", type=Path, default=ARCHIVE, help="the reference's xz archive")
    parser.add_argument("--cases", type=Path, help="differing cases (JSON Lines); default beside --json")
    parser.add_argument(
        "--json", type=Path, help="result file; default bench/results/differential-<time>.json"
    )
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be positive")
    return args


def add_query_set_options(
    parser: argparse.ArgumentParser, option: str, kinds: tuple[str, ...], queries: int, seed: int
) -> None:
    """The options of a seeded query set over ``movies`` and ``cities`` run on a Sift cluster:
    ``--datasets``, ``option`` (a subset of ``kinds``, e.g. ``--classes``), ``--queries`` per kind and
    dataset, ``--seed``, ``--shards`` and ``--data-dir``."""
    parser.add_argument("--datasets", type=subset(DATASET_NAMES), default=list(DATASET_NAMES))
    parser.add_argument(option, type=subset(kinds), default=list(kinds))
    parser.add_argument("--queries", type=int, default=queries, help="queries per kind and dataset")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--data-dir", type=Path, help="Sift's data directory; reuse the loaded indexes")


def subset(choices: tuple[str, ...]) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated subset of ``choices``."""

    def parse(text: str) -> list[str]:
        values = [part.strip() for part in text.split(",") if part.strip()]
        if not values or any(value not in choices for value in values):
            raise argparse.ArgumentTypeError(f"expected a comma-separated subset of {','.join(choices)}")
        return values

    return parse


def _text(document: dict[str, Any], dataset: str, rng: random.Random) -> list[str]:
    """The words of the document's title-like field or, half of the time, its body-like one."""
    title, body = TEXT_FIELDS[dataset]
    words = tokenize(str(document.get(title) or ""))
    if body and rng.random() < 0.5:
        words = tokenize(str(document.get(body) or "")) or words
    return words


def _words(dataset: str, size: int) -> Draw:
    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        words = queries.window(_text(document, dataset, rng), size, rng)
        return {"q": " ".join(words)} if words else None

    return draw


def _prefix(dataset: str) -> Draw:
    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        words = queries.window(_text(document, dataset, rng), rng.randint(1, 3), rng)
        if not words:
            return None
        last = words[-1]
        words[-1] = last[: rng.randint(1, len(last) - 1)] if len(last) > 1 else last
        return {"q": " ".join(words)}

    return draw


def _typo(dataset: str) -> Draw:
    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        words = queries.window(_text(document, dataset, rng), rng.randint(1, 2), rng)
        short = rng.random() < 0.5
        typed = [
            queries.misspell(word, rng)
            if len(word) >= 5
            else queries.edit(word, rng)
            if short and len(word) >= 3
            else word
            for word in words
        ]
        return {"q": " ".join(typed)} if typed != words else None

    return draw


def _filter(dataset: str) -> Draw:
    field = FACET_FIELD[dataset]

    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        values = document.get(field)
        values = values if isinstance(values, list) else [values]
        values = [value for value in values if isinstance(value, str) and value]
        words = queries.window(_text(document, dataset, rng), 1, rng)
        if not values or not words:
            return None
        return {"q": words[0], "filter": f"{field} = {orjson.dumps(rng.choice(values)).decode()}"}

    return draw


def _geo(dataset: str, documents: list[dict[str, Any]]) -> Draw:
    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        origin = rng.choice(documents).get("_geo")
        if not origin:
            return None
        words = queries.window(_text(document, dataset, rng), 1, rng) if rng.random() < 0.75 else []
        return {"q": " ".join(words), "sort": [f"_geoPoint({origin['lat']}, {origin['lng']}):asc"]}

    return draw


def _facet(dataset: str) -> Draw:
    def draw(document: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
        words = queries.window(_text(document, dataset, rng), 1, rng)
        return {"q": words[0], "facets": [FACET_FIELD[dataset]]} if words else None

    return draw


def build(dataset: str, classes: list[str], seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Distinct request bodies per class; each class has its own generator, so adding one changes no other."""
    documents = list(DATASETS[dataset].documents())
    sample = random.Random(f"{seed}:{dataset}").sample(documents, min(SAMPLE_DOCS, len(documents)))
    draws: dict[str, Draw] = {
        "word": _words(dataset, 1),
        "pair": _words(dataset, 2),
        "prefix": _prefix(dataset),
        "typo": _typo(dataset),
        "filter": _filter(dataset),
        "facet": _facet(dataset),
    }
    if "_geo" in sample[0]:
        draws["geo"] = _geo(dataset, sample)
    sets = {}
    for name in classes:
        if name not in draws:
            continue
        rng = random.Random(f"{seed}:{dataset}:{name}")
        bodies: dict[bytes, dict[str, Any]] = {}
        for _ in range(100 * count):
            if len(bodies) == count:
                break
            if (body := draws[name](rng.choice(sample), rng)) is not None:
                bodies.setdefault(orjson.dumps(body), body)
        sets[name] = list(bodies.values())
    return sets


def prepare(client: httpx.Client, dataset: str, seed: int) -> dict[str, Any]:
    """The dataset loaded (or found) in the index of its name, with the comparison's settings."""
    loaded = ensure_loaded(client, dataset, None, seed)
    started = time.monotonic()
    task = client.patch(f"/indexes/{dataset}/settings", json=SETTINGS[dataset]).json()["taskUid"]
    wait_for_task(client, task, started + _SETTINGS_TIMEOUT)
    loaded["settings_s"] = round(time.monotonic() - started, 2)
    return loaded


def compare(
    dataset: str, name: str, body: dict[str, Any], sift: httpx.Client, reference: httpx.Client
) -> dict[str, Any]:
    """One query to both engines: the verdict on the first pages, and what each answered."""
    title = TEXT_FIELDS[dataset][0]
    key = DATASETS[dataset].primary_key
    sent = {**body, "attributesToRetrieve": [key, title]}
    answers: dict[str, dict[str, Any]] = {}
    for engine, client in (("sift", sift), ("reference", reference)):
        response = client.post(f"/indexes/{dataset}/search", json=sent)
        answers[engine] = response.json() if response.status_code == 200 else {"error": response.text}
    case: dict[str, Any] = {"dataset": dataset, "class": name, "body": body}
    if any("error" in answer for answer in answers.values()):
        return {**case, "verdict": "error", **answers}
    pages = {engine: [hit[key] for hit in answer["hits"]] for engine, answer in answers.items()}
    verdict = _verdict(pages["sift"], pages["reference"], answers["reference"].get("estimatedTotalHits"))
    for engine, answer in answers.items():
        case[engine] = [[hit[key], hit.get(title)] for hit in answer["hits"]]
        case[f"{engine}_total"] = answer.get("estimatedTotalHits")
        # Past searchCutoffMs (1.5 s by default) a ranking stops where it got: an overloaded machine's.
        case[f"{engine}_ms"] = answer.get("processingTimeMs")
    extra = [doc for doc in pages["sift"] if doc not in set(pages["reference"])]
    if extra:
        case["sift_extra_matches"] = _matched_words(sift, dataset, body, extra)
    if "facets" in body:
        case["facets_equal"] = answers["sift"].get("facetDistribution") == answers["reference"].get(
            "facetDistribution"
        )
    return {**case, "verdict": verdict}


def _verdict(sift: list[Any], reference: list[Any], reference_total: int | None) -> str:
    """``extended`` only when the reference's page is its complete result, all of it leads Sift's page
    in the same order and Sift's holds more: no reordering or missing hit can pass as one."""
    if sift == reference:
        return "identical"
    if (
        reference_total == len(reference)
        and len(sift) > len(reference)
        and sift[: len(reference)] == reference
    ):
        return "extended"
    if sorted(sift) == sorted(reference):
        return "other order"
    return "differ"


def _matched_words(
    sift: httpx.Client, dataset: str, body: dict[str, Any], docs: list[Any]
) -> dict[str, dict[str, list[str]]]:
    """For each of ``docs`` (hits of Sift's page), the words ``_matchesPosition`` points at, per
    attribute: whether they are stems, typos or prefixes of the query's words is there to read."""
    key = DATASETS[dataset].primary_key
    response = sift.post(
        f"/indexes/{dataset}/search",
        json={**body, "showMatchesPosition": True, "attributesToRetrieve": ["*"]},
    )
    if response.status_code != 200:
        return {}
    matched: dict[str, dict[str, list[str]]] = {}
    for hit in response.json()["hits"]:
        if hit[key] not in docs:
            continue
        words: dict[str, list[str]] = {}
        for path, places in (hit.get("_matchesPosition") or {}).items():
            for place in places:
                value = _leaf(hit, path, place.get("indices") or [])
                text = str(value).encode()[place["start"] : place["start"] + place["length"]]
                words.setdefault(path, []).append(text.decode(errors="replace"))
        matched[str(hit[key])] = words
    return matched


def _leaf(document: dict[str, Any], path: str, indices: list[int]) -> Any:
    """The value at a dotted path, array positions taken in order from ``indices``."""
    value: Any = document
    remaining = list(indices)
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
        while isinstance(value, list) and remaining:
            value = value[remaining.pop(0)]
    return value


def recorded_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options as a report records them: paths as strings, the result file's own path left out."""
    return {
        key: str(value) if isinstance(value, Path) else value
        for key, value in vars(args).items()
        if key != "json"
    }


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    report: dict[str, Any] = {
        "scenario": "differential",
        "description": "first pages of seeded queries, Sift against the reference engine",
        "started_at": started_at,
        "options": recorded_options(args),
        "environment": environment,
    }
    if not args.reference.exists():
        print(f"no reference binary at {args.reference}: nothing to compare", file=sys.stderr)
        return {**report, "skipped": f"no reference binary at {args.reference}", "summary": []}
    sets = {dataset: build(dataset, args.classes, args.seed, args.queries) for dataset in args.datasets}
    cases: list[dict[str, Any]] = []
    loaded: dict[str, Any] = {}
    with (
        bench_cluster(args, timeout=300.0) as (_, sift),
        running_reference(args.reference, args.reference_data_dir) as url,
        httpx.Client(base_url=url, timeout=300.0) as reference,
    ):
        for dataset in args.datasets:
            print(f"loading {dataset} into both engines ...", file=sys.stderr, flush=True)
            loaded[dataset] = {
                "sift": prepare(sift, dataset, args.seed),
                "reference": prepare(reference, dataset, args.seed),
            }
            for name, bodies in sets[dataset].items():
                print(f"{dataset} {name}: {len(bodies)} queries ...", file=sys.stderr, flush=True)
                cases += [compare(dataset, name, body, sift, reference) for body in bodies]
    path = args.cases or RESULTS_DIR / f"differential-{stamp}-cases.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(case) + b"\n" for case in cases if _reported(case)))
    return {**report, "loaded": loaded, "summary": summarize(cases), "cases_file": str(path)}


RESULTS_DIR = REPO_ROOT / "bench" / "results"


def _reported(case: dict[str, Any]) -> bool:
    """Whether the case goes to the cases file: its first pages are not identical, or its facet
    distributions differ (which an identical page can hide: the counts cover every match)."""
    return case["verdict"] != "identical" or case.get("facets_equal") is False


def summarize(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verdict counts per dataset and class, then per class over datasets, then in all."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for case in cases:
        for key in ((case["dataset"], case["class"]), ("all", case["class"]), ("all", "all")):
            groups.setdefault(key, []).append(case)
    rows = []
    for (dataset, name), members in groups.items():
        verdicts = Counter(case["verdict"] for case in members)
        facets = [case["facets_equal"] for case in members if "facets_equal" in case]
        rows.append(
            {
                "dataset": dataset,
                "class": name,
                "queries": len(members),
                **{verdict: verdicts[verdict] for verdict in VERDICTS},
                "facets_equal": sum(facets) if facets else None,
            }
        )
    order = {name: k for k, name in enumerate((*DATASET_NAMES, "all"))}
    classes = {name: k for k, name in enumerate((*CLASSES, "all"))}
    return sorted(
        rows,
        key=lambda row: (
            order[row["dataset"]] if row["dataset"] != "all" or row["class"] != "all" else 99,
            classes[row["class"]],
        ),
    )


def render(report: dict[str, Any]) -> str:
    lines = [f"{report['scenario']}: {report['description']}"]
    if report.get("skipped"):
        return "\n".join([*lines, f"skipped: {report['skipped']}"])
    options, env = report["options"], report["environment"]
    lines += [
        f"seed={options['seed']} queries/class={options['queries']} shards={options['shards']} "
        f"commit {env['commit']}",
        "",
        f"{'dataset':<8} {'class':<8} {'queries':>7} {'identical':>10} {'extended':>9} {'other order':>12} "
        f"{'differ':>7} {'error':>6} {'identical %':>12} {'+extended %':>12} {'facets equal':>13}",
    ]
    for row in report["summary"]:
        queries = row["queries"] or 1
        share = 100 * row["identical"] / queries
        with_extended = 100 * (row["identical"] + row["extended"]) / queries
        facets = "-" if row["facets_equal"] is None else str(row["facets_equal"])
        lines.append(
            f"{row['dataset']:<8} {row['class']:<8} {row['queries']:>7} {row['identical']:>10} "
            f"{row['extended']:>9} {row['other order']:>12} {row['differ']:>7} {row['error']:>6} "
            f"{share:>11.1f}% {with_extended:>11.1f}% {facets:>13}"
        )
    lines.append(f"\ncases not identical or with other facet counts: {report['cases_file']}")
    return "\n".join(lines)
