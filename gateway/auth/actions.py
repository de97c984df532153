"""The API-key actions of core.md §3.6: the accepted strings, what wildcards grant, which are global.

Keys are expanded once, when they enter the key ring, so checking a request is a set membership test.
"""

from __future__ import annotations

from collections.abc import Iterable

PUBLIC = "public"
"""The action of routes that never need a key (``GET /health``, ``GET /``, CORS preflights)."""

# In the order the "expected one of" error lists them.
ACTIONS: tuple[str, ...] = (
    "*", "search", "documents.*", "documents.add", "documents.get", "documents.delete", "indexes.*",
    "indexes.create", "indexes.get", "indexes.update", "indexes.delete", "indexes.swap", "tasks.*",
    "tasks.cancel", "tasks.delete", "tasks.get", "settings.*", "settings.get", "settings.update",
    "stats.*", "stats.get", "metrics.*", "metrics.get", "dumps.*", "dumps.create", "snapshots.*",
    "snapshots.create", "version", "keys.create", "keys.get", "keys.update", "keys.delete",
    "experimental.get", "experimental.update", "export", "network.get", "network.update",
    "chatCompletions", "chats.*", "chats.get", "chats.delete", "chatsSettings.*", "chatsSettings.get",
    "chatsSettings.update", "*.get", "webhooks.get", "webhooks.update", "webhooks.delete",
    "webhooks.create", "webhooks.*", "indexes.compact", "fields.post", "tasks.compact",
    "dynamicSearchRules.get", "dynamicSearchRules.create", "dynamicSearchRules.update",
    "dynamicSearchRules.delete", "dynamicSearchRules.*",
)  # fmt: skip
_ACTION_SET = frozenset(ACTIONS)

_READ_ACTIONS = frozenset(
    {
        "search", "documents.get", "indexes.get", "tasks.get", "settings.get", "stats.get", "metrics.get",
        "version", "experimental.get", "network.get", "export", "chats.get", "chatsSettings.get",
        "webhooks.get", "fields.post", "dynamicSearchRules.get",
    }
)  # fmt: skip


def _family(prefix: str) -> frozenset[str]:
    """``documents.*`` grants ``documents.add``, ``documents.get``, ... (every action under its prefix)."""
    return frozenset(a for a in ACTIONS if a.startswith(f"{prefix}.") and not a.endswith(".*"))


_GRANTS: dict[str, frozenset[str]] = {
    "*": _ACTION_SET - {"*.get"},
    "*.get": _READ_ACTIONS,
    **{a: _family(a[:-2]) for a in ACTIONS if a.endswith(".*")},
}

KEY_ACTIONS = frozenset({"keys.create", "keys.get", "keys.update", "keys.delete"})
"""The ``/keys`` routes: refused outright when no master key is configured."""

_GLOBAL_FAMILIES = (
    "metrics", "dumps", "snapshots", "chats", "chatsSettings", "webhooks", "dynamicSearchRules"
)  # fmt: skip
GLOBAL_ONLY = frozenset(
    {
        *(a for a in ACTIONS if a.split(".")[0] in _GLOBAL_FAMILIES),
        *KEY_ACTIONS,
        "version", "experimental.get", "experimental.update", "export", "network.get", "network.update",
        "tasks.compact",
    }
)  # fmt: skip
"""Actions of routes without an index: only keys whose ``indexes`` include ``*`` may use them, and a
key restricted to some indexes may not even be created with them."""


def is_action(value: str) -> bool:
    return value in _ACTION_SET


def granted(actions: Iterable[str]) -> frozenset[str]:
    """Every action the listed ones grant, wildcards expanded."""
    result: set[str] = set()
    for action in actions:
        result.add(action)
        result |= _GRANTS.get(action, frozenset())
    return frozenset(result)
