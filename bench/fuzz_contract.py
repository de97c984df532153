"""``python -m bench.fuzz_contract``: Schemathesis against the contract's OpenAPI file and a real cluster.

Every operation of ``../shared/api/openapi.json`` (corrected where core.md/search.md say it is wrong,
``bench/fuzz_schema.py``) is fuzzed with Schemathesis' positive and negative generation, against a
cluster without a master key and one with a master key (requests with the key, and without it).
Half the cases that name an index are pointed at a seeded index, so they reach the route's logic
instead of ``index_not_found``. Each answer is checked for:

- a 5xx status (or no answer within ``--timeout``);
- a 2xx/4xx body that breaks the response schema the OpenAPI file gives for its status;
- a 4xx that is not the contract's error object (``message``, ``code``, ``type``, ``link``, with the
  code's own status and type from core.md §2.2), except the empty 404/405 of an unknown route.

Prints the requests sent and the findings by operation. ``tests/integration/test_fuzz_contract.py``
runs the same loop, seeded and short, in the suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter, defaultdict
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance

from bench.fuzz_schema import CORRECTIONS, load_spec
from common.errors import ERROR_CODES
from tests.support.cluster import RunningCluster

MASTER_KEY = "fuzz-contract-master-key-0123456789"
SEED_INDEX = "movies"
"""The OpenAPI examples name ``movies``; the seeded index takes that name so they reach it too."""

STREAMS = {"POST /logs/stream", "GET /tasks/stream", "GET /batches/stream"}
"""Routes whose 200 answer is a stream without end: the first bytes are read, then the call closed."""

_BODY_CAP = 64 << 20


@dataclass(frozen=True)
class Target:
    """Where requests go and with which credentials."""

    label: str
    url: str
    headers: dict[str, str]
    admin: dict[str, str]
    """Headers that may do anything there (to seed the index)."""


@dataclass
class Tally:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    schema_violations: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    error_objects: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    unsent: int = 0

    def findings(self) -> int:
        return sum(
            len(v)
            for d in (self.server_errors, self.schema_violations, self.error_objects)
            for v in d.values()
        )


def load_schema() -> Any:
    return schemathesis.openapi.from_dict(load_spec())


def seed_index(url: str, headers: dict[str, str]) -> None:
    """(Re)create the seeded index with a few documents, filterable and sortable fields."""
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        if client.get(f"/indexes/{SEED_INDEX}").status_code == 200:
            return
        docs = [
            {"id": i, "title": f"movie {i}", "genres": ["drama", "comedy"][: i % 3], "year": 1990 + i}
            for i in range(20)
        ]
        tasks = [
            client.post(f"/indexes/{SEED_INDEX}/documents", json=docs).json()["taskUid"],
            client.patch(
                f"/indexes/{SEED_INDEX}/settings",
                json={"filterableAttributes": ["genres", "year"], "sortableAttributes": ["year"]},
            ).json()["taskUid"],
        ]
        for uid in tasks:
            deadline = time.monotonic() + 60
            while client.get(f"/tasks/{uid}").json()["status"] in ("enqueued", "processing"):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"seeding task {uid} did not finish")
                time.sleep(0.05)


def _label(case: Any) -> str:
    return f"{case.method.upper()} {case.path}"


def _contract_error(status: int, body: bytes) -> str | None:
    """Why a 4xx body is not the contract's error object, or None when it is."""
    if status in (404, 405) and not body:
        return None  # an unknown route or method: core.md's empty answer
    try:
        error = json.loads(body)
    except ValueError:
        return f"{status} with a body that is not JSON: {body[:120]!r}"
    if not isinstance(error, dict) or set(error) != {"message", "code", "type", "link"}:
        return f"{status} with a body that is not an error object: {body[:200]!r}"
    expected = ERROR_CODES.get(error["code"])
    if expected is None:
        return f"{status} with code {error['code']!r}, not in core.md §2.2"
    if expected != (status, error["type"]):
        return f"{error['code']} answered {status}/{error['type']}, core.md §2.2 says {expected}"
    return None


def send(session: requests.Session, target: Target, case: Any, timeout: float, tally: Tally) -> None:
    """Send one case, check its answer and record what is wrong with it."""
    label = _label(case)
    try:
        data = case.as_transport_kwargs(base_url=target.url, headers=dict(target.headers))
        response = session.request(**data, stream=True, timeout=timeout)
    except (requests.exceptions.InvalidHeader, requests.exceptions.InvalidURL, ValueError, UnicodeError):
        tally.unsent += 1  # the client refused to send it (NUL in a header, ...): nothing reached Sift
        return
    except requests.exceptions.RequestException as error:
        tally.requests += 1
        tally.server_errors[label].append(
            f"no answer: {type(error).__name__}: {error} ({case.as_curl_command(base_url=target.url)})"
        )
        return
    tally.requests += 1
    tally.statuses[response.status_code] += 1
    with response:
        if label in STREAMS and response.status_code == 200:
            return  # the headers came at once; the body never ends
        try:
            body = _read(response, timeout)
        except requests.exceptions.RequestException as error:
            tally.server_errors[label].append(
                f"body not sent: {error} ({case.as_curl_command(base_url=target.url)})"
            )
            return
    if response.status_code >= 500:
        tally.server_errors[label].append(
            f"{response.status_code} {body[:300]!r} ({case.as_curl_command(base_url=target.url)})"
        )
        return
    if 400 <= response.status_code < 500:
        problem = _contract_error(response.status_code, body)
        if problem is not None:
            tally.error_objects[label].append(f"{problem} ({case.as_curl_command(base_url=target.url)})")
    response._content = body
    try:
        case.validate_response(response, checks=[response_schema_conformance])
    except (AssertionError, BaseExceptionGroup) as failure:  # a failed check, or a group of them
        first = str(failure).strip().splitlines()[:6]
        tally.schema_violations[label].append(
            " / ".join(first) + f" ({case.as_curl_command(base_url=target.url)})"
        )


def _read(response: requests.Response, timeout: float) -> bytes:
    deadline = time.monotonic() + timeout
    parts: list[bytes] = []
    size = 0
    for part in response.iter_content(1 << 16):
        parts.append(part)
        size += len(part)
        if size > _BODY_CAP or time.monotonic() > deadline:
            raise requests.exceptions.ReadTimeout(f"body still coming after {timeout} s / {size} bytes")
    return b"".join(parts)


def strategy_for(operation: Any, mode: GenerationMode) -> st.SearchStrategy[Any]:
    generated = operation.as_strategy(generation_mode=mode)
    names = {p.name for p in operation.path_parameters}
    if "index_uid" not in names:
        return generated
    seeded = operation.as_strategy(generation_mode=mode, path_parameters={"index_uid": SEED_INDEX})
    return st.one_of(generated, seeded)


def run_cases(strategy: st.SearchStrategy[Any], examples: int, seed_value: int, handle: Any) -> None:
    """Draw up to ``examples`` cases, seeded, no shrinking: ``handle`` records instead of raising."""

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @seed(seed_value)
    @given(case=strategy)
    def run(case: Any) -> None:
        handle(case)

    with contextlib.suppress(Unsatisfiable):  # negative cases of an operation with nothing to break
        run()


def fuzz(
    schema: Any,
    targets: list[Target],
    examples: int,
    seed_value: int,
    timeout: float = 30.0,
    modes: tuple[GenerationMode, ...] = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE),
    operations: set[str] | None = None,
) -> Tally:
    """Up to ``examples`` cases per operation, mode and target (fewer when an operation has fewer)."""
    tally = Tally()
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        if operations is not None and label not in operations:
            continue
        print(f"{label}: {tally.requests} requests so far", file=sys.stderr, flush=True)
        for target in targets:
            seed_index(target.url, target.admin)
            for mode in modes:
                run_cases(
                    strategy_for(operation, mode),
                    examples,
                    seed_value,
                    lambda case, target=target: send(session, target, case, timeout, tally),
                )
    return tally


def report(tally: Tally, elapsed: float) -> str:
    lines = [
        f"requests sent: {tally.requests} in {elapsed:.0f} s ({tally.unsent} generated cases the client "
        "could not send)",
        "statuses: " + ", ".join(f"{code}: {n}" for code, n in sorted(tally.statuses.items())),
        f"5xx or no answer: {sum(len(v) for v in tally.server_errors.values())}",
        f"schema violations: {sum(len(v) for v in tally.schema_violations.values())}",
        f"4xx not a contract error object: {sum(len(v) for v in tally.error_objects.values())}",
    ]
    for title, found in (
        ("5xx or no answer", tally.server_errors),
        ("schema violations", tally.schema_violations),
        ("4xx not a contract error", tally.error_objects),
    ):
        for label, items in sorted(found.items()):
            lines.append(f"  {title}: {label}: {len(items)}, e.g. {items[0][:600]}")
    lines.append("OpenAPI corrections applied (where core.md/search.md contradict it):")
    lines += [f"  {c.where}: {c.reason}" for c in CORRECTIONS]
    return "\n".join(lines)


def targets_of(open_url: str, keyed_url: str, master_key: str) -> list[Target]:
    """The three ways of calling: no master key set; one set and sent; one set and not sent."""
    bearer = {"Authorization": f"Bearer {master_key}"}
    return [
        Target("no master key", open_url, {}, {}),
        Target("master key, sent", keyed_url, bearer, bearer),
        Target("master key, not sent", keyed_url, {}, bearer),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.fuzz_contract", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--examples", type=int, default=100, help="cases per operation, mode and target")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds an answer may take")
    parser.add_argument("--operation", action="append", help="only this operation ('POST /multi-search')")
    parser.add_argument(
        "--urls",
        nargs=2,
        metavar=("OPEN", "KEYED"),
        help=f"running clusters instead: one without a master key, one with --master-key {MASTER_KEY}",
    )
    args = parser.parse_args()
    started = time.monotonic()
    with ExitStack() as stack:
        if args.urls:
            targets = targets_of(args.urls[0], args.urls[1], MASTER_KEY)
        else:
            open_cluster = stack.enter_context(RunningCluster(shards=args.shards))
            keyed = stack.enter_context(RunningCluster("--master-key", MASTER_KEY, shards=args.shards))
            targets = targets_of(open_cluster.url, keyed.url, MASTER_KEY)
        tally = fuzz(
            load_schema(),
            targets,
            args.examples,
            args.seed,
            args.timeout,
            operations=set(args.operation) if args.operation else None,
        )
    print(report(tally, time.monotonic() - started))


if __name__ == "__main__":
    main()
