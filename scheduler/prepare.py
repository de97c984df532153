"""A document or settings batch applied on every shard in two phases, so a task is applied everywhere
or nowhere.

A task can fail on one shard only: an embedder fails on a text that shard holds, one of its documents
carries vectors of the wrong size. Each shard first prepares its part: applies it in its write
transaction and holds it open, nothing visible, the embedders' answers kept on disk
(``shard/held.py``, ``shard/vector/prepared.py``), and answers with the tasks that failed there. A task
failed anywhere is skipped everywhere: the shards whose prepared part did not skip exactly those tasks
prepare again without them (which may fail others, so this goes round until they agree; each round
skips more, so it ends). Then the decision (the skipped tasks and their errors) is recorded in the
in-flight batch, fsynced, and only then is every shard told to commit.

Crashes: before the decision nothing is committed, and a restarted scheduler prepares again (a shard
answers a prepare it still holds with what it holds; a restarted shard prepares from its kept
answers). After it, a restarted scheduler commits with the recorded decision, and a restarted shard
applies its part again from its kept answers, which no provider can fail. A decision that skips
nothing is not recorded (one fsync less per batch): every text was answered and kept, so preparing
again after a restart skips nothing either, and a shard that committed answers from its record.
A cancelation before the decision rolls back every shard; after it, or once the scheduler restarted
in the middle of the batch (shards may have committed it), it comes too late.

Only a batch that can fail on some shards needs this (``needs_two_phases``): one that writes
documents of an index with embedders, or changes settings with embedders before or after. Any other
goes in one phase (``apply_in_one_phase``): each shard applies and commits its part at once, which
saves a round of calls and a held transaction per batch (median task time 4-10 ms less); its tasks
fail alike on every shard, since shards share the settings. A cancelation then rolls back the shards
that had not committed yet; when some had, it came too late and the others apply the batch again,
not abortable. A crash is met as before: the batch is re-sent, a shard that committed it answers
from its record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from common.logging import get_logger
from scheduler.progress import Progress
from scheduler.shards import ShardClients, encode

log = get_logger(__name__)

Operations = list[list[dict[str, Any]]]


class BatchAborted(Exception):
    """Every shard rolled the batch back after a cancelation."""


@dataclass
class Decision:
    skipped: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Task uid -> the error it failed with (on the first shard that reported it)."""

    def to_record(self) -> dict[str, Any]:
        return {"skipped": [[uid, error] for uid, error in sorted(self.skipped.items())]}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Decision:
        return cls({int(uid): error for uid, error in record["skipped"]})


def needs_two_phases(operations: Operations, embedders: bool) -> bool:
    """Whether a task of these operations can fail on some shards only: an embedder failing on a
    text one shard holds, vectors of the wrong size in a document of one shard (``embedders``: the
    index's embedders before the batch, if any)."""
    for part in operations:
        for operation in part:
            if operation["op"] == "addDocuments" and embedders:
                return True
            if operation["op"] == "updateSettings" and (embedders or operation["settings"].get("embedders")):
                return True
    return False


async def apply_in_one_phase(
    shards: ShardClients,
    batch_uid: int,
    operations: Operations,
    progress: Progress,
    abortable: bool,
) -> list[dict[str, Any]]:
    """Every shard's committed result; ``abortable``: a cancelation may roll the batch back
    (``BatchAborted``) while no shard committed it."""
    encoded = encode(operations)
    with progress.count("shard", len(encoded)) as answers:
        replies = await shards.apply(
            batch_uid,
            encoded,
            lambda shard, result: answers.done(f"shard {shard}", result.get("steps")),
            abortable=abortable,
        )
    aborted = {shard: encoded[shard] for shard, reply in replies.items() if reply.aborted}
    if aborted and len(aborted) == len(replies):
        raise BatchAborted
    if aborted:  # some shards committed: too late to cancel, the others apply it too
        log.info("cancelation too late for some shards, applying the batch", batch_uid=batch_uid)
        replies.update(await shards.apply(batch_uid, aborted))
    return [replies[shard].result for shard in range(len(encoded))]


async def apply_in_two_phases(
    shards: ShardClients,
    batch_uid: int,
    operations: Operations,
    progress: Progress,
    decision: Decision | None,
    record: Callable[[Decision], None],
    canceled: Callable[[], bool],
) -> list[dict[str, Any]]:
    """Every shard's committed result; ``decision`` when one was recorded before a restart, else
    ``record`` is called with the one taken (it must make it durable before returning); ``canceled``:
    whether a cancelation asked for the batch to be rolled back."""
    encoded = encode(operations)
    if decision is None:
        decision = await _prepare(shards, batch_uid, encoded, progress, canceled)
        record(decision)
    with progress.count("shard", len(encoded)) as answers:
        replies = await shards.apply(
            batch_uid,
            encoded,
            lambda shard, result: answers.done(f"shard {shard}", result.get("steps")),
            skip=decision.skipped,
        )
    results = [replies[shard].result for shard in range(len(encoded))]
    for result in results:
        tasks = result.setdefault("tasks", {})
        for uid, error in decision.skipped.items():
            tasks[str(uid)] = {"error": error}
    return results


async def _prepare(
    shards: ShardClients,
    batch_uid: int,
    encoded: dict[int, bytes],
    progress: Progress,
    canceled: Callable[[], bool],
) -> Decision:
    decision = Decision()
    held: dict[int, frozenset[int] | None] = {}
    """Per shard, the tasks its prepared part left out (None: it had committed the batch already)."""
    todo = sorted(encoded)
    while todo:
        skip = frozenset(decision.skipped)
        with progress.count("shard", len(todo)) as answers:
            replies = await shards.apply(
                batch_uid,
                {shard: encoded[shard] for shard in todo},
                lambda shard, result: answers.done(f"shard {shard}", result.get("steps")),
                prepare=True,
                skip=skip,
            )
        if canceled() or any(reply.aborted for reply in replies.values()):
            await shards.abort(batch_uid)
            raise BatchAborted
        for shard in todo:
            reply = replies[shard]
            failed = {
                int(uid): c["error"] for uid, c in reply.result.get("tasks", {}).items() if "error" in c
            }
            for uid, error in failed.items():
                decision.skipped.setdefault(uid, error)
            held[shard] = skip | failed.keys() if reply.prepared else None
        everywhere = frozenset(decision.skipped)
        todo = [shard for shard, left_out in held.items() if left_out is not None and left_out != everywhere]
        if todo:
            log.info(
                "tasks failed on some shards, preparing again",
                batch_uid=batch_uid,
                skipped=sorted(everywhere),
            )
    return decision
