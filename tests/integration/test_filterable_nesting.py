"""A ``filterableAttributes`` name covers nested fields only in the legacy string form: an object
rule's pattern without ``*`` names one field (the reference refuses ``other.a`` under
``{"attributePatterns": ["other"]}``, accepts it under ``["other"]`` or ``oth*``, and accepts the
``facets`` entry ``other.a`` there without a distribution)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.integration.search_support import assert_error
from tests.support.client import wait_task
from tests.support.cluster import RunningCluster

INDEX = "nesting"


def _configure(cluster: RunningCluster, rules: list[Any]) -> None:
    url = f"{cluster.url}/indexes/{INDEX}"
    if httpx.get(url).status_code == 404:
        document = {"id": 1, "other": {"a": 1, "b": {"c": "x"}}}
        wait_task(cluster, httpx.post(f"{url}/documents", json=[document]).json()["taskUid"])
    task = httpx.patch(f"{url}/settings", json={"filterableAttributes": rules}).json()
    assert wait_task(cluster, task["taskUid"])["status"] == "succeeded"


def _search(cluster: RunningCluster, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{cluster.url}/indexes/{INDEX}/search", json=body)


def test_an_object_rule_name_is_one_field(cluster: RunningCluster) -> None:
    _configure(cluster, [{"attributePatterns": ["other"], "features": {"filter": {"comparison": True}}}])
    for text in ("other.a = 1", "other.b.c = x", "other.a EXISTS"):
        field = text.split()[0]
        assert_error(
            _search(cluster, {"filter": text}),
            "invalid_search_filter",
            f"Index `{INDEX}`: Attribute `{field}` is not filterable. Available filterable attribute"
            f" patterns are: `other`.\n1:{len(field) + 1} {text}",
        )
    assert _search(cluster, {"filter": "other EXISTS"}).json()["estimatedTotalHits"] == 1
    faceted = _search(cluster, {"facets": ["other.a", "other.*", "other"]})
    assert faceted.status_code == 200, faceted.text
    assert faceted.json()["facetDistribution"] == {"other": {}}


@pytest.mark.parametrize("rules", [["other"], [{"attributePatterns": ["oth*"]}]])
def test_string_rules_and_wildcards_cover_nested_fields(cluster: RunningCluster, rules: list[Any]) -> None:
    _configure(cluster, rules)
    for text in ("other.a = 1", "other.b.c = x"):
        response = _search(cluster, {"filter": text})
        assert response.status_code == 200, response.text
        assert response.json()["estimatedTotalHits"] == 1
