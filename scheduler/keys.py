"""The API-key catalog (core.md §3.6): durable key records behind the scheduler's key rpcs.

A record holds what the key object shows except the ``key`` value, which is derived from the master
key by the gateway and never stored, so changing the master key changes every key. The gateway
validates requests and is the only caller that changes keys; this module keeps the store's rules:
uids are unique, timestamps come from one clock, and the default keys exist from the first start.
"""

from __future__ import annotations

import uuid
from typing import Any

from common.errors import ApiError, api_key_not_found
from common.timefmt import now_ns
from scheduler.store import SchedulerStore

# Created in this order at the first start, so that ``GET /keys`` (newest first)
# lists Search, Admin, Read-Only Admin, Chat.
DEFAULT_KEYS: tuple[tuple[str, str, list[str]], ...] = (
    ("Default Chat API Key", "Use it to chat and search from the frontend", ["chatCompletions", "search"]),
    (
        "Default Read-Only Admin API Key",
        "Use it to read information across the whole database. Caution! Do not expose this key on a "
        "public frontend",
        ["*.get", "keys.get"],
    ),
    (
        "Default Admin API Key",
        "Use it for anything that is not a search operation. Caution! Do not expose it on a public frontend",
        ["*"],
    ),
    ("Default Search API Key", "Use it to search from the frontend", ["search"]),
)


class KeyCatalog:
    def __init__(self, store: SchedulerStore) -> None:
        self.store = store
        self._last_ns = 0

    def _now(self) -> int:
        """Strictly increasing, so that keys created in one burst still sort by creation."""
        self._last_ns = max(now_ns(), self._last_ns + 1)
        return self._last_ns

    def ensure_defaults(self) -> None:
        """Create the default keys at the very first start only: a restart never changes keys behind
        the gateway's back (it holds a copy of them), even when every key was deleted."""
        if self.store.get_meta("default_keys_created", False):
            return
        with self.store.write() as txn:
            txn.set_meta("default_keys_created", True)
            for name, description, actions in DEFAULT_KEYS:
                now = self._now()
                txn.put_key(
                    {
                        "uid": str(uuid.uuid4()),
                        "name": name,
                        "description": description,
                        "actions": actions,
                        "indexes": ["*"],
                        "expiresNs": None,
                        "createdNs": now,
                        "updatedNs": now,
                    }
                )

    def list(self) -> list[dict[str, Any]]:
        return self.store.list_keys()

    def create(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields``: a validated key without timestamps; committed (fsync) before returning."""
        now = self._now()
        record = {**fields, "createdNs": now, "updatedNs": now}
        with self.store.write() as txn:
            if txn.get_key(record["uid"]) is not None:
                raise ApiError(
                    "api_key_already_exists",
                    f"`uid` field value `{record['uid']}` is already an existing API key.",
                )
            txn.put_key(record)
        return record

    def update(self, uid: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Only ``name`` and ``description`` ever change (the gateway refuses the rest)."""
        with self.store.write() as txn:
            record = txn.get_key(uid)
            if record is None:
                raise api_key_not_found(uid)
            record.update({k: v for k, v in changes.items() if k in ("name", "description")})
            record["updatedNs"] = self._now()
            txn.put_key(record)
        return record

    def delete(self, uid: str) -> dict[str, Any]:
        """Returns the deleted record."""
        with self.store.write() as txn:
            record = txn.get_key(uid)
            if record is None:
                raise api_key_not_found(uid)
            txn.delete_key(uid)
        return record
