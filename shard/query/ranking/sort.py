"""Sort rules (search.md §5, §7.4): the query's ``sort`` entries and custom ``field:asc|desc`` rules.

A sort rule splits a bucket by the documents' values, read from the field's sort column (geo: the
distance to the point). Its rank has no steps, so it never moves ``_rankingScore``; it carries the value
instead, which the gateway compares across shards: numbers before strings in both directions, documents
without a value last (see ``gateway/search/order.py``). Buckets come out in order from partial sorts of
growing size, so a page of a large bucket costs a partition, not a full sort.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from common.filter.geo import format_float
from common.sort import FieldSort, GeoSort, SortCriterion, SortError, check_sort, parse_sort
from shard.facet.column import SortColumn, sort_column, to_bitmap, to_ids
from shard.facet.reader import FacetReader
from shard.geo.points import GeoPoints, geo_points
from shard.index.read_cache import CacheRef
from shard.query.context import SearchContext
from shard.query.ranking.coverage import Kept
from shard.query.ranking.rules import DEFAULT_RULES, RELEVANCY_RULES, Bucket, Rule
from shard.query.ranking.score import Rank

if TYPE_CHECKING:
    from shard.query.ranking.bucket_sort import Ranker

_FIRST_CHUNK = 64


def _direction(ascending: bool) -> str:
    return "asc" if ascending else "desc"


def _reader(ctx: SearchContext) -> tuple[FacetReader, CacheRef | None]:
    reader = FacetReader(ctx.txn, ctx.env.facets, ctx.index_id, ctx.state)
    return reader, ctx.cache_ref


class FieldSortRule:
    def __init__(self, field: str, ascending: bool, source: str, hidden: bool = False) -> None:
        """``source``: where the rule comes from, ``sort[i]`` or ``rankingRules[j]`` (for errors)."""
        self.name = f"{field}:{_direction(ascending)}"
        self.field = field
        self.ascending = ascending
        self.source = source
        self.hidden = hidden
        self._column: SortColumn | None = None

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        if self._column is None:
            reader, cached = _reader(ranker.ctx)
            self._column = sort_column(reader, self.field, cached)
        column = self._column
        ids = to_ids(docs)
        for ordinal, group in ordered_groups(ids, column.ranks(ids, self.ascending)):
            value = column.value(int(ordinal), self.ascending)
            rank = Rank(self.name, (), {"value": value}, (self.ascending, value), self.hidden)
            yield Bucket(group, rank, kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, (), {"value": None}, (self.ascending, None), self.hidden)


class GeoSortRule:
    def __init__(self, point: tuple[float, float], ascending: bool, source: str) -> None:
        lat, lng = point
        self.name = f"_geoPoint({format_float(lat)}, {format_float(lng)}):{_direction(ascending)}"
        self.point = point
        self.ascending = ascending
        self.source = source
        self.hidden = False
        self._points: GeoPoints | None = None

    def buckets(self, ranker: Ranker, docs: BitMap, kept: Kept, typos: int | None) -> Iterator[Bucket]:
        if self._points is None:
            reader, cached = _reader(ranker.ctx)
            self._points = geo_points(reader, cached)
        points = self._points
        ids = to_ids(docs)
        ids = ids[ids < len(points.lat)]
        ids = ids[~np.isnan(points.lat[ids])]
        missing = BitMap() if len(ids) == len(docs) else docs - to_bitmap(ids)
        for distance, found in points.nearest(ids, self.point, self.ascending):
            group = to_bitmap(found)
            lat, lng = points.point(int(found[0])) or (None, None)
            details = {"value": {"lat": lat, "lng": lng}, "distance": distance}
            yield Bucket(group, Rank(self.name, (), details, (self.ascending, distance)), kept, typos)
        if missing:
            details = {"value": None, "distance": None}
            yield Bucket(missing, Rank(self.name, (), details, (self.ascending, None)), kept, typos)

    def floor(self, ranker: Ranker, kept: Kept) -> Rank:
        return Rank(self.name, (), {"value": None, "distance": None}, (self.ascending, None))


def ordered_groups(
    ids: npt.NDArray[np.uint32], keys: npt.NDArray[np.int32] | npt.NDArray[np.float64]
) -> Iterator[tuple[np.generic, BitMap]]:
    """Documents grouped by equal key, smallest key first; each round sorts only the smallest keys
    (every document tied with the largest of them included), four times more each round."""
    chunk = _FIRST_CHUNK
    while len(ids):
        if len(ids) > 2 * chunk:
            bound = np.partition(keys, chunk)[chunk]
            taken = keys <= bound
            part_ids, part_keys = ids[taken], keys[taken]
            ids, keys = ids[~taken], keys[~taken]
        else:
            part_ids, part_keys = ids, keys
            ids = ids[:0]
        order = np.argsort(part_keys, kind="stable")
        part_ids, part_keys = part_ids[order], part_keys[order]
        starts = np.flatnonzero(np.r_[True, part_keys[1:] != part_keys[:-1]])
        ends = np.r_[starts[1:], len(part_keys)]
        for start, end in zip(starts, ends, strict=True):
            yield part_keys[start], to_bitmap(part_ids[start:end])
        chunk *= 4


def sort_rules(
    ranking_rules: Sequence[str], criteria: Sequence[SortCriterion], displayed: Sequence[str] | None = None
) -> list[list[Rule]]:
    """Per ranking rule, the sort rules it stands for: the query's criteria at ``sort``, a custom
    ``field:asc|desc`` rule itself; a field already sorted and any geo sort after the first are ignored.
    ``displayed``: the displayed attributes (None: all), whose complement gets redacted details."""
    sorted_fields: set[str] = set()
    geo = False
    result: list[list[Rule]] = []
    for position, name in enumerate(ranking_rules):
        rules: list[Rule] = []
        entries: Sequence[SortCriterion]
        if name == "sort":
            entries = criteria
        else:
            field, _, order = name.rpartition(":")
            entries = [FieldSort(field, order == "asc")] if field and order in ("asc", "desc") else []
        for index, entry in enumerate(entries):
            source = f"sort[{index}]" if name == "sort" else f"rankingRules[{position}]"
            if isinstance(entry, GeoSort):
                if not geo:
                    rules.append(GeoSortRule(entry.point, entry.ascending, source))
                geo = True
            elif entry.field not in sorted_fields:
                sorted_fields.add(entry.field)
                hidden = not _shown(entry.field, displayed)
                rules.append(FieldSortRule(entry.field, entry.ascending, source, hidden))
        result.append(rules)
    return result


def rule_groups(rules: Sequence[Rule]) -> list[dict[str, Any] | None]:
    """The query's rules as federated search compares hits (search.md §2.3): None for each run of
    relevancy rules, and for each sort rule what the gateway needs to refuse two queries whose sorts
    cannot be compared (a sort on a hidden field is not named)."""
    groups: list[dict[str, Any] | None] = []
    for rule in rules:
        if isinstance(rule, FieldSortRule | GeoSortRule):
            name = None if rule.hidden else rule.name
            geo = isinstance(rule, GeoSortRule)
            groups.append({"sort": name, "ascending": rule.ascending, "geo": geo, "source": rule.source})
        elif not groups or groups[-1] is not None:
            groups.append(None)
    return groups


def _shown(field: str, displayed: Sequence[str] | None) -> bool:
    """Whether a hit may show ``field``: displayed itself or nested under a displayed attribute."""
    return displayed is None or any(field == name or field.startswith(name + ".") for name in displayed)


def query_sort(
    ctx: SearchContext, entries: Sequence[str] | None, *, documents: bool = False
) -> list[SortCriterion]:
    """The ``sort`` criteria of a search (``invalid_search_sort``) or of a document read
    (``documents``: ``invalid_document_sort``), checked against the index's settings (the gateway checked
    the syntax, the shard holds the settings). A document read sorts by its criteria alone, so it does
    not need the ``sort`` ranking rule."""
    rules = None if documents else ctx.settings.get("rankingRules") or DEFAULT_RULES
    try:
        criteria = parse_sort(entries or [])
        check_sort(
            criteria,
            ranking_rules=rules,
            sortable=ctx.settings.get("sortableAttributes") or [],
            displayed=ctx.settings.get("displayedAttributes") or ["*"],
            index_uid=None if documents else ctx.index_uid,
        )
    except SortError as error:
        raise error.api_error("invalid_document_sort" if documents else "invalid_search_sort") from None
    return criteria


def first_geo_point(criteria: Sequence[SortCriterion]) -> tuple[float, float] | None:
    """The point ``_geoDistance`` is measured from."""
    return next((entry.point for entry in criteria if isinstance(entry, GeoSort)), None)


def in_place_of_relevancy(names: Sequence[str], sorts: Sequence[Sequence[Rule]], rule: Rule) -> list[Rule]:
    """The ranking rules ``names`` with ``rule`` at the first relevancy rule's place (none: absent)
    and each sort rule (``sort_rules``' ``sorts``) at its own: how ``vectorSort`` and ``bm25`` stand
    in for the words, typo, proximity, attribute and exactness rules."""
    rules: list[Rule] = []
    placed = False
    for index, name in enumerate(names):
        if name in RELEVANCY_RULES:
            if not placed:
                rules.append(rule)
                placed = True
        elif index < len(sorts):
            rules.extend(sorts[index])
    return rules
