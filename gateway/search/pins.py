"""Dynamic search rules applied to a search (flag ``dynamicSearchRules``): which documents the search's
active rules pin, and where the pinned documents go in the merged hits.

As the reference engine answers (probed black-box where the contract is silent):

- A rule applies when it is ``active``, now is within its ``conditions.time`` (bounds included), the
  query meets ``conditions.query`` (``isEmpty``: the query has no words outside negations, or has
  some; ``words``: every word of it is a word of the query, in any order, case and accents aside;
  words of a several-word phrase and negated words do not count) and the filter meets ``conditions.filter``
  (``pin_filter.py``). Its ``pin`` actions whose selector names this index, or no index, pin.
- A document pinned by several actions keeps the pin of the lowest ``precedence`` (none is the
  lowest), then of the first rule (in creation order) and action. Pins are placed by position,
  then precedence, then the same order; a pin whose position is taken goes right after, one past
  the hits goes last.
- A pinned document need not match the query but must match the filter; an id the index lacks pins
  nothing. It is counted in the totals and facets once, shown once, whatever sort or distinct says
  (it does not deduplicate nor is deduplicated), with ``_rankingScore`` 1 and ``_rankingScoreDetails``
  ``{"pin": {"order": 0, "position": p}}``.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from sanic import Sanic

from common.dynamic_search_rules import instant
from gateway.search.pin_filter import filter_selects

_PHRASE = re.compile(r'"([^"]*)"?')
_NEGATED = re.compile(r'(?:^|(?<=\s))-(?:"[^"]*"?|\S+)')
_WORD = re.compile(r"[^\W_]+")
"""Runs of letters and digits: the underscore separates words, as in the reference's queries."""
_LAST = float("inf")
"""The precedence of a rule without one: after every number."""


@dataclass(frozen=True)
class Pin:
    document_id: str
    position: int
    precedence: float
    order: tuple[int, int]
    """The rule's place among the rules, the action's in the rule: the last tie-breaks."""

    def rank(self) -> tuple[float, float, tuple[int, int]]:
        return (self.position, self.precedence, self.order)


def pins_soon(app: Sanic, uid: str, params: dict[str, Any]) -> asyncio.Future[list[Pin]] | None:
    """``search_pins`` started now, to overlap a search; None while the feature is off."""
    if not app.ctx.features.enabled("dynamicSearchRules"):
        return None
    return asyncio.ensure_future(search_pins(app, uid, params))


async def search_pins(app: Sanic, uid: str, params: dict[str, Any]) -> list[Pin]:
    """The pins of ``uid``'s search with ``params``, in placing order; none while the feature is off."""
    return pins_of(await dynamic_rules(app), uid, params, datetime.now(UTC))


async def dynamic_rules(app: Sanic) -> list[dict[str, Any]]:
    """Every rule, in creation order (one read for all the queries of a request); none while the
    feature is off."""
    if not app.ctx.features.enabled("dynamicSearchRules"):
        return []
    reply = await app.ctx.cluster.ask_scheduler("ListDynamicSearchRules", {})
    rules: list[dict[str, Any]] = reply["results"]
    return rules


def pins_of(rules: Iterable[dict[str, Any]], uid: str, params: dict[str, Any], now: datetime) -> list[Pin]:
    """The pins ``rules`` (in creation order, as the scheduler lists them) give a search of ``uid``
    with ``params`` at ``now``: one per document, in placing order."""
    chosen: dict[str, Pin] = {}
    query = _Query(params.get("q") or "")
    for rule_order, rule in enumerate(rules):
        if not _applies(rule, query, params, now):
            continue
        precedence = rule.get("precedence")
        for action_order, entry in enumerate(rule.get("actions") or ()):
            selector, action = entry["selector"], entry["action"]
            if action.get("type") != "pin" or selector.get("indexUid") not in (None, uid):
                continue
            pin = Pin(
                selector["id"],
                action["position"],
                _LAST if precedence is None else precedence,
                (rule_order, action_order),
            )
            known = chosen.get(pin.document_id)
            if known is None or (pin.precedence, pin.order) < (known.precedence, known.order):
                chosen[pin.document_id] = pin
    return sorted(chosen.values(), key=Pin.rank)


class _Query:
    """What a rule's query condition looks at in ``q``."""

    def __init__(self, q: str) -> None:
        self.empty = _WORD.search(_NEGATED.sub(" ", q)) is None
        """No word outside negations (a phrase's words count, stop words too)."""
        self.words = query_words(q)


def query_words(q: str) -> set[str]:
    """The words a ``words`` condition looks for: those of the query outside negations and
    several-word phrases (a one-word phrase is a word), case and accents folded."""
    text = _NEGATED.sub(" ", q)
    text = _PHRASE.sub(lambda phrase: phrase[1] if len(_WORD.findall(phrase[1])) == 1 else " ", text)
    return {_folded(word) for word in _WORD.findall(text)}


def _folded(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def _applies(rule: dict[str, Any], query: _Query, params: dict[str, Any], now: datetime) -> bool:
    if not rule.get("active", True):
        return False
    conditions = rule.get("conditions") or {}
    window = conditions.get("time") or {}
    start, end = window.get("start"), window.get("end")
    if start is not None and now < instant(start):
        return False
    if end is not None and now > instant(end):
        return False
    wanted = conditions.get("query") or {}
    if wanted.get("isEmpty") is not None and wanted["isEmpty"] != query.empty:
        return False
    if wanted.get("words") is not None and not query_words(wanted["words"]) <= query.words:
        return False
    values = (conditions.get("filter") or {}).get("values")
    return values is None or filter_selects(values, params.get("filter"))


def place(ranked: list[Any], pinned: list[tuple[Pin, Any]], wanted: int) -> list[Any]:
    """The first ``wanted`` of ``ranked`` with the ``pinned`` hits (in placing order) put at their
    positions: each goes where the list has reached its position, the rest after the last hit."""
    placed: list[Any] = []
    waiting = iter(pinned)
    following = next(waiting, None)
    hits = iter(ranked)
    while len(placed) < wanted:
        if following is not None and following[0].position <= len(placed):
            placed.append(following[1])
            following = next(waiting, None)
            continue
        hit = next(hits, None)
        if hit is None:
            break
        placed.append(hit)
    while following is not None and len(placed) < wanted:
        placed.append(following[1])
        following = next(waiting, None)
    return placed


def pin_details(hit: Any, pin: Pin) -> Any:
    """A pinned hit (``runner.RankedHit``) with the score and details the reference shows."""
    return replace(hit, score=1.0, details={"pin": {"order": 0, "position": pin.position}})
