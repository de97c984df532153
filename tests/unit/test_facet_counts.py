"""The pure parts of faceting: number keys, facet-search prefix matching with typos, summing shards."""

from __future__ import annotations

from common.facets import number_key
from gateway.search.facets import FieldCounts, facet_hits
from shard.facet.search import _prefix_within


def test_number_keys_read_like_rust_f64_display() -> None:
    assert [number_key(v) for v in (1990.0, 2.5, -3.0, 0.0, 1e20, 1e-7)] == [
        "1990",
        "2.5",
        "-3",
        "0",
        "100000000000000000000",
        "0.0000001",
    ]


def test_prefix_within_typos() -> None:
    one = _prefix_within("jane", 1)
    assert one("jane austen") and one("jnae") and one("jan") and one("jxne doe")
    assert not one("austen jane") and not one("xxne")
    assert _prefix_within("comdy", 1)("comedy")
    assert not _prefix_within("comdy", 0)("comedy")
    assert _prefix_within("anythng", 2)("anything at all")


def test_sums_keep_the_first_spelling_and_cut_after_numbers() -> None:
    counts = FieldCounts("alpha")
    counts.add_numbers([[10.0, 1], [9.0, 2]])
    counts.add_numbers([[9.0, 1]])
    counts.add_strings([["blue", 2, 50, "BLUE"], ["red", 1, 3, "Red"]])
    counts.add_strings([["blue", 1, 7, "Blue"]])
    assert counts.distribution(3, 5000) == {"9": 3, "10": 1, "Blue": 3}
    # at most 3000 candidates: numbers in the order of their strings
    assert counts.distribution(10, 10) == {"10": 1, "9": 3, "Blue": 3, "Red": 1}
    by_count = FieldCounts("count", strings=dict(counts.strings))
    assert by_count.distribution(1, 10) == {"Blue": 3}


def test_facet_hits_sum_shards() -> None:
    replies = [
        {"order": "alpha", "maxValuesPerFacet": 2, "hits": [["a", 1, 9, "A"], ["b", 2, 1, "b"]]},
        {"order": "alpha", "maxValuesPerFacet": 2, "hits": [["a", 3, 2, "a"], ["c", 5, 4, "C"]]},
    ]
    assert facet_hits(replies) == [{"value": "a", "count": 4}, {"value": "b", "count": 2}]
