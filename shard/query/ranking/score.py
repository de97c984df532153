"""Ranks, the relevancy score and its details (search.md §1.6, §7.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

Step = tuple[int, int]
"""(rank r, out of m): r = m is the best a rule gives."""


@dataclass(frozen=True)
class Rank:
    """What one ranking rule said about a bucket of documents."""

    rule: str
    """The key in ``_rankingScoreDetails``."""
    steps: tuple[Step, ...]
    details: dict[str, Any] = field(default_factory=dict)
    sort: tuple[bool, Any] | None = None
    """For sort rules, which have no steps (they do not score): (ascending, the value compared across
    shards: a number, a normalised string or None when the document has none)."""
    hidden: bool = False
    """A sort rule on a field ``displayedAttributes`` hides: its details are redacted."""
    vector: bool = False
    """The ``vectorSort`` rule of a semantic search: its ``similarity`` is the hit's score."""
    similarity: float | None = None
    """With ``vector``: the bucket's similarity, None for documents without an embedding (score 0)."""


SKIPPED = Rank("skipped", ((0, 1),))
"""A rule the search cutoff left unapplied: it scores 0 and stops the details there."""


def fold(steps: Sequence[Step]) -> float:
    """Each step subdivides the interval the previous ones left, so scores follow bucket order."""
    numerator, denominator = 1, 1
    for rank, out_of in steps:
        numerator = (numerator - 1) * out_of + rank
        denominator *= out_of
    return numerator / denominator


def score(ranks: Sequence[Rank]) -> float:
    """A vector similarity replaces the relevancy score (search.md §7.5): a semantic search has no
    other relevancy rule."""
    for rank in ranks:
        if rank.vector:
            return rank.similarity or 0.0
    return fold([step for rank in ranks for step in rank.steps])


NO_SIMILARITY = -1.0
"""The merge key of documents without an embedding: after every similarity (0 to 1)."""


def sort_key(ranks: Sequence[Rank]) -> list[Any]:
    """Local scores step by step, and ``[ascending, value]`` for sort rules: comparing them in order
    (``gateway/search/order.py``) is comparing buckets."""
    key: list[Any] = []
    for rank in ranks:
        if rank.sort is not None:
            key.append(list(rank.sort))
        elif rank.vector:
            key.append(NO_SIMILARITY if rank.similarity is None else rank.similarity)
        key.extend(rank_value / out_of for rank_value, out_of in rank.steps)
    return key


def score_groups(ranks: Sequence[Rank]) -> list[Any]:
    """The weighted score sequence federated search compares (search.md §2.3) before weighting: each
    run of consecutive relevancy rules folded into one score, each sort rule as ``[ascending, value]``."""
    groups: list[Any] = []
    steps: list[Step] = []
    for rank in ranks:
        if rank.sort is None and not rank.vector:
            steps.extend(rank.steps)
            continue
        if steps:
            groups.append(fold(steps))
            steps = []
        groups.append(list(rank.sort) if rank.sort is not None else rank.similarity or 0.0)
    if steps:
        groups.append(fold(steps))
    return groups


def details(ranks: Sequence[Rank]) -> dict[str, Any]:
    """``_rankingScoreDetails`` (search.md §1.6): a sort on a hidden field names neither the field nor
    the value, so it cannot reveal what ``displayedAttributes`` hides."""
    rendered: dict[str, Any] = {}
    for order, rank in enumerate(ranks):
        if rank.hidden:
            rendered[f"<hidden-rule-{order}>"] = {"order": order, "value": "<hidden>"}
            continue
        entry: dict[str, Any] = {"order": order, **rank.details}
        if rank.rule != "skipped" and rank.sort is None and not rank.vector:
            entry["score"] = fold(rank.steps)
        rendered[rank.rule] = entry
    return rendered
