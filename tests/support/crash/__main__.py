"""Crash-recovery cycles: random writes while a random process of the cluster is SIGKILLed.

The command line of the package, for the long runs of the bench (``python -m tests.support.crash
--cycles 200 --seed 7``): it parses the options, runs the cycles and prints the report, exiting 1 when
the contract was broken. The first line of this docstring is the ``--help`` description.
"""

from __future__ import annotations

import argparse
import sys

from tests.support.crash.cycles import run_crash_cycles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.crash", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--keep-going", action="store_true", help="re-base the model after a violation")
    parser.add_argument("--roles", help="comma-separated victims, e.g. gateway,scheduler (default: all)")
    args = parser.parse_args(argv)
    report = run_crash_cycles(
        args.cycles,
        args.seed,
        args.shards,
        stop_on_failure=not args.keep_going,
        roles=args.roles.split(",") if args.roles else None,
    )
    print(report.summary())
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
