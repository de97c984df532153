"""``python -m bench.run known-item``: does a known title come back when typed the ways people type it?

Each query is made from one document's title (``movies``) or name (``cities``) with a seeded
generator, and that document is the item looked for; any document whose title is the same text
(case aside) counts as found too (cities has many ``San José``). Kinds:

- ``exact``: the title as written;
- ``typo1``: one word of 5+ letters misspelt by one edit (substitution, insertion, deletion or
  transposition; never the first letter, never shorter than 5 letters: the typo rules of search.md
  must allow it);
- ``typo2``: two edits: both in one word of 9+ letters (at a distance of two from it), or one in each
  of two words of 5+ letters;
- ``dropped``: a title of 3+ words with one word left out;
- ``split``: a word of 6+ letters typed with a space inside (``sun flower``), both parts 2+ letters;
- ``joined``: two adjacent words typed without the space between them (``starwars``);
- ``first``: the first 2 to n-1 words of a title of 3+ words;
- ``prefix1`` .. ``prefix6``: as typed, the leading words and the next one cut to its first n letters
  (at least one whole word first, and the cut word longer than n).

For each query: **success@1** (the item is the first hit), **success@10** (in the first ten) and
**MRR** (1 / rank within the first ten, else 0), averaged per kind and dataset. Sift runs on a fresh
cluster, or on ``--data-dir`` (loaded once, reused). ``--reference URL`` sends the same queries to a
running reference engine holding the datasets under the same index names (loaded there when
missing); ``--reference PATH`` starts the reference from its xz archive (``bench/reference.py``) and
loads them. Queries the item is found for by one engine and not the other within ten go to a JSON
Lines file, to read why.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench import datasets, queries
from bench.differential import add_query_set_options, recorded_options
from bench.loadgen import REPO_ROOT
from bench.reference import running_reference
from bench.search import TEXT_FIELDS, bench_cluster, ensure_loaded

KINDS = (
    "exact",
    "typo1",
    "typo2",
    "dropped",
    "split",
    "joined",
    "first",
    *(f"prefix{n}" for n in range(1, 7)),
)
DEPTH = 10
RESULTS_DIR = REPO_ROOT / "bench" / "results"
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_LOAD_TIMEOUT = 1800.0

Make = Callable[[str, list[str], random.Random], str | None]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run known-item", description=__doc__.splitlines()[0]
    )
    add_query_set_options(parser, "--kinds", KINDS, queries=200, seed=24)
    parser.add_argument(
        "--reference",
        help="a running reference engine's URL (http://127.0.0.1:7800) or the path of its xz archive",
    )
    parser.add_argument("--cases", type=Path, help="queries found by one engine only (JSON Lines)")
    parser.add_argument("--json", type=Path, help="result file; default bench/results/known-item-<time>.json")
    args = parser.parse_args(argv)
    if args.queries < 1:
        parser.error("--queries must be positive")
    return args


def _exact(title: str, words: list[str], rng: random.Random) -> str | None:
    return title


def _typed(word: str, edits: int, rng: random.Random) -> str:
    """``word`` with ``edits`` random edits, still long enough for that many typos (search.md: 5, 9)
    and that far from it (two edits may undo each other, or make a distance of three)."""
    shortest = 9 if edits == 2 else 5
    for _ in range(1000):
        typed = word
        for _ in range(edits):
            typed = queries.edit(typed, rng)
        if len(typed) >= shortest and distance(typed.lower(), word.lower()) == edits:
            return typed
    return word


def distance(a: str, b: str) -> int:
    """Edit distance counting a transposition of adjacent letters as one edit (optimal string alignment)."""
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def _typo(edits: int) -> Make:
    def make(title: str, words: list[str], rng: random.Random) -> str | None:
        # Letters only: the engines cut ``Charlie's`` into ``charlie`` and ``s``, whose typo allowances
        # are not that of a 9-character word.
        long = [k for k, word in enumerate(words) if len(word) >= 9 and word.isalpha()]
        five = [k for k, word in enumerate(words) if len(word) >= 5 and word.isalpha()]
        typed = list(words)
        if edits == 1 or (long and (len(five) < 2 or rng.random() < 0.5)):
            if not (long if edits == 2 else five):
                return None
            at = rng.choice(long if edits == 2 else five)
            typed[at] = _typed(words[at], edits, rng)
        elif len(five) >= 2:
            for at in rng.sample(five, 2):
                typed[at] = _typed(words[at], 1, rng)
        else:
            return None
        return " ".join(typed) if typed != words else None

    return make


def _dropped(title: str, words: list[str], rng: random.Random) -> str | None:
    if len(words) < 3:
        return None
    at = rng.randrange(len(words))
    return " ".join(words[:at] + words[at + 1 :])


def _split(title: str, words: list[str], rng: random.Random) -> str | None:
    long = [k for k, word in enumerate(words) if len(word) >= 6 and word.isalpha()]
    if not long:
        return None
    at = rng.choice(long)
    cut = rng.randint(2, len(words[at]) - 2)
    return " ".join([*words[:at], words[at][:cut], words[at][cut:], *words[at + 1 :]])


def _joined(title: str, words: list[str], rng: random.Random) -> str | None:
    if len(words) < 2:
        return None
    at = rng.randrange(len(words) - 1)
    return " ".join([*words[:at], words[at] + words[at + 1], *words[at + 2 :]])


def _first(title: str, words: list[str], rng: random.Random) -> str | None:
    if len(words) < 3:
        return None
    return " ".join(words[: rng.randint(2, len(words) - 1)])


def _prefix(letters: int) -> Make:
    def make(title: str, words: list[str], rng: random.Random) -> str | None:
        cuttable = [k for k in range(1, len(words)) if len(words[k]) > letters]
        if not cuttable:
            return None
        at = rng.choice(cuttable)
        return " ".join([*words[:at], words[at][:letters]])

    return make


MAKERS: dict[str, Make] = {
    "exact": _exact,
    "typo1": _typo(1),
    "typo2": _typo(2),
    "dropped": _dropped,
    "split": _split,
    "joined": _joined,
    "first": _first,
    **{f"prefix{n}": _prefix(n) for n in range(1, 7)},
}


def same_title(title: str) -> str:
    return " ".join(title.lower().split())


def build(
    dataset: str, kinds: list[str], seed: int, count: int
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[Any]]]:
    """Per kind, ``count`` distinct queries with their item; and the ids of each title's documents."""
    title_field = TEXT_FIELDS[dataset][0]
    key = datasets.DATASETS[dataset].primary_key
    titles: list[tuple[Any, str]] = []
    by_title: dict[str, list[Any]] = {}
    for document in datasets.DATASETS[dataset].documents():
        title = str(document.get(title_field) or "").strip()
        if title:
            titles.append((document[key], title))
            by_title.setdefault(same_title(title), []).append(document[key])
    sets: dict[str, list[dict[str, Any]]] = {}
    for kind in kinds:
        rng = random.Random(f"{seed}:{dataset}:{kind}")
        made: dict[str, dict[str, Any]] = {}
        for _ in range(200 * count):
            if len(made) == count:
                break
            doc_id, title = rng.choice(titles)
            query = MAKERS[kind](title, _WORD.findall(title), rng)
            if query and query not in made:
                made[query] = {"q": query, "id": doc_id, "title": title}
        sets[kind] = list(made.values())
    return sets, by_title


def rank(client: httpx.Client, dataset: str, query: str, wanted: set[Any]) -> tuple[int | None, list[Any]]:
    """The 1-based rank of the first wanted document within the first ``DEPTH`` hits, and the hits."""
    key = datasets.DATASETS[dataset].primary_key
    response = client.post(
        f"/indexes/{dataset}/search", json={"q": query, "limit": DEPTH, "attributesToRetrieve": [key]}
    )
    response.raise_for_status()
    hits = [hit[key] for hit in response.json()["hits"]]
    found = next((k + 1 for k, doc_id in enumerate(hits) if doc_id in wanted), None)
    return found, hits


def score(ranks: list[int | None]) -> dict[str, float]:
    count = len(ranks) or 1
    return {
        "success@1": sum(r == 1 for r in ranks) / count,
        "success@10": sum(r is not None for r in ranks) / count,
        "mrr": sum(1 / r for r in ranks if r is not None) / count,
    }


@contextmanager
def reference_client(target: str | None) -> Iterator[httpx.Client | None]:
    if target is None:
        yield None
    elif target.startswith(("http://", "https://")):
        with httpx.Client(base_url=target, timeout=300.0) as client:
            yield client
    else:
        with running_reference(Path(target)) as url, httpx.Client(base_url=url, timeout=300.0) as client:
            yield client


def ensure_reference_loaded(client: httpx.Client, dataset: str) -> None:
    """The dataset in the reference's index of that name; loaded when the index is missing."""
    if client.get(f"/indexes/{dataset}/stats").status_code == 200:
        return
    print(f"loading {dataset} into the reference ...", file=sys.stderr, flush=True)
    datasets.load(str(client.base_url), dataset, dataset, chunk_size=20_000)


def run(args: argparse.Namespace, environment: dict[str, Any]) -> dict[str, Any]:
    started_at = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    stamp = time.strftime("%Y%m%dT%H%M%S")
    rows: list[dict[str, Any]] = []
    cases: list[dict[str, Any]] = []
    engines = ["sift"] + (["reference"] if args.reference else [])
    with bench_cluster(args, timeout=_LOAD_TIMEOUT) as (_, sift), reference_client(args.reference) as ref:
        clients = {"sift": sift, "reference": ref}
        for dataset in args.datasets:
            ensure_loaded(sift, dataset, None, args.seed)
            if ref is not None:
                ensure_reference_loaded(ref, dataset)
            sets, by_title = build(dataset, args.kinds, args.seed, args.queries)
            for kind, items in sets.items():
                print(f"{dataset} {kind}: {len(items)} queries ...", file=sys.stderr, flush=True)
                ranks: dict[str, list[int | None]] = {engine: [] for engine in engines}
                for item in items:
                    wanted = set(by_title[same_title(item["title"])])
                    found: dict[str, tuple[int | None, list[Any]]] = {}
                    for engine in engines:
                        client = clients[engine]
                        assert client is not None
                        found[engine] = rank(client, dataset, item["q"], wanted)
                        ranks[engine].append(found[engine][0])
                    if len({found[engine][0] is None for engine in engines}) > 1 or found["sift"][0] is None:
                        cases.append(
                            {"dataset": dataset, "kind": kind, **item}
                            | {f"{engine}_rank": found[engine][0] for engine in engines}
                            | {f"{engine}_hits": found[engine][1] for engine in engines}
                        )
                rows.append(
                    {
                        "dataset": dataset,
                        "kind": kind,
                        "queries": len(items),
                        **{engine: score(ranks[engine]) for engine in engines},
                    }
                )
    path = args.cases or RESULTS_DIR / f"known-item-{stamp}-cases.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(case) + b"\n" for case in cases))
    return {
        "scenario": "known-item",
        "description": "a known title found from exact, misspelt, partial and as-you-type queries",
        "started_at": started_at,
        "options": recorded_options(args),
        "environment": environment,
        "engines": engines,
        "rows": rows,
        "cases_file": str(path),
    }


def render(report: dict[str, Any]) -> str:
    options, env = report["options"], report["environment"]
    engines = report["engines"]
    header = f"{'dataset':<8} {'kind':<8} {'queries':>7}"
    for engine in engines:
        header += f" | {engine[:9]:>9} s@1 {'s@10':>6} {'MRR':>6}"
    lines = [
        f"{report['scenario']}: {report['description']}",
        f"seed={options['seed']} queries/kind={options['queries']} shards={options['shards']} "
        f"commit {env['commit']}, load avg {env['loadavg_before']:.2f} before start",
        "",
        header,
    ]
    for row in report["rows"]:
        line = f"{row['dataset']:<8} {row['kind']:<8} {row['queries']:>7}"
        for engine in engines:
            figures = row[engine]
            line += f" | {figures['success@1']:>13.3f} {figures['success@10']:>6.3f} {figures['mrr']:>6.3f}"
        lines.append(line)
    lines.append(f"\nqueries missed within {DEPTH} (by Sift, or by one engine only): {report['cases_file']}")
    return "\n".join(lines)
