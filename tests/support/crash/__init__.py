"""Crash-recovery cycles: random writes while a random process of the cluster is SIGKILLed.

The checked contract: a write answered 202 is durable; after any ``kill -9`` the launcher brings the
process back; every acknowledged task finishes; and the index equals the succeeded tasks applied in
uid order (a failed or canceled task has no effect).

Every request carries a unique ``customMetadata``, so a task registered by a request whose answer was
lost (connection error, 5xx) is recognised in ``GET /tasks`` and modelled too; an acknowledged task
whose metadata does not match is counted as lost (its uid was reused).

The package: ``workload`` (the random writes and their model), ``api`` (HTTP helpers), ``kills``
(kill a child and wait for it), ``verification`` (the checks after each cycle), ``report``
(``CrashReport``), ``cycles`` (``run_crash_cycles``), ``bulk`` (``run_bulk_scheduler_kills``) and
``__main__`` (the command line).

Long mode for the bench: ``python -m tests.support.crash --cycles 200 --seed 7``.
"""

from tests.support.crash.bulk import BulkReport, run_bulk_scheduler_kills
from tests.support.crash.cycles import run_crash_cycles
from tests.support.crash.report import CrashReport

__all__ = ["BulkReport", "CrashReport", "run_bulk_scheduler_kills", "run_crash_cycles"]
