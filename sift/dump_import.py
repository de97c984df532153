"""``--import-dump``: rebuild a database from a dump file (``docs/dump-format.md``).

Runs in the launcher before the cluster starts, inside ``sift/imports.py``'s staging directory:

1. the dump is unpacked and read whole (a corrupt or truncated file fails here, before anything);
2. the scheduler and shards start on the staging directory (no gateway: nothing else can write) and
   every index is rebuilt through ordinary tasks, so documents are indexed as any addition is:
   creation with its primary key, its settings, its documents in NDJSON payloads of ~8 MiB;
3. once every task succeeded the backends stop, and the scheduler's store takes the dump's state in
   one transaction: its task history (the import's own tasks are dropped) with the payloads of
   tasks still enqueued, batches, keys (same uids, so the same values under the same master key),
   experimental features, webhooks, network, and the indexes' creation and update dates.

Documents keep the sequences of the import's tasks, whose uids come before any task the instance
will register (the next uid is past both), so insertion order stays right.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import orjson

from common.config import Config
from common.dump.reader import DumpError, DumpReader, IndexDump
from common.dump.tasks import batch_from_line, record_from_line
from common.errors import ApiError
from common.features import merge_features
from common.layout import DataLayout
from common.logging import get_logger
from common.rpc import json_pb2, scheduler_pb2, scheduler_pb2_grpc
from common.rpc.channels import CHANNEL_OPTIONS, unix_target
from common.settings import FOREIGN_KEYS, SETTINGS_KEYS, validate_settings
from common.task_vocabulary import FINISHED, SUCCEEDED
from common.timefmt import parse_rfc3339
from scheduler.store import SchedulerStore
from sift.imports import ImportFailed

log = get_logger(__name__)
_PAYLOAD_BYTES = 8 * 1024**2
"""Documents per addition task, by size: well under the batch payload cap, so batches group them."""
_POLL_SECONDS = 0.05


def import_dump(config: Config, dump: Path, staging: Path) -> None:
    """Build the database of ``dump`` in ``staging`` (see the module docstring)."""
    from sift.launcher import Launcher  # the launcher imports this module lazily too

    work = staging / "dump"
    try:
        reader = DumpReader(dump, work)
        tasks = [record_from_line(line) for line in reader.tasks()]
        batch_lines = list(reader.batches())
        indexes = reader.indexes()
    except DumpError as error:
        raise ImportFailed(str(error)) from None
    except (KeyError, TypeError, ValueError) as error:
        raise ImportFailed(f'the dump at "{dump}" holds an invalid task or batch: {error!r}') from None
    log.info("importing a dump", path=str(dump), version=reader.metadata.get("dumpVersion"),
             date=reader.metadata.get("dumpDate"), indexes=len(indexes))  # fmt: skip
    started = time.monotonic()
    backends = Launcher(
        dataclasses.replace(
            config,
            db_path=staging,
            import_dump=None,
            ignore_missing_dump=False,
            ignore_dump_if_db_exists=False,
        )
    )
    with backends.running_backends():
        _rebuild_indexes(DataLayout(staging), indexes)
    _restore_state(SchedulerStore(DataLayout(staging).scheduler_dir), reader, tasks, batch_lines, indexes)
    shutil.rmtree(work)
    log.info("dump imported", path=str(dump), seconds=round(time.monotonic() - started, 2))


def _rebuild_indexes(layout: DataLayout, indexes: list[IndexDump]) -> None:
    with grpc.insecure_channel(unix_target(layout.scheduler_socket), options=CHANNEL_OPTIONS) as channel:
        scheduler = scheduler_pb2_grpc.SchedulerStub(channel)

        def register(task_type: str, uid: str, params: dict[str, Any], payload: bytes = b"") -> int:
            request = scheduler_pb2.RegisterTaskRequest(
                type=task_type, index_uid=uid, params_json=orjson.dumps(params), payload=payload
            )
            reply = scheduler.RegisterTask(request, wait_for_ready=True, timeout=60)
            if reply.error_json:
                raise ImportFailed(f"importing index `{uid}`: {orjson.loads(reply.error_json)['message']}")
            return int(orjson.loads(reply.json)["taskUid"])

        registered: list[tuple[int, str]] = []
        for index in indexes:
            log.info("importing index", index=index.uid)
            primary_key = index.metadata.get("primaryKey")
            creation = {"primaryKey": primary_key, "details": {"primaryKey": primary_key}}
            registered.append((register("indexCreation", index.uid, creation), index.uid))
            settings = _settings_update(index)
            params = {"settings": settings, "allowIndexCreation": True, "details": settings}
            registered.append((register("settingsUpdate", index.uid, params), index.uid))
            for count, payload in _payloads(index.documents):
                params = {
                    "method": "replace",
                    "primaryKey": primary_key,
                    "skipCreation": False,
                    "allowIndexCreation": True,
                    "details": {"receivedDocuments": count, "indexedDocuments": None},
                    "payloadFormat": "ndjson",
                }
                addition = register("documentAdditionOrUpdate", index.uid, params, payload)
                registered.append((addition, index.uid))
        for task_uid, index_uid in registered:
            _wait_succeeded(scheduler, task_uid, index_uid)


def _settings_update(index: IndexDump) -> dict[str, Any]:
    """The dump's settings as an update: the settings Sift has (the reference's ``chat`` is not one)."""
    body = {key: value for key, value in index.settings.items() if key in SETTINGS_KEYS}
    if index.settings.get(FOREIGN_KEYS.key):
        body[FOREIGN_KEYS.key] = index.settings[FOREIGN_KEYS.key]
    try:
        return validate_settings(body)
    except ApiError as error:
        raise ImportFailed(f"the settings of index `{index.uid}` are invalid: {error.message}") from None


def _payloads(documents: Path) -> Iterator[tuple[int, bytes]]:
    """NDJSON payloads of about ``_PAYLOAD_BYTES``, with their document counts."""
    if not documents.is_file():
        return
    lines: list[bytes] = []
    size = 0
    with documents.open("rb") as source:
        for line in source:
            if not line.strip():
                continue
            lines.append(line if line.endswith(b"\n") else line + b"\n")
            size += len(line)
            if size >= _PAYLOAD_BYTES:
                yield len(lines), b"".join(lines)
                lines, size = [], 0
    if lines:
        yield len(lines), b"".join(lines)


def _wait_succeeded(scheduler: scheduler_pb2_grpc.SchedulerStub, task_uid: int, index_uid: str) -> None:
    request = json_pb2.JsonRequest(json=orjson.dumps({"uid": task_uid}))
    while True:
        reply = scheduler.GetTask(request, wait_for_ready=True, timeout=60)
        task = orjson.loads(reply.json)
        if task["status"] in FINISHED:
            break
        time.sleep(_POLL_SECONDS)
    if task["status"] != SUCCEEDED:
        reason = (task.get("error") or {}).get("message", task["status"])
        raise ImportFailed(f"importing index `{index_uid}` failed: {reason}")


def _restore_state(
    store: SchedulerStore,
    reader: DumpReader,
    tasks: list[dict[str, Any]],
    batch_lines: list[dict[str, Any]],
    indexes: list[IndexDump],
) -> None:
    """The dump's tasks, batches, keys, features, webhooks, network and index dates, in one
    transaction over the store the rebuild left."""
    try:
        with store.write() as txn:
            for record in store.get_tasks(list(store.all_task_uids())):
                txn.delete_task(record)
            for batch_uid in store.batch_uids():
                txn.delete_batch(batch_uid)
            members: dict[int, list[int]] = {}
            for record in tasks:
                txn.put_task(record)
                if record["batchUid"] is not None:
                    members.setdefault(record["batchUid"], []).append(record["uid"])
                update_file = reader.update_file(record["uid"])
                if update_file is not None and record["status"] == "enqueued":
                    txn.put_payload(record["uid"], update_file.read_bytes())
            for line in batch_lines:
                txn.put_batch(batch_from_line(line, members.get(line["uid"], [])))
            next_task = max((record["uid"] + 1 for record in tasks), default=0)
            txn.set_meta("next_task_uid", max(next_task, store.get_meta("next_task_uid", 0)))
            next_batch = max((line["uid"] + 1 for line in batch_lines), default=0)
            txn.set_meta("next_batch_uid", max(next_batch, store.get_meta("next_batch_uid", 0)))
            for key in store.list_keys():
                txn.delete_key(key["uid"])
            for key_line in reader.api_keys():
                txn.put_key(_key_record(key_line))
            txn.set_meta("default_keys_created", True)
            txn.set_meta("experimental_features", merge_features({}, reader.features()))
            for uuid, webhook in reader.webhooks().items():
                headers = webhook.get("headers") or {}
                txn.put_webhook({"uuid": uuid, "url": webhook.get("url"), "headers": headers})
            network = reader.network()
            if network is not None:
                txn.set_meta("network", network)
            for index in indexes:
                catalog = txn.get_index(index.uid)
                if catalog is not None:
                    catalog["createdNs"] = parse_rfc3339(index.metadata["createdAt"])
                    catalog["updatedNs"] = parse_rfc3339(index.metadata["updatedAt"])
                    txn.put_index(catalog)
    except (KeyError, TypeError, ValueError) as error:
        raise ImportFailed(f'the dump at "{reader.path}" holds an invalid record: {error!r}') from None
    finally:
        store.close()


def _key_record(line: dict[str, Any]) -> dict[str, Any]:
    expires = line.get("expires_at")
    return {
        "uid": line["uid"],
        "name": line.get("name"),
        "description": line.get("description"),
        "actions": line["actions"],
        "indexes": line["indexes"],
        "expiresNs": parse_rfc3339(expires) if expires is not None else None,
        "createdNs": parse_rfc3339(line["created_at"]),
        "updatedNs": parse_rfc3339(line["updated_at"]),
    }
