"""What an authorised request may touch beyond its route's action: indexes, and search restrictions.

The guard checks the route's action and the path's index; handlers of routes that name indexes
elsewhere (a body, a multi-search query) or list them ask the request's ``Access`` instead.
"""

from __future__ import annotations

from typing import Any

from gateway.auth.keyring import ApiKey
from gateway.auth.tenant import TenantToken, invalid_api_key, rust_list


class Access:
    """Full access: the master key, or an instance without one."""

    def allows(self, uid: str) -> bool:
        return True

    def require_index(self, uid: str) -> None:
        """The check of an index named in the path, with the contract's detailed message."""

    def authorized_indexes(self) -> list[str] | None:
        """Index patterns for the scheduler's list filters; None when every index is visible."""
        return None

    def restrict_search(self, uid: str, params: dict[str, Any]) -> dict[str, Any]:
        """The search parameters of one query on ``uid`` under these credentials (403 if refused)."""
        return params


FULL_ACCESS = Access()


class KeyAccess(Access):
    def __init__(self, key: ApiKey) -> None:
        self.key = key

    def allows(self, uid: str) -> bool:
        return self.key.indexes.allows(uid)

    def require_index(self, uid: str) -> None:
        if not self.key.indexes.allows(uid):
            allowed = rust_list(self.key.record["indexes"])
            raise invalid_api_key(
                f"The API key cannot acces the index `{uid}`, authorized indexes are {allowed}."
            )

    def authorized_indexes(self) -> list[str] | None:
        return None if self.key.indexes.all else list(self.key.indexes.patterns)

    def restrict_search(self, uid: str, params: dict[str, Any]) -> dict[str, Any]:
        if not self.allows(uid):
            raise invalid_api_key()
        return params


class TenantAccess(KeyAccess):
    """A tenant token: its search rules narrow its parent key's indexes and add filters."""

    def __init__(self, token: TenantToken) -> None:
        super().__init__(token.parent)
        self.rules = token.rules

    def allows(self, uid: str) -> bool:
        return self.rules.allows(uid) and self.key.indexes.allows(uid)

    def require_index(self, uid: str) -> None:
        if not self.rules.allows(uid):
            allowed = rust_list(list(self.rules.rules))
            raise invalid_api_key(
                f"The provided tenant token cannot acces the index `{uid}`, allowed indexes are {allowed}."
            )
        if not self.key.indexes.allows(uid):
            raise invalid_api_key(
                f"The API key used to generate this tenant token cannot acces the index `{uid}`."
            )

    def restrict_search(self, uid: str, params: dict[str, Any]) -> dict[str, Any]:
        params = super().restrict_search(uid, params)
        rule = self.rules.filter_for(uid)
        if rule is None:
            return params
        return {**params, "filter": fuse_filters(params.get("filter"), rule)}


def fuse_filters(request: Any, rule: Any) -> Any:
    """core.md §3.8: AND of both, as the concatenation of their array forms (request first)."""
    if request is None:
        return rule
    return _as_array(request) + _as_array(rule)


def _as_array(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value]
