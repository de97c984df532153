"""Query classes for the search benchmark, drawn from the loaded documents with a seeded generator.

Queries taken from the data itself hit real postings of realistic lengths (a fixed word list would
miss on one dataset and hit everything on another), and the seed makes the same dataset give the same
query set on every run and commit, so figures stay comparable. Classes stress different paths of
the engine:

- ``exact``: 1 to 3 consecutive words of a document's title/name or body, as typed;
- ``exact+highlight``: the same queries with ``attributesToHighlight: ["*"]`` (formatting cost);
- ``bm25``: the same queries with ``matchingStrategy: "bm25"`` (the Sift extension's scoring);
- ``prefix``: as-you-type, every prefix of a 2- or 3-word title phrase character by character
  (``s``, ``st``, ..., ``star wars``), one request each, sequences kept in typing order;
- ``typo``: 1 or 2 words with at least one of ≥ 5 letters, every such word misspelt by one edit
  (two from 9 letters), never on the first letter and never shorter than the typo rules need
  (search.md: 1 typo from 5 letters, 2 from 9), so a typo-tolerant engine can still find them;
- ``placeholder``: ``q`` empty;
- ``mixed``: ``exact``, ``prefix``, ``typo`` and ``placeholder`` interleaved in equal shares.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.synthetic import tokenize

CLASSES = ("exact", "exact+highlight", "bm25", "prefix", "typo", "placeholder", "mixed")
LIMIT = 20
_MIXED_FROM = ("exact", "prefix", "typo", "placeholder")
_EDITS = ("substitution", "deletion", "insertion", "transposition")
_ATTEMPTS = 100_000  # draws before giving up on a corpus without suitable words


@dataclass(frozen=True)
class Corpus:
    """Words of each sampled document's title-like and body-like field (body empty when absent)."""

    titles: tuple[tuple[str, ...], ...]
    bodies: tuple[tuple[str, ...], ...]

    @classmethod
    def sample(
        cls, documents: Iterable[dict[str, Any]], title: str, body: str | None, size: int, seed: int
    ) -> Corpus:
        """A seeded reservoir sample of ``size`` documents, so large datasets stream through once."""
        rng = random.Random(seed)
        reservoir: list[dict[str, Any]] = []
        for seen, document in enumerate(documents):
            if seen < size:
                reservoir.append(document)
            elif (slot := rng.randrange(seen + 1)) < size:
                reservoir[slot] = document
        return cls(
            tuple(tuple(tokenize(str(doc.get(title) or ""))) for doc in reservoir),
            tuple(tuple(tokenize(str(doc.get(body) or ""))) if body else () for doc in reservoir),
        )

    def field(self, rng: random.Random) -> tuple[str, ...]:
        """A random document's title or, half of the time when there are bodies, its body."""
        k = rng.randrange(len(self.titles))
        return self.bodies[k] if self.bodies[k] and rng.random() < 0.5 else self.titles[k]


def window(words: Sequence[str], size: int, rng: random.Random) -> list[str]:
    """``size`` consecutive words at a random place (all of them when there are fewer)."""
    start = rng.randrange(max(1, len(words) - size + 1))
    return list(words[start : start + size])


def exact(corpus: Corpus, rng: random.Random, count: int) -> list[str]:
    return _draws(lambda: " ".join(window(corpus.field(rng), rng.randint(1, 3), rng)), count)


def prefix(corpus: Corpus, rng: random.Random, count: int) -> list[str]:
    """Whole typing sequences until there are at least ``count`` requests."""
    typed: list[str] = []
    for _ in range(_ATTEMPTS):
        if len(typed) >= count:
            return typed
        phrase = " ".join(window(rng.choice(corpus.titles), rng.randint(2, 3), rng))
        typed += [phrase[:end] for end in range(1, len(phrase) + 1)]
    raise ValueError("the corpus has no titles to type")


def typo(corpus: Corpus, rng: random.Random, count: int) -> list[str]:
    def draw() -> str:
        words = window(corpus.field(rng), rng.randint(1, 2), rng)
        if not any(len(word) >= 5 for word in words):
            return ""
        return " ".join(misspell(word, rng) for word in words)

    return _draws(draw, count)


def misspell(word: str, rng: random.Random) -> str:
    """``word`` with as many random edits as the typo rules allow for its length (0 below 5 letters)."""
    edits = 2 if len(word) >= 9 else 1 if len(word) >= 5 else 0
    for _ in range(_ATTEMPTS if edits else 0):
        typed = word
        for _ in range(edits):
            typed = edit(typed, rng)
        if typed != word and len(typed) >= (9 if edits == 2 else 5):
            return typed
    return word


def edit(word: str, rng: random.Random) -> str:
    """One substitution, deletion, insertion or transposition, never touching the first letter.

    Draws again until the word changes (a letter replaced by itself, two equal letters swapped).
    """
    while True:
        kind = rng.choice(_EDITS)
        at = rng.randrange(1, len(word) + (kind == "insertion"))
        letter = rng.choice(string.ascii_lowercase)
        if kind == "substitution":
            typed = word[:at] + letter + word[at + 1 :]
        elif kind == "deletion":
            typed = word[:at] + word[at + 1 :]
        elif kind == "insertion":
            typed = word[:at] + letter + word[at:]
        elif at + 1 < len(word):
            typed = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
        else:
            continue
        if typed != word:
            return typed


def _draws(draw: Callable[[], str], count: int) -> list[str]:
    """``count`` non-empty results of ``draw()``."""
    found: list[str] = []
    for _ in range(_ATTEMPTS):
        if len(found) == count:
            return found
        if query := draw():
            found.append(query)
    raise ValueError("the corpus has too few suitable words for this query class")


def interleave(*lists: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Round robin over ``lists``, each cycled up to the longest one's length: equal shares."""
    longest = max(len(items) for items in lists)
    return [items[k % len(items)] for k in range(longest) for items in lists]


def build(corpus: Corpus, seed: int, count: int) -> dict[str, list[dict[str, Any]]]:
    """Request bodies per class; each class gets its own generator, so adding one changes no other."""

    def rng(name: str) -> random.Random:
        return random.Random(f"{seed}:{name}")

    def bodies(queries: list[str]) -> list[dict[str, Any]]:
        return [{"q": q, "limit": LIMIT} for q in queries]

    sets = {
        "exact": bodies(exact(corpus, rng("exact"), count)),
        "prefix": bodies(prefix(corpus, rng("prefix"), count)),
        "typo": bodies(typo(corpus, rng("typo"), count)),
        "placeholder": bodies([""]),
    }
    sets["exact+highlight"] = [{**body, "attributesToHighlight": ["*"]} for body in sets["exact"]]
    sets["bm25"] = [{**body, "matchingStrategy": "bm25"} for body in sets["exact"]]
    sets["mixed"] = interleave(*(sets[name] for name in _MIXED_FROM))
    return {name: sets[name] for name in CLASSES}
