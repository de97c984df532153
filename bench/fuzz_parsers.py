"""``python -m bench.fuzz_parsers``: hypothesis against Sift's parsers, in process, a million inputs.

Each target is a pure parser the gateway runs on what a client sends: the filter and sort parsers,
the JSON / NDJSON / CSV document payload readers, the JSON body reader, the search query string
(``parse_qs`` and the route's schema), search bodies, settings bodies and tenant tokens. An input
either parses or is refused with a contract error (an ``ApiError`` whose code is in core.md §2.2 and
answers 4xx, or a route-coded ``ParameterError``); anything else raised is a crash, and a single input
taking more than ``SLOW`` seconds is a hang. Inputs come from grammar-aware hypothesis strategies
(arbitrary bytes and text, mutations of valid values), ``--corpus`` per target drawn ``--chunk`` at a
time, each chunk seeded; the rest of a target's share of ``--inputs`` are seeded mutants of that
corpus (hypothesis costs ~1 ms an input, a mutant ~10 µs).
The issue's hostile inputs run first (``--hostile`` adds the 100 MB NDJSON line).
``tests/unit/test_fuzz_parsers.py`` runs every target, seeded and short, in the suite.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from hypothesis import strategies as st

from bench.fuzz_contract import run_cases
from bench.fuzz_inputs import _SKIP, KEYS, TARGET_INPUTS, hostile_inputs, mutate_value
from common.documents.payload import PayloadFormat, parse_payload
from common.errors import ERROR_CODES, ApiError, ParameterError
from common.filter.parse import parse_filter
from common.settings.validation import validate_settings
from common.sort import parse_sort
from common.validation import parse_json_body
from gateway.auth.tenant import decode_tenant_token, looks_like_jwt
from gateway.search.params import BODY, QUERY, check_sort_syntax, from_query_string, select_search_kind

SLOW = 2.0
"""Seconds one generated input (at most a few hundred bytes) may take before it counts as a hang."""
SLOW_HOSTILE = 30.0
"""The same for the hostile inputs (10^5 items, 10 MB strings: linear work of a second or more)."""


def _search_query(raw: str) -> None:
    params = from_query_string(QUERY.validate(parse_qs(raw, keep_blank_values=True)))
    check_sort_syntax(params)
    select_search_kind(params)


def _search_body(value: Any) -> None:
    params = BODY.validate(value)
    check_sort_syntax(params)
    select_search_kind(params)


@dataclass(frozen=True)
class Target:
    name: str
    parse: Callable[[Any], object]
    code: str
    """The code a route answers a ``ParameterError`` with (filter and sort errors carry none)."""
    accepts: Callable[[Any], bool] = lambda _value: True
    """What the route has checked before it calls the parser: mutants outside it are not counted."""


TARGETS: tuple[Target, ...] = (
    Target("filter", parse_filter, "invalid_search_filter"),
    Target(
        "sort",
        parse_sort,
        "invalid_search_sort",
        lambda value: isinstance(value, list) and all(isinstance(entry, str) for entry in value),
    ),
    Target("json payload", lambda raw: parse_payload(raw, PayloadFormat("json")), "malformed_payload"),
    Target("ndjson payload", lambda raw: parse_payload(raw, PayloadFormat("ndjson")), "malformed_payload"),
    Target(
        "csv payload", lambda args: parse_payload(args[0], PayloadFormat("csv", args[1])), "malformed_payload"
    ),
    Target("json body", parse_json_body, "malformed_payload"),
    Target("search query string", _search_query, "bad_request"),
    Target("search body", _search_body, "bad_request"),
    Target("settings body", validate_settings, "bad_request"),
    Target(
        "tenant token",
        lambda token: looks_like_jwt(token) and decode_tenant_token(token, KEYS),
        "invalid_api_key",
    ),
)


@dataclass
class Outcome:
    inputs: int = 0
    accepted: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    crashes: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    slowest: float = 0.0

    def failures(self) -> list[str]:
        return self.crashes + self.hangs


def check(target: Target, value: Any, outcome: Outcome, slow: float = SLOW) -> None:
    """Parse one input and record how it ended."""
    outcome.inputs += 1
    started = time.perf_counter()
    try:
        target.parse(value)
        outcome.accepted += 1
    except ApiError as error:
        status = ERROR_CODES[error.code][0]
        if status >= 500 or not error.message:
            outcome.crashes.append(f"{error.code} ({status}) for {_shown(value)}: {error.message[:200]}")
        else:
            outcome.refused[error.code] += 1
    except ParameterError as error:
        api_error = error.api_error(target.code)
        outcome.refused[api_error.code] += 1
    except Exception as error:  # anything else (RecursionError included) would reach the client as a 500
        outcome.crashes.append(f"{type(error).__name__}: {error!s:.200} for {_shown(value)}")
    elapsed = time.perf_counter() - started
    outcome.slowest = max(outcome.slowest, elapsed)
    if elapsed > slow:
        outcome.hangs.append(f"{elapsed:.1f} s for {_shown(value)}")


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except RecursionError:
        return "a value nested too deep for repr"
    return text if len(text) <= 300 else f"{text[:200]}...({len(text)} characters)"


def run_target(
    target: Target, inputs: int, seed_value: int, chunk: int = 10_000, corpus: list[Any] | None = None
) -> Outcome:
    """``inputs`` generated inputs (fewer when the strategy runs out), ``chunk`` per seeded run;
    each is appended to ``corpus`` when one is given."""
    outcome = Outcome()
    strategy = TARGET_INPUTS[target.name]
    for index, start in enumerate(range(0, inputs, chunk)):
        count = min(chunk, inputs - start)
        _run_chunk(target, strategy, count, seed_value * 100_003 + index, outcome, corpus)
    return outcome


def _run_chunk(
    target: Target,
    strategy: st.SearchStrategy[Any],
    count: int,
    seed_value: int,
    outcome: Outcome,
    corpus: list[Any] | None,
) -> None:
    def handle(value: Any) -> None:
        if corpus is not None:
            corpus.append(value)
        check(target, value, outcome)

    run_cases(strategy, count, seed_value, handle)


def run_mutations(target: Target, corpus: list[Any], inputs: int, seed_value: int) -> Outcome:
    """``inputs`` mutants of the hypothesis corpus (byte edits; structured inputs edited as JSON and
    kept when they still decode, as a body must before a route reads it). A mutant joins the corpus
    now and then, so edits accumulate."""
    outcome = Outcome()
    rng = random.Random(seed_value)
    pool = list(corpus)
    while outcome.inputs < inputs:
        value = mutate_value(rng.choice(pool), rng)
        if value is _SKIP or not target.accepts(value):
            continue
        check(target, value, outcome)
        if rng.random() < 0.05 and len(pool) < 50_000:
            pool.append(value)
    return outcome


def run_hostile(targets: Iterable[Target], huge: bool) -> dict[str, Outcome]:
    outcomes: dict[str, Outcome] = {}
    for target in targets:
        outcome = outcomes.setdefault(target.name, Outcome())
        for value in hostile_inputs(target.name, huge):
            check(target, value, outcome, SLOW_HOSTILE)
    return outcomes


def table(outcomes: dict[str, Outcome], elapsed: dict[str, float]) -> str:
    lines = [
        f"{'target':<22}{'inputs':>10}{'accepted':>10}{'refused':>10}{'crashes':>9}{'hangs':>7}{'slowest':>9}{'s':>7}"
    ]
    for name, outcome in outcomes.items():
        lines.append(
            f"{name:<22}{outcome.inputs:>10}{outcome.accepted:>10}{sum(outcome.refused.values()):>10}"
            f"{len(outcome.crashes):>9}{len(outcome.hangs):>7}{outcome.slowest:>8.2f}s"
            f"{elapsed.get(name, 0):>7.0f}"
        )
    total = sum(o.inputs for o in outcomes.values())
    lines.append(f"total inputs: {total}, failures: {sum(len(o.failures()) for o in outcomes.values())}")
    for name, outcome in outcomes.items():
        codes = ", ".join(f"{code} {n}" for code, n in outcome.refused.most_common())
        lines.append(f"  {name} refusals: {codes or 'none'}")
        lines += [f"  {name} FAILURE: {failure}" for failure in outcome.failures()[:5]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz_parsers", description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="generated inputs over all targets")
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument(
        "--corpus", type=int, default=5_000, help="hypothesis inputs per target; then mutants"
    )
    parser.add_argument("--chunk", type=int, default=1_000, help="inputs per seeded hypothesis run")
    parser.add_argument("--target", action="append", help="only this target (repeatable)")
    parser.add_argument("--hostile", action="store_true", help="add the 100 MB NDJSON line")
    args = parser.parse_args()
    targets = [t for t in TARGETS if not args.target or t.name in args.target]
    outcomes = run_hostile(targets, args.hostile)
    elapsed: dict[str, float] = {}
    per_target = args.inputs // len(targets)
    for target in targets:
        started = time.monotonic()
        corpus: list[Any] = []
        generated = run_target(target, min(args.corpus, per_target), args.seed, args.chunk, corpus)
        mutants = run_mutations(target, corpus, per_target - generated.inputs, args.seed)
        merged = outcomes[target.name]
        for part in (generated, mutants):
            merged.inputs += part.inputs
            merged.accepted += part.accepted
            merged.refused.update(part.refused)
            merged.crashes += part.crashes
            merged.hangs += part.hangs
            merged.slowest = max(merged.slowest, part.slowest)
        elapsed[target.name] = time.monotonic() - started
        print(f"{target.name}: {merged.inputs} inputs, {len(merged.failures())} failures", flush=True)
    print(table(outcomes, elapsed))


if __name__ == "__main__":
    main()
