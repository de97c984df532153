"""Parser fuzzing, seeded and short: every target of ``bench/fuzz_parsers.py`` (filter, sort, JSON /
NDJSON / CSV payloads, JSON bodies, search query strings and bodies, settings bodies, tenant tokens)
parses or refuses each generated input with a contract error, never raises anything else nor hangs.
The issue's hostile inputs (10^5 nesting levels, 10^5 fields, 10 MB strings...) go through the real
cluster in ``tests/integration/test_fuzz_hostile.py``; ``python -m bench.fuzz_parsers`` is the long run."""

from __future__ import annotations

import pytest

from bench.fuzz_parsers import TARGETS, Target, run_target


@pytest.mark.parametrize("target", TARGETS, ids=[target.name for target in TARGETS])
def test_generated_inputs_parse_or_are_refused_with_a_contract_error(target: Target) -> None:
    outcome = run_target(target, inputs=150, seed_value=27, chunk=150)
    assert outcome.inputs >= 100
    assert outcome.failures() == []
    assert outcome.refused, "the strategy should reach the parser's refusals too"
