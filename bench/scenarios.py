"""Named workloads: each is a query set the load generator cycles through against a fresh cluster."""

from __future__ import annotations

from dataclasses import dataclass

from bench.loadgen import Request

_JSON = (("Content-Type", "application/json"),)


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    requests: tuple[Request, ...]


FANOUT = Scenario(
    name="fanout",
    description=(
        "POST /indexes/bench/search {q: hello}: gateway HTTP + one concurrent gRPC call per shard; "
        "shards return no hits, so this is the pure fan-out round trip"
    ),
    requests=(Request("POST", "/indexes/bench/search", b'{"q": "hello"}', _JSON),),
)

SCENARIOS: dict[str, Scenario] = {scenario.name: scenario for scenario in (FANOUT,)}
