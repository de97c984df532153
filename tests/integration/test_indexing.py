"""What indexing makes searchable, through a real two-shard cluster (core.md §3.3, search.md §6.2).

``_geo``, ``_geojson`` and ``_vectors`` hold coordinates, shapes and embeddings: the reference engine never
indexes them as words (a document's latitude is not found by searching for it), whatever
``searchableAttributes`` says, while the same number in an ordinary field is found.
"""

from __future__ import annotations

from tests.integration.search_support import found, make_index, update_settings
from tests.support.cluster import RunningCluster

_DOCS = [
    {"id": 1, "t": "alpha", "_geo": {"lat": 12.5, "lng": 7.25}},
    {"id": 2, "t": "beta", "_geojson": {"type": "Point", "coordinates": [3.75, 4.5]}},
    {"id": 3, "t": "gamma", "other": {"lat": 12.5}, "_vectors": {"foo": [0.625, 0.875]}},
]


def test_reserved_fields_are_not_searchable(cluster: RunningCluster) -> None:
    make_index(cluster, "reserved", _DOCS, {"filterableAttributes": ["_geo", "_geojson"]})
    assert found(cluster, "reserved", "alpha") == [1]
    assert found(cluster, "reserved", "12.5") == [3], "only the ordinary field's number is a word"
    for query in ("7.25", "Point", "coordinates", "3.75", "4.5", "0.625", "lat", "foo"):
        assert found(cluster, "reserved", query) == [], query
    update_settings(cluster, "reserved", {"searchableAttributes": ["t", "_geo", "_geojson", "_vectors"]})
    assert found(cluster, "reserved", "7.25") == [], "listing them does not make them searchable"
    assert found(cluster, "reserved", "beta") == [2]
