"""The scheduler's gRPC service: the task queue and catalog, answered from its store."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable
from typing import Any

import grpc
import lmdb
import orjson
from pyroaring import BitMap

from common.errors import ApiError, index_not_found
from common.index_patterns import IndexPatterns
from common.logging import get_logger
from common.rpc import health_pb2, json_pb2, scheduler_pb2, scheduler_pb2_grpc
from common.settings import public_settings
from common.task_vocabulary import ENQUEUED
from common.timefmt import format_datetime, now_ns
from scheduler.compaction import compact
from scheduler.executor import Executor
from scheduler.features import FeatureCatalog
from scheduler.keys import KeyCatalog
from scheduler.network import NetworkCatalog
from scheduler.queries import hidden_batches, match_tasks, seek_page, visible_tasks
from scheduler.replication import Replication
from scheduler.store import SchedulerStore
from scheduler.tasks import matched_tasks, new_record, public_task, store_matched_tasks, summarized_task
from scheduler.views import in_order, processing_batch, public_batch, public_index, seek_response
from scheduler.webhooks import WebhookCatalog

log = get_logger(__name__)
# Registration stops at 40 % of a 20 GiB task database, as the reference does (core.md §4.1).
TASK_DB_MAX_BYTES = 20 * 1024**3
TASK_DB_STOP_BYTES = int(0.4 * TASK_DB_MAX_BYTES)
_QUEUE_FULL = (
    "Meilisearch cannot receive write operations because the limit of the task database has been reached. "
    "Please delete tasks to continue performing write operations."
)
_NO_REPLICATION = Replication(None, False)


def _reply(value: Any) -> json_pb2.JsonReply:
    return json_pb2.JsonReply(json=orjson.dumps(value))


def _error(error: ApiError) -> json_pb2.JsonReply:
    return json_pb2.JsonReply(error_json=orjson.dumps(error.to_dict()))


class SchedulerService(scheduler_pb2_grpc.SchedulerServicer):
    def __init__(
        self,
        store: SchedulerStore,
        executor: Executor,
        keys: KeyCatalog,
        features: FeatureCatalog,
        webhooks: WebhookCatalog,
    ) -> None:
        self.store = store
        self.executor = executor
        self.keys = keys
        self.features = features
        self.webhooks = webhooks
        self.network = NetworkCatalog(store)
        self._register_lock = asyncio.Lock()
        self._compact_lock = asyncio.Lock()

    async def Health(
        self, request: health_pb2.HealthRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthReply:
        return health_pb2.HealthReply(process="scheduler", status="available", pid=os.getpid())

    async def RegisterTask(
        self, request: scheduler_pb2.RegisterTaskRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        params = orjson.loads(request.params_json or b"{}")
        details = params.pop("details", None)
        custom = request.custom_metadata if request.HasField("custom_metadata") else None
        exempt = request.type in ("taskCancelation", "taskDeletion")
        if not exempt and self.store.database_size() > TASK_DB_STOP_BYTES:
            return _error(ApiError("no_space_left_on_device", _QUEUE_FULL))
        replication = Replication(request.task_id if request.HasField("task_id") else None, request.dry_run)
        try:
            record = await self.register(
                request.type, request.index_uid or None, params, details, request.payload, custom, replication
            )
        except ApiError as error:
            return _error(error)
        except (lmdb.MapFullError, lmdb.DiskError) as error:
            return _error(ApiError("no_space_left_on_device", f"The task could not be stored: {error}."))
        except OSError as error:
            code = "no_space_left_on_device" if error.errno == errno.ENOSPC else "io_error"
            return _error(ApiError(code, f"The task could not be stored: {error}."))
        return _reply(summarized_task(record))

    async def register(
        self,
        task_type: str,
        index_uid: str | None,
        params: dict[str, Any],
        details: dict[str, Any] | None,
        payload: bytes = b"",
        custom: str | None = None,
        replication: Replication = _NO_REPLICATION,
    ) -> dict[str, Any]:
        """Durably enqueue a task (fsync before returning) and wake the executor; a dry run stops
        before writing."""
        async with self._register_lock:
            uid = replication.task_uid(self.store.get_meta("next_task_uid", 0))
            if task_type in ("taskCancelation", "taskDeletion"):
                matched = match_tasks(self.store, params.pop("filters"), self.executor.processing)
                matched = BitMap(u for u in matched if u < uid)
                store_matched_tasks(params, matched)
                details = {**(details or {}), "matchedTasks": len(matched)}
            record = new_record(uid, task_type, index_uid, details, params, now_ns(), custom)
            if replication.dry_run:
                return record
            with self.store.write() as txn:
                txn.set_meta("next_task_uid", uid + 1)
                txn.put_task(record)
                if payload:
                    txn.put_payload(uid, payload)
        if task_type == "taskCancelation":
            await self.executor.request_abort(matched_tasks(params))
        self.executor.wake.set()
        return record

    def _view(self, record: dict[str, Any]) -> dict[str, Any]:
        processing = self.executor.processing
        return public_task(processing.overlay(record) if processing else record)

    def _requested_task(self, request: json_pb2.JsonRequest) -> dict[str, Any]:
        """The stored task ``{"uid", "authorizedIndexes"?}`` names; ``task_not_found`` also when the
        request's key may not see it."""
        query = orjson.loads(request.json)
        uid = query["uid"]
        record = self.store.get_task(uid)
        patterns = query.get("authorizedIndexes")
        if record is None or (patterns is not None and uid not in visible_tasks(self.store, patterns)):
            raise ApiError("task_not_found", f"Task `{uid}` not found.")
        return record

    async def GetTask(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self._view(self._requested_task(request)))

    async def ListTasks(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        matched = match_tasks(self.store, query, self.executor.processing)
        page, next_uid = seek_page(
            matched, query.get("limit", 20), query.get("from"), query.get("reverse", False)
        )
        results = [self._view(r) for r in in_order(self.store.get_tasks(page), page)]
        return _reply(seek_response(results, len(matched), query, next_uid))

    async def GetBatch(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        uid = query["uid"]
        batch = self._batch(uid)
        patterns = query.get("authorizedIndexes")
        if patterns is not None and batch is not None:
            visible = visible_tasks(self.store, patterns)
            if uid in hidden_batches(self.store, visible, self.executor.processing):
                batch = None
        if batch is None:
            return _error(ApiError("batch_not_found", f"Batch `{uid}` not found."))
        return _reply(batch)

    async def ListBatches(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        uids = BitMap(self.store.batch_uids())
        processing = self.executor.processing
        if processing is not None:
            uids.add(processing.batch_uid)
        filters = {k: v for k, v in query.items() if k not in ("limit", "from", "reverse", "batchUids")}
        if any(v is not None for v in filters.values()):
            # A batch matches when one of its tasks does; the running batch's uid lives only in memory.
            tasks = self.store.get_tasks(list(match_tasks(self.store, filters, processing)))
            views = [processing.overlay(r) for r in tasks] if processing else tasks
            uids = BitMap(view["batchUid"] for view in views if view["batchUid"] is not None)
        if query.get("batchUids") is not None:
            uids &= BitMap(query["batchUids"])
        if query.get("authorizedIndexes") is not None:
            visible = visible_tasks(self.store, query["authorizedIndexes"])
            uids -= hidden_batches(self.store, visible, processing)
        page, next_uid = seek_page(
            uids, query.get("limit", 20), query.get("from"), query.get("reverse", False)
        )
        results = [b for b in (self._batch(uid) for uid in page) if b is not None]
        return _reply(seek_response(results, len(uids), query, next_uid))

    def _batch(self, uid: int) -> dict[str, Any] | None:
        processing = self.executor.processing
        if processing is not None and uid == processing.batch_uid:
            return processing_batch(self.store, processing)
        stored = self.store.get_batch(uid)
        if stored is None:
            return None
        return public_batch(stored)

    async def GetIndex(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return self._about_index(request, public_index)

    async def GetSettings(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return self._about_index(request, lambda index: public_settings(index.get("settings", {})))

    def _about_index(
        self, request: json_pb2.JsonRequest, view: Callable[[dict[str, Any]], Any]
    ) -> json_pb2.JsonReply:
        uid = orjson.loads(request.json)["uid"]
        index = self.store.get_index(uid)
        if index is None:
            return _error(index_not_found(uid))
        return _reply(view(index))

    async def ListIndexes(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        indexes = sorted(self.store.list_indexes(), key=lambda i: i["uid"].encode())
        if query.get("authorizedIndexes") is not None:
            allowed = IndexPatterns(query["authorizedIndexes"])
            indexes = [index for index in indexes if allowed.allows(index["uid"])]
        offset, limit = query.get("offset", 0), query.get("limit", 20)
        results = [public_index(i) for i in indexes[offset : offset + limit]]
        return _reply({"results": results, "offset": offset, "limit": limit, "total": len(indexes)})

    async def Stats(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        processing = self.executor.processing
        indexing = set()
        if processing is not None:
            indexing = {r["indexUid"] for r in self.store.get_tasks(list(processing.task_uids))}
        indexes = {
            i["uid"]: {"isIndexing": i["uid"] in indexing, "updatedAt": format_datetime(i["updatedNs"])}
            for i in self.store.list_indexes()
        }
        return _reply({**self.store.sizes(), "indexes": indexes})

    async def ListKeys(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply({"results": self.keys.list()})

    async def CreateKey(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self.keys.create(orjson.loads(request.json)))

    async def UpdateKey(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        changes = orjson.loads(request.json)
        return _answer(lambda: self.keys.update(changes.pop("uid"), changes))

    async def DeleteKey(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self.keys.delete(orjson.loads(request.json)["uid"]))

    async def GetNetwork(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply(self.network.get())

    async def UpdateNetwork(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self.network.update(orjson.loads(request.json)))

    async def ListDynamicSearchRules(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply({"results": self.store.list_rules()})

    async def ListWebhooks(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply({"results": self.webhooks.all()})

    async def CreateWebhook(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self.webhooks.create(orjson.loads(request.json)))

    async def UpdateWebhook(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        changes = orjson.loads(request.json)
        return _answer(lambda: self.webhooks.update(changes.pop("uuid"), changes))

    async def DeleteWebhook(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _answer(lambda: self.webhooks.delete(orjson.loads(request.json)["uuid"]))

    async def GetFeatures(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply(self.features.get())

    async def UpdateFeatures(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        return _reply(self.features.update(orjson.loads(request.json)))

    async def GetTaskDocuments(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        """The stored payload and its ``payloadFormat`` (``gateway/task_documents.py`` shows it): only
        tasks not yet applied keep one."""
        try:
            record = self._requested_task(request)
        except ApiError as error:
            return _error(error)
        uid = record["uid"]
        # A processing task is stored as enqueued (processing is the executor's overlay).
        if record["type"] != "documentAdditionOrUpdate" or record["status"] != ENQUEUED:
            return _error(
                ApiError(
                    "task_file_not_found",
                    f"Task `{uid}` does not contain any documents. Only `documentAdditionOrUpdate` tasks"
                    " with the statuses `enqueued` or `processing` contain documents",
                )
            )
        payload = self.store.get_payload(uid) or b"[]"
        kind = record["params"].get("payloadFormat")
        return _reply({"format": kind, "payload": payload.decode()})

    async def CompactTaskQueue(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        async with self._compact_lock:
            try:
                done = await compact(self.store)
            except (lmdb.Error, OSError) as error:
                log.error("task store compaction failed", exc_info=error)
                return _reply({"errorMessage": str(error)})
        return _reply({"preSize": done.pre_size, "postSize": done.post_size})


def _answer(call: Callable[[], Any]) -> json_pb2.JsonReply:
    try:
        return _reply(call())
    except ApiError as error:
        return _error(error)
