"""The scheduler's durable state in one LMDB environment.

Tasks, payloads, batches, the index catalog and the filter bitmaps change together in one write
transaction, committed with fsync before a write is acknowledged. Bitmaps (status, type, index) are
kept in memory too, since this process is their only writer; memory is updated only after commit.
API keys (uid -> key record, never the key value) live in their own table of the same environment;
runtime experimental features and the ``/network`` record are records of the meta table; dynamic
search rules (uid -> rule) have their own table, and so do webhooks (uuid -> webhook) and the webhook
outbox (``scheduler/outbox.py``).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lmdb
import orjson
import zstandard
from pyroaring import BitMap

from common.fsync import fsync_path
from common.lmdb_sizes import environment_sizes

_U32 = struct.Struct(">I")
_MAP_SIZE = 1 << 36
_RULES_CREATED = "rules_created"
"""Meta record: dynamic search rule uid -> its creation number."""
_RULE_SEQUENCE = "next_rule_number"
# Task fields with a bitmap per value ("status:enqueued", "batchUid:4", ...), for the task filters.
INDEXED_FIELDS = ("status", "type", "indexUid", "batchUid", "canceledBy")


def _key(uid: int) -> bytes:
    return _U32.pack(uid)


class Txn:
    """A write transaction over the scheduler's databases, with its bitmap changes staged."""

    def __init__(self, store: SchedulerStore, txn: lmdb.Transaction) -> None:
        self.store = store
        self.txn = txn
        self.bitmaps: dict[str, BitMap] = {}

    def _bitmap(self, name: str) -> BitMap:
        if name not in self.bitmaps:
            self.bitmaps[name] = BitMap(self.store.bitmap(name))
        return self.bitmaps[name]

    def put_task(self, record: dict[str, Any], previous: dict[str, Any] | None = None) -> None:
        uid = record["uid"]
        for field in INDEXED_FIELDS:
            old = previous[field] if previous else None
            if old != record[field]:
                if old is not None:
                    self._bitmap(f"{field}:{old}").discard(uid)
                if record[field] is not None:
                    self._bitmap(f"{field}:{record[field]}").add(uid)
        self.txn.put(_key(uid), orjson.dumps(record), db=self.store.tasks_db)

    def delete_task(self, record: dict[str, Any]) -> None:
        uid = record["uid"]
        for field in INDEXED_FIELDS:
            if record[field] is not None:
                self._bitmap(f"{field}:{record[field]}").discard(uid)
        self.txn.delete(_key(uid), db=self.store.tasks_db)
        self.txn.delete(_key(uid), db=self.store.payloads_db)

    def put_payload(self, uid: int, payload: bytes) -> None:
        self.txn.put(_key(uid), self.store.compressor.compress(payload), db=self.store.payloads_db)

    def delete_payload(self, uid: int) -> None:
        self.txn.delete(_key(uid), db=self.store.payloads_db)

    def put_batch(self, batch: dict[str, Any]) -> None:
        self.txn.put(_key(batch["uid"]), orjson.dumps(batch), db=self.store.batches_db)

    def delete_batch(self, uid: int) -> None:
        self.txn.delete(_key(uid), db=self.store.batches_db)

    def _put_json(self, db: Any, key: bytes, value: Any) -> None:
        self.txn.put(key, orjson.dumps(value), db=db)

    def _get_json(self, db: Any, key: bytes) -> Any:
        raw = self.txn.get(key, db=db)
        return orjson.loads(raw) if raw is not None else None

    def put_index(self, index: dict[str, Any]) -> None:
        self._put_json(self.store.catalog_db, index["uid"].encode(), index)

    def delete_index(self, uid: str) -> None:
        self.txn.delete(uid.encode(), db=self.store.catalog_db)

    def put_key(self, record: dict[str, Any]) -> None:
        self._put_json(self.store.keys_db, record["uid"].encode(), record)

    def delete_key(self, uid: str) -> None:
        self.txn.delete(uid.encode(), db=self.store.keys_db)

    def get_key(self, uid: str) -> dict[str, Any] | None:
        return self._get_json(self.store.keys_db, uid.encode())

    def put_webhook(self, record: dict[str, Any]) -> None:
        self._put_json(self.store.webhooks_db, record["uuid"].encode(), record)

    def delete_webhook(self, uuid: str) -> None:
        self.txn.delete(uuid.encode(), db=self.store.webhooks_db)

    def get_webhook(self, uuid: str) -> dict[str, Any] | None:
        return self._get_json(self.store.webhooks_db, uuid.encode())

    def list_webhooks(self) -> list[dict[str, Any]]:
        """By uuid: the order ``GET /webhooks`` shows them in."""
        return [orjson.loads(raw) for _, raw in self.txn.cursor(db=self.store.webhooks_db)]

    def put_rule(self, rule: dict[str, Any]) -> None:
        """A new rule also takes the next creation number (``rules_created``): a search takes rules
        of equal precedence in creation order, as the reference does."""
        uid = rule["uid"]
        if self.txn.get(uid.encode(), db=self.store.rules_db) is None:
            created = self.get_meta(_RULES_CREATED, {})
            sequence = self.get_meta(_RULE_SEQUENCE, 0)
            self.set_meta(_RULES_CREATED, {**created, uid: sequence})
            self.set_meta(_RULE_SEQUENCE, sequence + 1)
        self.txn.put(uid.encode(), orjson.dumps(rule), db=self.store.rules_db)

    def delete_rule(self, uid: str) -> None:
        if self.txn.delete(uid.encode(), db=self.store.rules_db):
            created = self.get_meta(_RULES_CREATED, {})
            created.pop(uid, None)
            self.set_meta(_RULES_CREATED, created)

    def clear_rules(self) -> None:
        self.txn.drop(self.store.rules_db, delete=False)
        self.set_meta(_RULES_CREATED, None)

    def set_meta(self, name: str, value: Any) -> None:
        if value is None:
            self.txn.delete(name.encode(), db=self.store.meta_db)
        else:
            self.txn.put(name.encode(), orjson.dumps(value), db=self.store.meta_db)

    def get_meta(self, name: str, default: Any = None) -> Any:
        value = self._get_json(self.store.meta_db, name.encode())
        return default if value is None else value

    def get_task(self, uid: int) -> dict[str, Any] | None:
        return self._get_json(self.store.tasks_db, _key(uid))

    def get_index(self, uid: str) -> dict[str, Any] | None:
        return self._get_json(self.store.catalog_db, uid.encode())


def new_index_record(uid: str, now: int, primary_key: str | None = None) -> dict[str, Any]:
    """A catalog entry for an index created by the batch committing at ``now``."""
    return {"uid": uid, "createdNs": now, "updatedNs": now, "primaryKey": primary_key}


class SchedulerStore:
    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._open()
        self.compressor = zstandard.ZstdCompressor(level=3)
        self.decompressor = zstandard.ZstdDecompressor()
        self._bitmaps: dict[str, BitMap] = {}
        with self.env.begin(db=self.bitmaps_db) as txn:
            for name, raw in txn.cursor():
                self._bitmaps[name.decode()] = BitMap.deserialize(raw)

    def _open(self) -> None:
        self.env = lmdb.open(str(self.path), map_size=_MAP_SIZE, max_dbs=16, sync=True, metasync=True)
        self.tasks_db = self.env.open_db(b"tasks")
        self.payloads_db = self.env.open_db(b"payloads")
        self.batches_db = self.env.open_db(b"batches")
        self.catalog_db = self.env.open_db(b"catalog")
        self.meta_db = self.env.open_db(b"meta")
        self.bitmaps_db = self.env.open_db(b"bitmaps")
        self.keys_db = self.env.open_db(b"keys")
        self.rules_db = self.env.open_db(b"rules")
        self.webhooks_db = self.env.open_db(b"webhooks")
        self.outbox_db = self.env.open_db(b"outbox")
        self.notifications_db = self.env.open_db(b"notifications")

    @property
    def data_file(self) -> Path:
        return self.path / "data.mdb"

    def replace_data(self, copy: Path) -> None:
        """Swap in ``copy``, a durable copy of this environment holding every committed transaction
        (``scheduler/compaction.py``). Called on the event loop with no transaction open, so nothing
        can commit between the copy's check and the swap; the bitmaps in memory stay valid as is."""
        self.env.close()
        try:
            os.replace(copy, self.data_file)
            fsync_path(self.path)
        finally:
            self._open()  # on the copy, or on the untouched store if the rename failed

    def close(self) -> None:
        self.env.close()

    @contextmanager
    def write(self) -> Iterator[Txn]:
        """One durable transaction; in-memory bitmaps change only once it has committed."""
        with self.env.begin(write=True) as raw:
            txn = Txn(self, raw)
            yield txn
            for name, bitmap in txn.bitmaps.items():
                if bitmap:
                    raw.put(name.encode(), bitmap.serialize(), db=self.bitmaps_db)
                else:
                    raw.delete(name.encode(), db=self.bitmaps_db)
        for name, bitmap in txn.bitmaps.items():
            if bitmap:
                self._bitmaps[name] = bitmap
            else:
                self._bitmaps.pop(name, None)

    def bitmap(self, name: str) -> BitMap:
        return self._bitmaps.get(name, BitMap())

    def bitmaps_with_prefix(self, prefix: str) -> dict[str, BitMap]:
        return {name[len(prefix) :]: bm for name, bm in self._bitmaps.items() if name.startswith(prefix)}

    def all_task_uids(self) -> BitMap:
        return BitMap.union(*self.bitmaps_with_prefix("status:").values()) if self._bitmaps else BitMap()

    def get_task(self, uid: int) -> dict[str, Any] | None:
        with self.env.begin() as txn:
            raw = txn.get(_key(uid), db=self.tasks_db)
        return orjson.loads(raw) if raw is not None else None

    def get_tasks(self, uids: list[int]) -> list[dict[str, Any]]:
        with self.env.begin() as txn:
            raws = [txn.get(_key(uid), db=self.tasks_db) for uid in uids]
        return [orjson.loads(raw) for raw in raws if raw is not None]

    def get_payload(self, uid: int) -> bytes | None:
        with self.env.begin() as txn:
            raw = txn.get(_key(uid), db=self.payloads_db)
        return self.decompressor.decompress(raw) if raw is not None else None

    def payload_size(self, uid: int) -> int:
        """Batch planning asks this per task: read the length through a buffer, not a copy of the payload."""
        with self.env.begin(buffers=True) as txn:
            raw = txn.get(_key(uid), db=self.payloads_db)
            return len(raw) if raw is not None else 0

    def get_batch(self, uid: int) -> dict[str, Any] | None:
        with self.env.begin() as txn:
            raw = txn.get(_key(uid), db=self.batches_db)
        return orjson.loads(raw) if raw is not None else None

    def batch_uids(self) -> list[int]:
        with self.env.begin(db=self.batches_db) as txn:
            return [_U32.unpack(key)[0] for key in txn.cursor().iternext(keys=True, values=False)]

    def get_index(self, uid: str) -> dict[str, Any] | None:
        with self.env.begin() as txn:
            raw = txn.get(uid.encode(), db=self.catalog_db)
        return orjson.loads(raw) if raw is not None else None

    def list_indexes(self) -> list[dict[str, Any]]:
        with self.env.begin(db=self.catalog_db) as txn:
            return [orjson.loads(raw) for _, raw in txn.cursor()]

    def list_keys(self) -> list[dict[str, Any]]:
        with self.env.begin(db=self.keys_db) as txn:
            return [orjson.loads(raw) for _, raw in txn.cursor()]

    def list_webhooks(self) -> list[dict[str, Any]]:
        with self.env.begin(db=self.webhooks_db) as txn:
            return [orjson.loads(raw) for _, raw in txn.cursor()]

    def get_webhook(self, uuid: str) -> dict[str, Any] | None:
        with self.env.begin() as txn:
            raw = txn.get(uuid.encode(), db=self.webhooks_db)
        return orjson.loads(raw) if raw is not None else None

    def list_rules(self) -> list[dict[str, Any]]:
        """Every dynamic search rule, in creation order (rules stored before creation numbers were
        kept come first, by uid)."""
        with self.env.begin(db=self.rules_db) as txn:
            rules = [orjson.loads(raw) for _, raw in txn.cursor()]
            raw_created = txn.get(_RULES_CREATED.encode(), db=self.meta_db)
        created: dict[str, int] = orjson.loads(raw_created) if raw_created is not None else {}
        return sorted(rules, key=lambda rule: created.get(rule["uid"], -1))

    def get_meta(self, name: str, default: Any = None) -> Any:
        with self.env.begin() as txn:
            raw = txn.get(name.encode(), db=self.meta_db)
        return orjson.loads(raw) if raw is not None else default

    def sizes(self) -> dict[str, int]:
        """``databaseSize`` and ``usedDatabaseSize`` of the task and catalog store (``lmdb_sizes.py``)."""
        databases = (
            self.tasks_db,
            self.payloads_db,
            self.batches_db,
            self.catalog_db,
            self.meta_db,
            self.bitmaps_db,
            self.keys_db,
            self.rules_db,
            self.webhooks_db,
            self.outbox_db,
            self.notifications_db,
        )
        return environment_sizes(self.env, databases)

    def database_size(self) -> int:
        info = self.env.info()
        stat = self.env.stat()
        return int((info["last_pgno"] + 1) * stat["psize"])
