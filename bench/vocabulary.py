"""``python -m bench.vocabulary``: vocabulary lookup latency on a words table of ~1M distinct words.

The shared datasets hold ~17k distinct words (``bench.synthetic.shared_vocabulary``), far from the
millions a large corpus accumulates (names, typos, rare terms), and lookup cost grows with the number
of words near the query. So the table is topped up with pseudo-words from an order-3 character
Markov chain trained on the real words: they have the real letter and n-gram distribution, hence a
realistic density of near neighbours. Each word is put in 1 to 3 fields, as the indexer would.

Query words are real words of 3-12 characters, every other one with one random edit past the first
character (what typo tolerance is for), each looked up with 1 and 2 typos whatever its length (the
contract allows 2 from 9 characters: longer words are the costly ones). Figures are per lookup in
one read transaction, wall-clock and the thread's CPU time.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import os
import random
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyroaring import BitMap

from bench import synthetic
from shard.index.env import StoreEnv, Txn
from shard.index.postings import encode_bitmap, term_keys
from shard.query.typos import typo_words
from shard.query.vocabulary import prefix_words

INDEX_ID = 1
_ORDER = 3
_START, _END = "^", "$"
_MAX_LETTERS = 16
_LETTERS = "abcdefghijklmnopqrstuvwxyz"
Chain = dict[str, tuple[list[str], list[int]]]


def train(words: list[str]) -> Chain:
    """Next-character counts after every ``_ORDER``-character context, as cumulative weights."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for word in words:
        padded = _START * _ORDER + word + _END
        for end in range(_ORDER, len(padded)):
            counts[padded[end - _ORDER : end]][padded[end]] += 1
    return {context: (list(c), list(itertools.accumulate(c.values()))) for context, c in counts.items()}


def pseudo_word(chain: Chain, rng: random.Random) -> str | None:
    """None for a walk that runs past ``_MAX_LETTERS``: truncating would pile words up at that length."""
    context, word = _START * _ORDER, ""
    while len(word) < _MAX_LETTERS:
        chars, weights = chain[context]
        char = chars[bisect.bisect_right(weights, rng.random() * weights[-1])]
        if char == _END:
            return word
        word += char
        context = context[1:] + char
    return None


def vocabulary(size: int, seed: int) -> list[str]:
    real = list(synthetic.shared_vocabulary().words)
    chain, rng = train(real), random.Random(seed)
    words = set(real)
    while len(words) < size:
        word = pseudo_word(chain, rng)
        if word:
            words.add(word)
    return sorted(words)


def build(env: StoreEnv, words: list[str], seed: int) -> None:
    """Keys are put in ascending order with ``append``, so the B-tree pages are packed like a bulk load."""
    rng = random.Random(seed)
    with env.lmdb.begin(write=True) as txn:
        for word in words:
            for field_id in sorted(rng.sample(range(4), rng.choice((1, 1, 1, 2, 2, 3)))):
                [key] = term_keys(INDEX_ID, [word], field_id)
                txn.put(key, encode_bitmap(BitMap([rng.randrange(1_000_000)])), db=env.words, append=True)


def misspell(word: str, rng: random.Random) -> str:
    at = rng.randrange(1, len(word))
    edit = rng.choice(("substitute", "delete", "insert", "transpose"))
    if edit == "substitute":
        return word[:at] + rng.choice(_LETTERS) + word[at + 1 :]
    if edit == "delete" and len(word) > 3:
        return word[:at] + word[at + 1 :]
    if edit == "transpose" and at < len(word) - 1:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return word[:at] + rng.choice(_LETTERS) + word[at:]


def queries(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    real = sorted(w for w in synthetic.shared_vocabulary().words if 3 <= len(w) <= 12 and w.isalpha())
    picked = rng.sample(real, count)
    return [misspell(word, rng) if i % 2 else word for i, word in enumerate(picked)]


@dataclass(frozen=True)
class Figures:
    """Milliseconds per lookup (median and p99 over the query words), and words returned per lookup."""

    wall_median: float
    wall_p99: float
    cpu_median: float
    cpu_p99: float
    words: float


def measure(lookup: Callable[[str], int], words: list[str], repeats: int) -> Figures:
    """Each lookup's best of ``repeats`` runs: the lookup is deterministic, so slower runs only
    measure other processes sharing the machine. CPU time is the thread's own."""
    for word in words[:20]:
        lookup(word)
    walls, cpus, sizes = [], [], []
    for word in words:
        wall = cpu = float("inf")
        for _ in range(repeats):
            began, began_cpu = time.perf_counter(), time.thread_time()
            size = lookup(word)
            cpu = min(cpu, time.thread_time() - began_cpu)
            wall = min(wall, time.perf_counter() - began)
        walls.append(wall * 1000)
        cpus.append(cpu * 1000)
        sizes.append(size)
    return Figures(*_median_p99(walls), *_median_p99(cpus), statistics.fmean(sizes))


def _median_p99(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def run(txn: Txn, env: StoreEnv, words: list[str], repeats: int) -> list[tuple[str, Figures]]:
    rows = []
    for max_typos, prefix in itertools.product((1, 2), (False, True)):

        def typo(word: str, max_typos: int = max_typos, prefix: bool = prefix) -> int:
            return len(typo_words(txn, env.words, INDEX_ID, word, max_typos, prefix=prefix))

        label = f"typo_words typos={max_typos} prefix={prefix}"
        rows.append((label, measure(typo, words, repeats)))
    for length in (1, 2, 3, 4):
        starts = [word[:length] for word in words]

        def expand(start: str) -> int:
            return len(prefix_words(txn, env.words, INDEX_ID, start))

        rows.append((f"prefix_words {length} char(s)", measure(expand, starts, repeats)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--words", type=int, default=1_000_000, help="distinct words in the table")
    parser.add_argument("--queries", type=int, default=300, help="query words per lookup kind")
    parser.add_argument("--repeats", type=int, default=3, help="runs per lookup, the best one counts")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    began = time.perf_counter()
    words = vocabulary(args.words, args.seed)
    lookups = queries(args.queries, args.seed)
    with tempfile.TemporaryDirectory(prefix="sift-vocabulary-") as directory:
        env = StoreEnv(Path(directory))
        build(env, words, args.seed)
        print(f"vocabulary: {len(words):,} distinct words, built in {time.perf_counter() - began:.1f} s")
        print(f"queries: {len(lookups)} words of 3-12 characters, half misspelt once; best of {args.repeats}")
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        header = ("lookup", "wall median", "wall p99", "cpu median", "cpu p99", "words")
        print(f"{header[0]:<34}" + "".join(f"{cell:>12}" for cell in header[1:]))
        with env.lmdb.begin() as txn:
            for label, figures in run(txn, env, lookups, args.repeats):
                cells = (figures.wall_median, figures.wall_p99, figures.cpu_median, figures.cpu_p99)
                print(
                    f"{label:<34}" + "".join(f"{cell:>9.3f} ms" for cell in cells) + f"{figures.words:>12.1f}"
                )
        env.close()


if __name__ == "__main__":
    main()
