"""Property test (issue 6): random documents and random filters, the engine against a reference.

The engine answers through HTTP on a 3-shard cluster (CONTAINS enabled); the reference
(``tests/support/filter_reference.py``) evaluates the same tree on the documents in plain Python.
One cluster serves the module; each example gets a fresh index.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.filter.ast import Filter
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster
from tests.support.filter_reference import reference_ids
from tests.support.filter_strategies import filter_trees, render

_EVERYTHING_FILTERABLE = {
    "filterableAttributes": [
        {"attributePatterns": ["*"], "features": {"filter": {"equality": True, "comparison": True}}}
    ]
}
_indexes = count()

# Small pools shared by documents and operands (case, accents, spaces, numbers written as strings), so
# that random filters actually match something.
FIELDS = ("a", "b", "c", "c.d", "e")
_TEXTS = ("x", "X", " x ", "xy", "é", "e\u0301", "E", "Ab", "ab", "b", "1", "2.5", "-1", "true", "")
_NUMBERS = (-3, -1, 0, 1, 2, 2.5, 3, -2.5, 1e10)
_scalars = st.one_of(st.sampled_from(_TEXTS), st.sampled_from(_NUMBERS), st.booleans(), st.none())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(("d", "f")), inner, max_size=2)
    ),
    max_leaves=6,
)
_operands = st.one_of(st.sampled_from(_TEXTS), st.sampled_from(_NUMBERS).map(str))
filters = filter_trees(st.sampled_from(FIELDS), _operands, geo=False, vectors=False, max_leaves=5)


@st.composite
def documents(draw: st.DrawFn, max_size: int = 12) -> list[dict[str, Any]]:
    """Documents with ids 0..n-1 and a random subset of the top-level fields (``c`` often nested)."""
    docs = []
    for doc_id in range(draw(st.integers(min_value=1, max_value=max_size))):
        doc: dict[str, Any] = {"id": doc_id}
        for name in ("a", "b", "c", "e"):
            if draw(st.booleans()):
                doc[name] = draw(_values)
        docs.append(doc)
    return docs


@pytest.fixture(scope="module")
def cluster() -> Iterator[RunningCluster]:
    with RunningCluster("--experimental-contains-filter", shards=3) as running:
        yield running


def _index(cluster: RunningCluster, docs: list[dict[str, Any]]) -> str:
    uid = f"prop-{next(_indexes)}"
    with httpx.Client(base_url=cluster.url, timeout=30) as client:
        settings_task = client.patch(f"/indexes/{uid}/settings", json=_EVERYTHING_FILTERABLE).json()
        docs_task = client.post(f"/indexes/{uid}/documents", params={"primaryKey": "id"}, json=docs).json()
    for task in (settings_task, docs_task):
        assert wait_task(cluster, task["taskUid"])["status"] == "succeeded"
    return uid


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=documents(), trees=st.lists(filters, min_size=1, max_size=6))
def test_engine_agrees_with_reference(
    cluster: RunningCluster, docs: list[dict[str, Any]], trees: list[Filter]
) -> None:
    uid = _index(cluster, docs)
    for tree in trees:
        expression = render(tree)
        response = httpx.post(
            f"{cluster.url}/indexes/{uid}/search", json={"filter": expression, "limit": 100}, timeout=30
        )
        assert response.status_code == 200, (expression, response.text)
        body = response.json()
        engine = sorted(hit["id"] for hit in body["hits"])
        assert engine == reference_ids(docs, tree), (expression, docs)
        assert body["estimatedTotalHits"] == len(engine)
