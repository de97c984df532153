"""The webhook catalog (core.md §3.14): durable webhook records behind the scheduler's webhook rpcs.

The gateway checks the body's types; the rules that depend on what is stored (at most 20 webhooks,
at most 200 headers once a PATCH is merged) and the record's own rules (``common/webhooks.py``) are
checked here, in the reference's order, inside the transaction that stores the change (fsync), so an
acknowledged change survives ``kill -9``. The launch-option webhook is not stored: it comes from the
configuration at every start, under the nil uuid.
"""

from __future__ import annotations

import uuid
from typing import Any

from common.config import Config
from common.webhooks import (
    MAX_WEBHOOKS,
    NIL_UUID,
    SIGNING_SECRET,
    check_webhook,
    immutable_webhook,
    launch_webhook,
    missing_url,
    too_many_webhooks,
    webhook_not_found,
)
from scheduler.store import SchedulerStore, Txn


class WebhookCatalog:
    def __init__(self, store: SchedulerStore, config: Config) -> None:
        self.store = store
        self.launch: dict[str, Any] | None = None
        if config.task_webhook_url is not None:
            self.launch = launch_webhook(
                config.task_webhook_url,
                config.task_webhook_authorization_header,
                config.task_webhook_signing_secret,
            )

    def all(self) -> list[dict[str, Any]]:
        """Every webhook, the launch-option one first (its uuid is the smallest), then by uuid."""
        stored = self.store.list_webhooks()
        return [self.launch, *stored] if self.launch is not None else stored

    def targets(self, txn: Txn) -> list[str]:
        """The uuids a batch finishing in ``txn`` notifies."""
        stored = [record["uuid"] for record in txn.list_webhooks()]
        return [NIL_UUID, *stored] if self.launch is not None else stored

    def get(self, webhook_uuid: str) -> dict[str, Any] | None:
        """The webhook as it is now (deliveries read it at each attempt), or None once deleted."""
        return self.launch if webhook_uuid == NIL_UUID else self.store.get_webhook(webhook_uuid)

    def create(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields``: ``url``, ``headers``, ``signingSecret`` as the body gave them (types checked)."""
        with self.store.write() as txn:
            if len(txn.list_webhooks()) >= MAX_WEBHOOKS:
                raise too_many_webhooks()
            headers = fields.get("headers") or {}
            record = {
                "uuid": str(uuid.uuid4()),
                "url": fields.get("url"),
                # A null header value in a creation is stored empty, as the reference does.
                "headers": {name: value or "" for name, value in headers.items()},
            }
            if fields.get(SIGNING_SECRET) is not None:
                record[SIGNING_SECRET] = fields[SIGNING_SECRET]
            check_webhook(record)
            txn.put_webhook(record)
        return record

    def update(self, webhook_uuid: str, changes: dict[str, Any]) -> dict[str, Any]:
        """A PATCH: a null header removes it, ``headers: null`` removes all, ``url: null`` is refused."""
        if webhook_uuid == NIL_UUID:
            raise immutable_webhook(webhook_uuid)
        with self.store.write() as txn:
            record = self._stored(txn, webhook_uuid)
            if "url" in changes:
                if changes["url"] is None:
                    raise missing_url(webhook_uuid)
                record["url"] = changes["url"]
            if "headers" in changes:
                if changes["headers"] is None:
                    record["headers"] = {}
                for name, value in (changes["headers"] or {}).items():
                    if value is None:
                        record["headers"].pop(name, None)
                    else:
                        record["headers"][name] = value
            if SIGNING_SECRET in changes:
                record.pop(SIGNING_SECRET, None)
                if changes[SIGNING_SECRET] is not None:
                    record[SIGNING_SECRET] = changes[SIGNING_SECRET]
            check_webhook(record)
            txn.put_webhook(record)
        return record

    def delete(self, webhook_uuid: str) -> dict[str, Any]:
        """Returns the deleted record. Its notifications still in the outbox are dropped when their
        turn comes (``get`` is then None)."""
        if webhook_uuid == NIL_UUID:
            raise immutable_webhook(webhook_uuid)
        with self.store.write() as txn:
            record = self._stored(txn, webhook_uuid)
            txn.delete_webhook(webhook_uuid)
        return record

    @staticmethod
    def _stored(txn: Txn, webhook_uuid: str) -> dict[str, Any]:
        record = txn.get_webhook(webhook_uuid)
        if record is None:
            raise webhook_not_found(webhook_uuid)
        return record
