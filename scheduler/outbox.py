"""The webhook outbox: each finished batch's notification, durable until it is delivered or given up.

``stage`` runs inside the transaction that finishes the batch (``Executor._commit``), so a batch is
never recorded as finished without its notifications, whatever moment a ``kill -9`` hits, and what
the outbox holds at start-up is sent again. The body is stored once per batch, gzip'd as it is sent
(``notifications``: batch uid -> body), with one row per webhook to notify (``outbox``: batch uid +
webhook uuid -> delivery id, batch finish time). Rows are removed when their deliveries end, those
ending within ``REMOVAL_DELAY_S`` together (one fsync'd transaction costs ~9 ms on the development
machine, and it holds the event loop the executor runs on). A kill between a receiver's answer and
that removal sends the notification once more after the restart, under the same delivery id.
"""

from __future__ import annotations

import gzip
import struct
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from scheduler.store import SchedulerStore, Txn
from scheduler.tasks import public_task

_U32 = struct.Struct(">I")
REMOVAL_DELAY_S = 0.25


@dataclass
class Delivery:
    """One notification to one webhook; ``attempts`` counts this process's tries."""

    batch_uid: int
    webhook: str
    delivery_id: str
    created_ns: int
    attempts: int = 0

    @property
    def key(self) -> bytes:
        return _U32.pack(self.batch_uid) + uuid.UUID(self.webhook).bytes


def notification_body(records: Iterable[dict[str, Any]]) -> bytes:
    """One task object per line, as ``GET /tasks`` shows it, by uid; gzip'd (``Content-Encoding``).
    ``mtime=0``: the same tasks always give the same bytes, and so the same signature."""
    lines = b"".join(orjson.dumps(public_task(r)) + b"\n" for r in sorted(records, key=lambda r: r["uid"]))
    return gzip.compress(lines, compresslevel=5, mtime=0)


class Outbox:
    def __init__(self, store: SchedulerStore) -> None:
        self.store = store

    def stage(
        self, txn: Txn, batch_uid: int, records: list[dict[str, Any]], targets: list[str], finished_ns: int
    ) -> list[Delivery]:
        """Record the batch's notification to each of ``targets`` in the batch's own transaction."""
        if not targets or not records:
            return []
        txn.txn.put(_U32.pack(batch_uid), notification_body(records), db=self.store.notifications_db)
        deliveries = [Delivery(batch_uid, target, str(uuid.uuid4()), finished_ns) for target in targets]
        for delivery in deliveries:
            row = {"id": delivery.delivery_id, "createdNs": finished_ns}
            txn.txn.put(delivery.key, orjson.dumps(row), db=self.store.outbox_db)
        return deliveries

    def pending(self) -> list[Delivery]:
        """Every notification not delivered yet, oldest batch first (at start-up)."""
        deliveries = []
        with self.store.env.begin(db=self.store.outbox_db) as txn:
            for key, raw in txn.cursor():
                row = orjson.loads(raw)
                webhook = str(uuid.UUID(bytes=bytes(key[4:])))
                deliveries.append(Delivery(_U32.unpack(key[:4])[0], webhook, row["id"], row["createdNs"]))
        return deliveries

    def body(self, batch_uid: int) -> bytes | None:
        with self.store.env.begin() as txn:
            raw = txn.get(_U32.pack(batch_uid), db=self.store.notifications_db)
        return bytes(raw) if raw is not None else None

    def remove(self, deliveries: list[Delivery]) -> None:
        """Deliveries that ended, in one transaction; a batch's body goes with its last row."""
        with self.store.write() as txn:
            for delivery in deliveries:
                txn.txn.delete(delivery.key, db=self.store.outbox_db)
            cursor = txn.txn.cursor(db=self.store.outbox_db)
            for prefix in {_U32.pack(delivery.batch_uid) for delivery in deliveries}:
                if not (cursor.set_range(prefix) and cursor.key()[:4] == prefix):
                    txn.txn.delete(prefix, db=self.store.notifications_db)
