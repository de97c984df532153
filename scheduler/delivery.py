"""Delivery of the outbox's task notifications (``scheduler/outbox.py``) to the webhooks.

It runs on the scheduler's event loop beside the executor but never in its way: the executor only
stages a notification in the batch's transaction and hands it over; requests are asynchronous (at
most ``CONCURRENCY`` at once, each bounded by ``--webhook-timeout``) and go through the outbound
guard (``common/outbound.py``). A connection error, a timeout, a 5xx, 408 or 429 is retried with
exponential backoff and jitter until ``--webhook-retry-duration`` after the batch finished; any other
answer ends the delivery (2xx delivered, else rejected), as does a refusal of the guard.

A failing webhook is probed by one notification at a time: its other notifications wait, parked,
until an answer comes (then they all go) or their time is up, so a receiver that refuses connections
at once costs one attempt per backoff step, not one per notification and step.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import heapq
import hmac
import itertools
import random
from typing import Any

import httpx

from common.config import Config
from common.logging import get_logger
from common.outbound import AllowedNetworks, OutboundClient, OutboundRefused
from common.timefmt import now_ns
from common.webhooks import SIGNING_SECRET
from scheduler.outbox import REMOVAL_DELAY_S, Delivery, Outbox
from scheduler.store import Txn
from scheduler.webhooks import WebhookCatalog

log = get_logger(__name__)

CONCURRENCY = 8
FIRST_RETRY_S = 0.5
MAX_RETRY_S = 60.0
DELIVERY_HEADER = "X-Sift-Delivery"
SIGNATURE_HEADER = "X-Sift-Signature"
# Headers the delivery sets itself: a webhook's own value for one of them is not sent.
_RESERVED = frozenset(
    name.lower()
    for name in (
        "Content-Type", "Content-Encoding", "Content-Length", "Transfer-Encoding", "Host",
        DELIVERY_HEADER, SIGNATURE_HEADER,
    )
)  # fmt: skip
_RETRIED_STATUSES = frozenset({408, 429})


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones: a ceiling doubling from 0.5 s to 60 s,
    each drawn in its upper half (jitter, so that notifications failing together do not retry together)."""
    ceiling = min(MAX_RETRY_S, FIRST_RETRY_S * 2 ** (attempts - 1))
    return random.uniform(ceiling / 2, ceiling)


def signature(secret: str, body: bytes) -> str:
    """``sha256=`` and the hex HMAC-SHA256, keyed by the secret, of the request body as sent (gzip'd)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Deliverer:
    def __init__(
        self, outbox: Outbox, webhooks: WebhookCatalog, client: OutboundClient, retry_duration_s: int
    ) -> None:
        self.outbox = outbox
        self.webhooks = webhooks
        self.client = client
        self.retry_duration_ns = retry_duration_s * 1_000_000_000
        self._due: list[tuple[float, int, Delivery]] = []
        self._order = itertools.count()
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(CONCURRENCY)
        self._attempts: set[asyncio.Task[None]] = set()
        self._ended: list[Delivery] = []
        self._failures: dict[str, int] = {}
        """Webhooks whose last attempt failed and was retried: consecutive failures."""
        self._probes: dict[str, Delivery] = {}
        self._parked: dict[str, list[Delivery]] = {}
        self.outcomes: collections.Counter[str] = collections.Counter()
        """Deliveries ended since start, by outcome (``sift_webhook_deliveries_total``)."""

    @classmethod
    def from_config(cls, outbox: Outbox, webhooks: WebhookCatalog, config: Config) -> Deliverer:
        allowed = AllowedNetworks.from_option(config.experimental_allowed_ip_networks)
        client = OutboundClient(allowed, config.webhook_timeout, CONCURRENCY)
        return cls(outbox, webhooks, client, config.webhook_retry_duration)

    def stage(
        self, txn: Txn, batch_uid: int, records: list[dict[str, Any]], finished_ns: int
    ) -> list[Delivery]:
        """Called by the executor inside the transaction finishing the batch: ``records`` are the tasks
        it finished. The deliveries start once that transaction committed (``schedule``)."""
        return self.outbox.stage(txn, batch_uid, records, self.webhooks.targets(txn), finished_ns)

    def schedule(self, deliveries: list[Delivery], delay: float = 0.0) -> None:
        due = asyncio.get_running_loop().time() + delay
        for delivery in deliveries:
            heapq.heappush(self._due, (due, next(self._order), delivery))
        if deliveries:
            self._wake.set()

    async def run_forever(self) -> None:
        """Sends what the outbox holds, then what ``schedule`` hands over. Its first step, before any
        await, loads the outbox: started before the executor, it sees no notification twice."""
        pending = self.outbox.pending()
        if pending:
            log.info("resuming webhook notifications", pending=len(pending))
        self.schedule(pending)
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            while self._due and self._due[0][0] <= loop.time():
                await self._slots.acquire()
                delivery = heapq.heappop(self._due)[2]
                if delivery.webhook in self._failures and self._probes.get(delivery.webhook) is not delivery:
                    self._parked.setdefault(delivery.webhook, []).append(delivery)
                    self._slots.release()
                    continue
                attempt = asyncio.create_task(self._attempt(delivery))
                self._attempts.add(attempt)
                attempt.add_done_callback(self._attempts.discard)
            wait = self._due[0][0] - loop.time() if self._due else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)

    async def close(self) -> None:
        """Stops the attempts under way (their rows stay in the outbox for the next start)."""
        for attempt in list(self._attempts):
            attempt.cancel()
        await asyncio.gather(*self._attempts, return_exceptions=True)
        self._remove_ended()
        await self.client.close()

    async def _attempt(self, delivery: Delivery) -> None:
        try:
            delivery.attempts += 1
            webhook = self.webhooks.get(delivery.webhook)
            body = self.outbox.body(delivery.batch_uid)
            if webhook is None or body is None:
                self._answered(delivery)
                self._end(delivery, "dropped", reason="the webhook was deleted")
                return
            try:
                status = await self.client.post(webhook["url"], body, self._headers(webhook, delivery, body))
            except OutboundRefused as error:
                self._answered(delivery)
                self._end(delivery, "refused", reason=str(error))
                return
            except (httpx.HTTPError, TimeoutError, OSError) as error:
                self._retry(
                    delivery, f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
                )
                return
            if status >= 500 or status in _RETRIED_STATUSES:
                self._retry(delivery, f"status {status}")
                return
            self._answered(delivery)
            self._end(delivery, "delivered" if 200 <= status < 300 else "rejected", status=status)
        finally:
            self._slots.release()

    @staticmethod
    def _headers(webhook: dict[str, Any], delivery: Delivery, body: bytes) -> list[tuple[bytes, bytes]]:
        headers = [
            ("Content-Type", "application/x-ndjson"),
            ("Content-Encoding", "gzip"),
            (DELIVERY_HEADER, delivery.delivery_id),
        ]
        if webhook.get(SIGNING_SECRET) is not None:
            headers.append((SIGNATURE_HEADER, signature(webhook[SIGNING_SECRET], body)))
        headers += [(k, v) for k, v in webhook["headers"].items() if k.lower() not in _RESERVED]
        return [(name.encode(), value.encode()) for name, value in headers]

    def _remove_ended(self) -> None:
        ended, self._ended = self._ended, []
        if ended:
            self.outbox.remove(ended)

    def _answered(self, delivery: Delivery) -> None:
        """The webhook's turn ended otherwise than by a retry: its parked notifications go now."""
        webhook = delivery.webhook
        if self._failures.pop(webhook, None) is not None:
            self._probes.pop(webhook, None)
            self.schedule(self._parked.pop(webhook, []))

    def _retry(self, delivery: Delivery, reason: str) -> None:
        """Retry ``delivery`` as its webhook's probe, or park it behind the probe already waiting."""
        webhook = delivery.webhook
        failures = self._failures.get(webhook, 0) + 1
        self._failures[webhook] = failures
        probe = self._probes.get(webhook)
        if probe is not None and probe is not delivery:
            self._parked.setdefault(webhook, []).append(delivery)
            return
        delay = backoff(failures)
        due_ns = now_ns() + delay * 1e9
        waiting = [delivery, *self._parked.pop(webhook, [])]
        for late in [d for d in waiting if due_ns > d.created_ns + self.retry_duration_ns]:
            self._end(late, "abandoned", reason=reason)
        waiting = [d for d in waiting if due_ns <= d.created_ns + self.retry_duration_ns]
        if not waiting:
            self._failures.pop(webhook)
            self._probes.pop(webhook, None)
            return
        probe, self._parked[webhook] = waiting[0], waiting[1:]
        self._probes[webhook] = probe
        log.info(
            "webhook notification failed, will retry",
            webhook=webhook, batch_uid=delivery.batch_uid, delivery=delivery.delivery_id,
            attempts=delivery.attempts, reason=reason, retry_in_s=round(delay, 2), waiting=len(waiting),
        )  # fmt: skip
        self.schedule([probe], delay)

    def _end(self, delivery: Delivery, outcome: str, **details: Any) -> None:
        """The one place a delivery ends: its row leaves the outbox (soon, with others that end by
        then), the outcome is logged and counted for ``/metrics``."""
        self.outcomes[outcome] += 1
        if not self._ended:
            asyncio.get_running_loop().call_later(REMOVAL_DELAY_S, self._remove_ended)
        self._ended.append(delivery)
        fields = {
            "webhook": delivery.webhook,
            "batch_uid": delivery.batch_uid,
            "delivery": delivery.delivery_id,
            "attempts": delivery.attempts,
            **details,
        }
        if outcome == "delivered":
            # One line per batch and webhook at info would be most of a busy scheduler's log.
            (log.debug if delivery.attempts == 1 else log.info)("webhook notification delivered", **fields)
        elif outcome == "abandoned":
            log.error("webhook notification abandoned after retrying", **fields)
        else:
            log.warning(f"webhook notification {outcome}", **fields)
