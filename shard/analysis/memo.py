"""A bounded memo for per-word work: vocabularies are Zipfian, so a dict hit replaces most of it."""

from __future__ import annotations

from collections.abc import Callable

DEFAULT_LIMIT = 200_000


class Memo(dict[str, str]):
    """``memo[key]`` computes and remembers missing values, from C (``map(memo.__getitem__, keys)``).

    Once full it stops remembering instead of evicting: the words seen first are, overwhelmingly, the
    frequent ones, and no bookkeeping is spent on the hot path.
    """

    def __init__(self, compute: Callable[[str], str], limit: int = DEFAULT_LIMIT) -> None:
        super().__init__()
        self._compute = compute
        self._limit = limit

    def __missing__(self, key: str) -> str:
        value = self._compute(key)
        if len(self) < self._limit:
            self[key] = value
        return value
