"""Who may use the shard's LMDB environment, so that a compaction can close it and open its copy.

LMDB forbids opening the same environment twice in one process, so swapping in a compacted copy at
the same path means closing the old one first, which must wait until no read or write is inside it.
Every use of the environment holds the gate for its duration (``using``); ``replace`` lets the
current users finish, holds new ones back, and swaps the environment.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from shard.index.env import StoreEnv


class EnvGate:
    def __init__(self, env: StoreEnv) -> None:
        self._env = env
        self._users = 0
        self._replacing = False
        self._changed = threading.Condition()

    @property
    def env(self) -> StoreEnv:
        """The environment as of now (for tools and tests; the store's own reads hold ``using``)."""
        return self._env

    @contextmanager
    def using(self) -> Iterator[StoreEnv]:
        with self._changed:
            if self._replacing:
                self._changed.wait_for(lambda: not self._replacing)
            self._users += 1
            env = self._env
        try:
            yield env
        finally:
            with self._changed:
                self._users -= 1
                if self._replacing and not self._users:
                    self._changed.notify_all()

    def replace(self, swap: Callable[[StoreEnv], StoreEnv]) -> None:
        """Run ``swap(current)`` once nobody uses the environment; it returns the one to use next."""
        with self._changed:
            self._replacing = True
            try:
                self._changed.wait_for(lambda: self._users == 0)
                self._env = swap(self._env)
            finally:
                self._replacing = False
                self._changed.notify_all()
