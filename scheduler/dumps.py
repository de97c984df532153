"""``dumpCreation`` (``POST /dumps``): the whole instance written as a dump (``docs/dump-format.md``).

Runs as a batch of its own, so nothing changes the catalog or the shards while it reads them: the
catalog, keys, features, webhooks (URL and headers: the format has no signing secret), network,
tasks and batches come from this process's store, the documents from every shard page by page,
merged back into insertion order by their sequence. The
file appears as ``<dumpUid>.dump`` only complete (``common/dump/writer.py``); a crash leaves a
``.dump.tmp`` or work directory that the next dump, or the next start, removes.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from common.dump.documents import dumped_document
from common.dump.tasks import line_from_batch, line_from_record
from common.dump.writer import FORMAT_VERSION, DumpWriter
from common.features import merge_features
from common.network import EMPTY, public_network
from common.settings import FOREIGN_KEYS, effective_settings
from common.timefmt import format_datetime
from scheduler.shards import ShardClients
from scheduler.store import SchedulerStore

_PAGE = 5000
"""Documents per shard read: large enough that a read's round trip is small against its work."""
_TASK_CHUNK = 1000
_DB_VERSION = "1.50.0"
"""The reference version whose dump format this writes (``metadata.json``'s ``dbVersion``)."""


def dump_uid(started_ns: int) -> str:
    """``YYYYMMDD-HHMMSSmmm`` of the batch's start, UTC (core.md §3.4.3)."""
    moment = datetime.fromtimestamp(started_ns / 1e9, tz=UTC)
    return moment.strftime("%Y%m%d-%H%M%S") + f"{moment.microsecond // 1000:03d}"


async def create_dump(
    store: SchedulerStore, shards: ShardClients, dump_dir: Path, task: dict[str, Any], started_ns: int
) -> str:
    """Write the dump of ``task`` (running in a batch started at ``started_ns``); returns its uid."""
    uid = dump_uid(started_ns)
    dump_dir.mkdir(parents=True, exist_ok=True)
    writer = await asyncio.to_thread(DumpWriter, dump_dir, uid)
    # The uids are read here, on the event loop that owns the in-memory bitmaps, not in the thread.
    task_uids = list(store.all_task_uids())
    try:
        await asyncio.to_thread(_write_instance, store, writer, task, task_uids, (uid, started_ns))
        for index in store.list_indexes():
            documents = await asyncio.to_thread(writer.index, index["uid"], *_index_files(index))
            try:
                await _write_documents(shards, index["uid"], index["primaryKey"], documents)
            finally:
                documents.close()
        await asyncio.to_thread(writer.finish)
    except BaseException:
        await asyncio.to_thread(writer.abandon)
        raise
    return uid


def _write_instance(
    store: SchedulerStore,
    writer: DumpWriter,
    task: dict[str, Any],
    task_uids: list[int],
    dump: tuple[str, int],
) -> None:
    """Everything but the documents; ``dump`` is the dump's uid and start."""
    started_ns = dump[1]
    writer.write_json(
        "metadata.json",
        {"dumpVersion": FORMAT_VERSION, "dbVersion": _DB_VERSION, "dumpDate": format_datetime(started_ns)},
    )
    writer.write_lines("keys.jsonl", (_key_line(record) for record in store.list_keys()))
    features = merge_features(store.get_meta("experimental_features", {}), {})
    writer.write_json("experimental-features.json", {k: bool(v) for k, v in features.items()})
    webhooks = {
        record["uuid"]: {"url": record["url"], "headers": record.get("headers", {})}
        for record in store.list_webhooks()
    }
    writer.write_json("webhooks.json", {"webhooks": webhooks})
    writer.write_json("network.json", public_network(store.get_meta("network", EMPTY)))
    writer.write_lines("tasks/queue.jsonl", _task_lines(store, writer, task, task_uids, dump))
    writer.write_lines("batches/queue.jsonl", _batch_lines(store))


def _key_line(record: dict[str, Any]) -> dict[str, Any]:
    expires = record.get("expiresNs")
    return {
        "description": record.get("description"),
        "name": record.get("name"),
        "uid": record["uid"],
        "actions": record["actions"],
        "indexes": record["indexes"],
        "expires_at": format_datetime(expires) if expires is not None else None,
        "created_at": format_datetime(record["createdNs"]),
        "updated_at": format_datetime(record["updatedNs"]),
    }


def _task_lines(
    store: SchedulerStore,
    writer: DumpWriter,
    task: dict[str, Any],
    task_uids: list[int],
    dump: tuple[str, int],
) -> Iterator[dict[str, Any]]:
    """Every task in uid order, read by chunks; the dump's own task as succeeded (the reference
    writes it so), and the payloads of document additions still enqueued as update files."""
    uid, started_ns = dump
    chunks = (task_uids[start : start + _TASK_CHUNK] for start in range(0, len(task_uids), _TASK_CHUNK))
    for record in (record for chunk in chunks for record in store.get_tasks(chunk)):
        if record["uid"] == task["uid"]:
            finished = {"status": "succeeded", "startedNs": started_ns, "finishedNs": started_ns}
            record = {**record, **finished, "details": {"dumpUid": uid}}
        elif record["status"] == "enqueued" and record["type"] == "documentAdditionOrUpdate":
            payload = store.get_payload(record["uid"])
            if payload is not None:
                writer.write_update_file(record["uid"], _ndjson(payload, record["params"]))
        yield line_from_record(record)


def _ndjson(payload: bytes, params: dict[str, Any]) -> bytes:
    """A stored payload (JSON array, or NDJSON as sent) as NDJSON."""
    if params.get("payloadFormat") == "ndjson":
        return payload if payload.endswith(b"\n") else payload + b"\n"
    return b"".join(orjson.dumps(document) + b"\n" for document in orjson.loads(payload))


def _batch_lines(store: SchedulerStore) -> Iterator[dict[str, Any]]:
    for batch_uid in store.batch_uids():
        batch = store.get_batch(batch_uid)
        if batch is not None:
            enqueued = [record["enqueuedNs"] for record in store.get_tasks(batch.get("tasks", []))]
            yield line_from_batch(batch, enqueued)


def _index_files(index: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An index's ``metadata.json`` and ``settings.json``: every setting, secrets unmasked."""
    metadata = {
        "uid": index["uid"],
        "primaryKey": index["primaryKey"],
        "createdAt": format_datetime(index["createdNs"]),
        "updatedAt": format_datetime(index["updatedNs"]),
    }
    user = index.get("settings", {})
    settings = dict(effective_settings(user))
    settings[FOREIGN_KEYS.key] = user.get(FOREIGN_KEYS.key) or []
    return metadata, settings


async def _write_documents(
    shards: ShardClients, index_uid: str, primary_key: str | None, out: IO[bytes]
) -> None:
    """Every shard's documents merged by sequence (the insertion order), one page at a time."""
    streams = [_shard_documents(shards, shard, index_uid, primary_key) for shard in range(shards.count)]
    heads: list[tuple[int, int, dict[str, Any]]] = []
    for shard, stream in enumerate(streams):
        first = await anext(stream, None)
        if first is not None:
            heapq.heappush(heads, (first[0], shard, first[1]))
    chunk: list[bytes] = []
    while heads:
        _, shard, document = heapq.heappop(heads)
        chunk.append(orjson.dumps(dumped_document(document)) + b"\n")
        following = await anext(streams[shard], None)
        if following is not None:
            heapq.heappush(heads, (following[0], shard, following[1]))
        if len(chunk) >= _PAGE:
            await asyncio.to_thread(out.write, b"".join(chunk))
            chunk = []
    await asyncio.to_thread(out.write, b"".join(chunk))


async def _shard_documents(
    shards: ShardClients, shard: int, index_uid: str, primary_key: str | None
) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    offset = 0
    while True:
        page = await shards.documents(shard, index_uid, offset, _PAGE, primary_key)
        for entry in page:
            yield entry
        if len(page) < _PAGE:
            return
        offset += len(page)
