"""The gateway's in-memory copy of every API key, indexed by key value and by uid.

The scheduler stores the keys durably; the gateway loads them all at start-up and, being the only
process that changes keys, updates this copy after each change it makes. Checking a request is then
a dict lookup confirmed by a constant-time comparison, whatever the number of keys.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from dataclasses import dataclass
from typing import Any

from common.index_patterns import IndexPatterns
from common.timefmt import format_datetime
from gateway.auth.actions import granted


def derive_key(master_key: str, uid: str) -> str:
    """core.md §3.6: lowercase hex HMAC-SHA256 of the hyphenated uid, keyed with the master key."""
    return hmac.new(master_key.encode(), uid.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class ApiKey:
    key: str
    record: dict[str, Any]
    """The scheduler's key record (timestamps and expiry in ns)."""
    actions: frozenset[str]
    """Expanded: wildcards replaced by what they grant."""
    indexes: IndexPatterns

    @property
    def uid(self) -> str:
        return str(self.record["uid"])

    def expired(self, now_ns: int) -> bool:
        expires = self.record["expiresNs"]
        return expires is not None and expires <= now_ns

    def public(self) -> dict[str, Any]:
        """The key object, fields in the contract's order."""
        record = self.record
        expires = record["expiresNs"]
        return {
            "name": record["name"],
            "description": record["description"],
            "key": self.key,
            "uid": record["uid"],
            "actions": record["actions"],
            "indexes": record["indexes"],
            "expiresAt": None if expires is None else format_datetime(expires),
            "createdAt": format_datetime(record["createdNs"]),
            "updatedAt": format_datetime(record["updatedNs"]),
        }


def canonical_uid(text: str) -> str | None:
    """Any textual form of a UUID as the lowercase hyphenated one; None when it is not a UUID."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        return None


class KeyRing:
    def __init__(self, master_key: str | None) -> None:
        self._master_key = master_key or ""
        self._by_key: dict[str, ApiKey] = {}
        self._by_uid: dict[str, ApiKey] = {}

    def replace_all(self, records: list[dict[str, Any]]) -> None:
        self._by_key.clear()
        self._by_uid.clear()
        for record in records:
            self.put(record)

    def put(self, record: dict[str, Any]) -> ApiKey:
        entry = ApiKey(
            derive_key(self._master_key, record["uid"]),
            record,
            granted(record["actions"]),
            IndexPatterns(record["indexes"]),
        )
        self.remove(entry.uid)
        self._by_key[entry.key] = entry
        self._by_uid[entry.uid] = entry
        return entry

    def remove(self, uid: str) -> None:
        entry = self._by_uid.pop(uid, None)
        if entry is not None:
            del self._by_key[entry.key]

    def by_key(self, token: str) -> ApiKey | None:
        entry = self._by_key.get(token)
        if entry is None or not hmac.compare_digest(entry.key, token):
            return None
        return entry

    def by_uid(self, uid: str) -> ApiKey | None:
        return self._by_uid.get(uid)

    def resolve(self, uid_or_key: str) -> ApiKey | None:
        """The key a ``/keys/{uidOrKey}`` path names: a UUID is a uid, anything else a key value."""
        uid = canonical_uid(uid_or_key)
        return self.by_uid(uid) if uid is not None else self.by_key(uid_or_key)

    def newest_first(self) -> list[ApiKey]:
        return sorted(self._by_uid.values(), key=lambda entry: entry.record["createdNs"], reverse=True)
