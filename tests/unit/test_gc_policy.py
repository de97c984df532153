"""A shard keeps full garbage collections rare and leaves its start-up objects out of them (see
``common.gcpause``); checked in a fresh interpreter so this test process keeps CPython's defaults."""

from __future__ import annotations

import subprocess
import sys

from common.gcpause import FULL_COLLECTION_EVERY

_PROBE = """
import gc
from common.gcpause import keep_full_collections_rare
young, middle, _ = gc.get_threshold()
keep_full_collections_rare()
print(gc.get_freeze_count(), *gc.get_threshold(), young, middle)
"""


def test_full_collections_are_rare_and_skip_start_up_objects() -> None:
    output = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    frozen, young, middle, full, default_young, default_middle = map(int, output.stdout.split())
    assert frozen > 1000  # the interpreter's and the imported modules' objects
    assert (young, middle) == (default_young, default_middle)  # young collections as usual
    assert full == FULL_COLLECTION_EVERY
