"""Contract fuzzing, seeded and short: ``bench/fuzz_contract.py``'s loop over every operation of the
contract's OpenAPI file, against a real cluster with a master key (requests with it and without it).
No 5xx, no answer outside the response schema (as core.md/search.md correct it), every 4xx the
contract's error object. ``python -m bench.fuzz_contract`` is the long run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from schemathesis import GenerationMode

from bench.fuzz_contract import MASTER_KEY, Target, fuzz, load_schema, report
from tests.support.cluster import RunningCluster


@pytest.fixture(scope="module")
def keyed() -> Iterator[RunningCluster]:
    with RunningCluster("--master-key", MASTER_KEY) as running:
        yield running


def test_every_operation_answers_within_the_contract(keyed: RunningCluster) -> None:
    """One positive and one negative case per operation with the master key, one positive without it
    (every answer is then the same 401: negative cases would add nothing)."""
    bearer = {"Authorization": f"Bearer {MASTER_KEY}"}
    schema = load_schema()
    sent = fuzz(schema, [Target("master key, sent", keyed.url, bearer, bearer)], 1, seed_value=27, timeout=20)
    not_sent = fuzz(
        schema,
        [Target("not sent", keyed.url, {}, bearer)],
        1,
        27,
        timeout=20,
        modes=(GenerationMode.POSITIVE,),
    )
    summary = report(sent, 0) + "\n" + report(not_sent, 0)
    assert sent.requests + not_sent.requests >= 300, summary
    assert sent.findings() + not_sent.findings() == 0, summary
