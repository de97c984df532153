"""A seeded synthetic corpus for indexing benchmarks: as many documents as wanted, shaped like prose.

The shared datasets are too small (1,688 movies) or too uniform (cities: names and numbers) to show
how indexing scales with text volume. This corpus draws its words from the observed word frequencies
of the movies' ``title``/``overview`` and Cranfield's ``title``/``text`` (a Zipf-like rank-frequency
curve, reproduced by sampling ranks from an alias table), so posting-list lengths and term skew look like
real text. Its vocabulary stays the datasets' ~17k words whatever N is, unlike a real corpus whose
vocabulary keeps growing: term-dictionary size is underestimated at large N.

Documents are generated in fixed blocks of ``BLOCK_DOCS``, each from its own generator seeded by
``(seed, block number)``, with every random draw of a block vectorised. So document *i* depends only on
the seed, the vocabulary and *i*: a corpus of N documents is the same whatever chunk size reads it, and
is a prefix of every larger corpus of the same seed; nothing larger than a block is ever held.

``python -m bench.synthetic --docs 1000000 --seed 42 --out /tmp/synthetic.ndjson`` writes NDJSON.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import orjson

from bench.datasets import DATASETS, chunked

BLOCK_DOCS = 1000
DEFAULT_SEED = 42
TITLE_WORDS = (2, 12)
BODY_WORDS = (3, 600)
TAGS = (1, 4)
YEARS = (1900, 2025)
_BODY_MEDIAN_WORDS = 60
_BODY_SIGMA = 0.8  # P(body > 600 words) ~ 0.2 %: a long tail, rarely capped
_MEAN_SENTENCE_WORDS = 13
_COMMA_RATE = 0.06
_TAG_SKIP_TOP = 100  # tags are content words: not "the", "of", ...
_TAG_MIN_CHARS = 4
# Which text fields feed the word counts, per shared dataset.
VOCABULARY_SOURCES = {"movies": ("title", "overview"), "cranfield": ("title", "text")}
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
# A body word's form: capitalised or not (sentence start) x followed by nothing, a comma or a period.
_PUNCTUATION = ("", ",", ".")
_CAPITAL = len(_PUNCTUATION)


def tokenize(text: str) -> list[str]:
    """Lowercase runs of letters (apostrophes inside words kept): digits and punctuation split words."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Vocabulary:
    """Words by descending count (ties alphabetical, so the order is stable) and their counts."""

    words: tuple[str, ...]
    counts: tuple[int, ...]

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Vocabulary:
        counter = Counter(word for text in texts for word in tokenize(text))
        ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
        return cls(tuple(w for w, _ in ranked), tuple(c for _, c in ranked))

    @cached_property
    def sampler(self) -> AliasTable:
        """Draws ranks with the observed frequencies."""
        return AliasTable.of(np.asarray(self.counts, dtype=np.float64))

    @cached_property
    def tag_ranks(self) -> np.ndarray:
        """Ranks eligible as tags: past the function words and at least ``_TAG_MIN_CHARS`` letters."""
        return np.array(
            [r for r, w in enumerate(self.words) if r >= _TAG_SKIP_TOP and len(w) >= _TAG_MIN_CHARS],
            dtype=np.int64,
        )

    @cached_property
    def tag_sampler(self) -> AliasTable:
        """Draws indices into ``tag_ranks`` with those words' observed frequencies."""
        return AliasTable.of(np.asarray(self.counts, dtype=np.float64)[self.tag_ranks])

    @cached_property
    def forms(self) -> np.ndarray:
        """Object array of every word in every body form; form ``f`` of rank ``r`` is at ``f * V + r``."""
        forms = [
            (word.capitalize() if capital else word) + mark
            for capital in (False, True)
            for mark in _PUNCTUATION
            for word in self.words
        ]
        return np.array(forms, dtype=object)

    @cached_property
    def form_lengths(self) -> np.ndarray:
        """Characters of each form plus the space that follows it, to slice a block's joined text."""
        return np.fromiter((len(form) + 1 for form in self.forms), dtype=np.int64, count=len(self.forms))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.sampler.draw(rng, size)

    def sample_tags(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.tag_ranks[self.tag_sampler.draw(rng, size)]


@dataclass(frozen=True)
class AliasTable:
    """Walker's alias method: O(1) vectorised draws, about 3x faster than ``searchsorted`` on a CDF.

    Column ``i`` is drawn uniformly, then kept with probability ``keep[i]`` or replaced by ``alias[i]``.
    """

    keep: np.ndarray
    alias: np.ndarray

    @classmethod
    def of(cls, weights: np.ndarray) -> AliasTable:
        """Vose's construction: pair each under-full column with an over-full one that tops it up."""
        n = len(weights)
        scaled = (weights * (n / weights.sum())).tolist()
        alias = list(range(n))
        small = [i for i, w in enumerate(scaled) if w < 1.0]
        large = [i for i, w in enumerate(scaled) if w >= 1.0]
        while small and large:
            under, over = small.pop(), large.pop()
            alias[under] = over
            scaled[over] += scaled[under] - 1.0
            (small if scaled[over] < 1.0 else large).append(over)
        for i in small + large:  # left over only through rounding: full columns
            scaled[i] = 1.0
        return cls(np.array(scaled), np.array(alias, dtype=np.int64))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        column = rng.integers(0, len(self.keep), size)
        return np.where(rng.random(size) < self.keep[column], column, self.alias[column])


def source_texts() -> Iterator[str]:
    """Every text field named in ``VOCABULARY_SOURCES``, dataset by dataset."""
    for name, fields in VOCABULARY_SOURCES.items():
        for document in DATASETS[name].documents():
            yield from (str(document.get(field) or "") for field in fields)


@lru_cache(maxsize=1)
def shared_vocabulary() -> Vocabulary:
    """The word counts of ``source_texts`` (~0.2 s to build, cached per process)."""
    return Vocabulary.from_texts(source_texts())


def documents(
    docs: int, seed: int = DEFAULT_SEED, vocabulary: Vocabulary | None = None
) -> Iterator[dict[str, Any]]:
    """Documents ``1..docs`` in id order, generated one block at a time."""
    vocabulary = vocabulary or shared_vocabulary()
    for block in range(-(-docs // BLOCK_DOCS)):
        first = block * BLOCK_DOCS
        yield from _block(vocabulary, seed, block)[: docs - first]


def chunks(
    docs: int, chunk_docs: int, seed: int = DEFAULT_SEED, vocabulary: Vocabulary | None = None
) -> Iterator[list[dict[str, Any]]]:
    """``documents`` in lists of ``chunk_docs`` (the last may be shorter): one request body each."""
    return chunked(documents(docs, seed, vocabulary), chunk_docs)


def write_ndjson(out: BinaryIO, docs: int, seed: int = DEFAULT_SEED, chunk_docs: int = 10_000) -> list[int]:
    """Write the corpus to ``out`` a line at a time; return the bytes of each ``chunk_docs`` lines.

    The sizes let a reader send the file back as request bodies with plain ``read(size)``. Lines are
    not gathered per chunk first: 20,000 documents held as dicts cost ~180 MB of peak RSS.
    """
    sizes: list[int] = []
    for k, document in enumerate(documents(docs, seed)):
        written = out.write(orjson.dumps(document, option=orjson.OPT_APPEND_NEWLINE))
        if k % chunk_docs:
            sizes[-1] += written
        else:
            sizes.append(written)
    return sizes


def _block(vocabulary: Vocabulary, seed: int, block: int) -> list[dict[str, Any]]:
    """The ``BLOCK_DOCS`` documents of block ``block``: lengths first, then every word in one draw."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))
    n = BLOCK_DOCS
    title_lengths = TITLE_WORDS[0] + rng.binomial(TITLE_WORDS[1] - TITLE_WORDS[0], 0.3, n)  # mode 5
    body_lengths = np.clip(
        np.rint(rng.lognormal(np.log(_BODY_MEDIAN_WORDS), _BODY_SIGMA, n)), *BODY_WORDS
    ).astype(np.int64)
    years = YEARS[1] - np.minimum(rng.exponential(20.0, n).astype(np.int64), YEARS[1] - YEARS[0])
    tag_counts = rng.integers(TAGS[0], TAGS[1] + 1, n)
    ranks = vocabulary.sample(rng, int(title_lengths.sum() + body_lengths.sum()))
    tag_words = [vocabulary.words[r] for r in vocabulary.sample_tags(rng, int(tag_counts.sum()))]
    title_ranks, body_ranks = ranks[: title_lengths.sum()], ranks[title_lengths.sum() :]
    titles = _texts(
        vocabulary, title_ranks, _title_forms(vocabulary, title_ranks, title_lengths), title_lengths
    )
    bodies = _texts(vocabulary, body_ranks, _body_forms(rng, body_lengths), body_lengths)
    tag_ends = np.cumsum(tag_counts).tolist()
    first_id = block * n + 1
    return [
        {
            "id": first_id + k,
            "title": titles[k],
            "body": bodies[k],
            "year": year,
            "tags": list(dict.fromkeys(tag_words[end - count : end])),
        }
        for k, (year, count, end) in enumerate(
            zip(years.tolist(), tag_counts.tolist(), tag_ends, strict=True)
        )
    ]


def _title_forms(vocabulary: Vocabulary, ranks: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Title case: the first word and every word longer than three letters capitalised."""
    first = np.zeros(len(ranks), dtype=bool)
    first[_starts(lengths)] = True
    long_word = vocabulary.form_lengths[ranks] > 4  # 3 letters + the trailing space
    return np.where(first | long_word, _CAPITAL, 0)


def _body_forms(rng: np.random.Generator, lengths: np.ndarray) -> np.ndarray:
    """Sentences of 3+ words (Poisson around ``_MEAN_SENTENCE_WORDS``), a document's end closing one."""
    total = int(lengths.sum())
    sentence_lengths = 3 + rng.poisson(_MEAN_SENTENCE_WORDS - 3, total // 3 + 1)
    ends = np.cumsum(sentence_lengths) - 1
    is_end = np.zeros(total, dtype=bool)
    is_end[ends[ends < total]] = True
    is_end[np.cumsum(lengths) - 1] = True
    is_start = np.concatenate(([True], is_end[:-1]))
    comma = rng.random(total) < _COMMA_RATE
    return np.where(is_start, _CAPITAL, 0) + np.where(is_end, 2, np.where(comma, 1, 0))


def _starts(lengths: np.ndarray) -> np.ndarray:
    return np.cumsum(lengths) - lengths


def _texts(vocabulary: Vocabulary, ranks: np.ndarray, forms: np.ndarray, lengths: np.ndarray) -> list[str]:
    """Join the whole block's words once, then slice out each document's text by character offsets."""
    indices = forms * len(vocabulary.words) + ranks
    text = " ".join(vocabulary.forms[indices].tolist())
    offsets = np.concatenate(([0], np.cumsum(vocabulary.form_lengths[indices])))
    bounds = offsets[np.cumsum(lengths)]
    return [text[a:b] for a, b in zip(offsets[_starts(lengths)].tolist(), (bounds - 1).tolist(), strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.synthetic", description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, help="NDJSON file to write; without it only count the bytes")
    args = parser.parse_args(argv)
    if args.docs < 1:
        parser.error("--docs must be positive")
    started = time.monotonic()
    with open(args.out or "/dev/null", "wb") as out:
        size = sum(write_ndjson(out, args.docs, args.seed))
    elapsed = time.monotonic() - started
    vocabulary = shared_vocabulary()
    print(
        f"{args.docs} documents, seed {args.seed}: {size} bytes ({size / 1e6:.1f} MB, "
        f"{size / args.docs:.0f} B/doc) in {elapsed:.1f} s; vocabulary {len(vocabulary.words)} words"
        + (f" -> {args.out}" if args.out else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
