"""Pausing the cyclic garbage collector around bulk allocation of acyclic JSON values."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Documents are acyclic, but allocating a million of them triggers repeated full collections that
    quadruple the parse time; the collector is resumed (if it was running) as soon as the work ends."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
