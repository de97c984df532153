"""The shard worker process: serves gRPC on its unix socket inside the data directory."""

from __future__ import annotations

import asyncio
import errno
import os
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import lmdb
import orjson

from common.errors import ApiError
from common.features import FilterFeatures
from common.gcpause import gc_paused, keep_full_collections_rare
from common.layout import DataLayout
from common.logging import get_logger
from common.operations import add_operations
from common.process import wait_for_stop_signal
from common.rpc import health_pb2, json_pb2, operations_pb2, shard_pb2, shard_pb2_grpc
from common.rpc.channels import aio_server
from common.rpc.operators import OperatorServices
from common.rpc.outbox import Outbox
from common.timing import Steps, timed
from shard.batches import BatchDropped
from shard.index import BatchAborted
from shard.metrics import ShardMetrics
from shard.query.search import HIT, Entry
from shard.search_costs import SearchCosts, search_shape
from shard.search_results import keep_reply, kept_reply, result_key
from shard.store import ShardStore

log = get_logger(__name__)


SEARCH_THREADS = 1
"""Searches are CPU work under one GIL: more threads only time-slice them. Run one after the other,
movies at 16 clients kept their throughput (exact 217-232 against 213-225 req/s with the default
pool of 6) and cut p99 by a third (exact 137-144 against 196-213 ms, typo 69-71 against 85-95,
exact+highlight 261-268 against 383-392); a search slower than the others now delays those queued
behind it instead of sharing the core with them."""


class _Search:
    """One search call as the shard runs it: its parameters parsed once, on the event loop."""

    __slots__ = ("call_id", "index_uid", "key", "params", "received", "shape", "steps")

    def __init__(self, call: shard_pb2.SearchCall) -> None:
        self.received = time.perf_counter_ns()
        self.call_id = call.call_id
        self.index_uid = call.request.index_uid
        self.params: dict[str, Any] = orjson.loads(call.request.query_json)
        self.steps = timed(self.params.get("showPerformanceDetails"))
        self.shape = search_shape(self.index_uid, self.params)
        self.key = result_key(self.index_uid, call.request.query_json, self.params)


class ShardService(shard_pb2_grpc.ShardServicer):
    """gRPC face of one shard; the index work lives in the concern packages of ``shard``."""

    def __init__(self, shard_id: int, store: ShardStore, metrics: ShardMetrics) -> None:
        self.name = f"shard-{shard_id}"
        self.store = store
        self.metrics = metrics
        self._abort_flags: dict[int, threading.Event] = {}
        self._searches = ThreadPoolExecutor(SEARCH_THREADS, thread_name_prefix="search")
        self._costs = SearchCosts()

    async def Health(
        self, request: health_pb2.HealthRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthReply:
        return health_pb2.HealthReply(process=self.name, status="available", pid=os.getpid())

    async def Search(
        self, messages: AsyncIterator[shard_pb2.SearchCalls], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[shard_pb2.SearchAnswers]:
        """Searches known to be cheap (``shard/search_costs.py``) or light (``ShardStore.light``) run
        here as they arrive, on the event loop: handing them to the search thread and back would cost
        more than they do. The others run on the search thread, each as its own task, so that ranking
        does not stall the shard's other rpcs. Answers go out as they finish, whatever the order the
        calls came in, those finished while the previous message was written together in one."""
        answers: Outbox[shard_pb2.SearchAnswer] = Outbox()
        running: set[asyncio.Task[None]] = set()

        async def on_thread(search: _Search) -> None:
            waiting = self.metrics.searches_waiting
            waiting.inc()
            try:
                loop = asyncio.get_running_loop()
                answer = await loop.run_in_executor(self._searches, self._answer, search)
            finally:
                waiting.dec()
            answers.put(answer)

        async def receive() -> None:
            async for message in messages:
                for call in message.calls:
                    try:
                        search = _Search(call)
                        kept = kept_reply(self.store.results, search.key)
                        if kept is not None:
                            self.metrics.result_cache_hits.inc()
                            answers.put(_answered(search, kept, self.metrics))
                            continue
                        here = self._costs.cheap(search.shape) or self.store.light(
                            search.index_uid, search.params
                        )
                    except Exception as error:
                        answers.put(_failure(call.call_id, call.request.index_uid, error))
                        continue
                    if here:
                        answers.put(self._answer(search))
                        await asyncio.sleep(0)  # the answer is written before the next search runs
                    else:
                        task = asyncio.create_task(on_thread(search))
                        running.add(task)
                        task.add_done_callback(running.discard)
            while running:
                await asyncio.wait(set(running))
            answers.close()

        receiver = asyncio.create_task(receive())
        try:
            async for batch in answers.batches():
                yield shard_pb2.SearchAnswers(answers=batch)
        finally:
            for task in (receiver, *running):
                task.cancel()

    def _answer(self, search: _Search) -> shard_pb2.SearchAnswer:
        """Runs the search and keeps its reply (``shard/search_results.py``)."""
        results = (self.store.results, self.store.results.generation)  # before the search's snapshot
        try:
            reply = self._reply(search)
        except Exception as error:
            return _failure(search.call_id, search.index_uid, error)
        keep_reply(results, search.key, reply)
        return _answered(search, reply, self.metrics)

    def _reply(self, search: _Search) -> shard_pb2.SearchReply:
        steps = search.steps
        try:
            result = self._costs.run(search.shape, self.store.search, search.index_uid, search.params, steps)
        except ApiError as error:
            payload = {"code": error.code, "message": error.message}
            return shard_pb2.SearchReply(hits_json=b"[]", index_found=True, error_json=orjson.dumps(payload))
        if result is None:
            return shard_pb2.SearchReply(hits_json=b"[]", candidates=0, index_found=False)
        documents: list[bytes] = []
        if result.term_counts is not None:
            hits_json = orjson.dumps(result.term_counts)
        elif result.typo_words is not None:
            hits_json = orjson.dumps(result.typo_words)
        else:
            hits_json, documents = _hits(result.entries + [entry for _, entry in result.pinned or ()])
        semantic_json, semantic_documents = _hits(result.semantic_entries or [])
        return shard_pb2.SearchReply(
            hits_json=hits_json,
            hit_documents=documents,
            candidates=result.candidates,
            index_found=True,
            max_total_hits=result.max_total_hits,
            facets_json=b"" if result.facets is None else orjson.dumps(result.facets),
            steps_json=b"" if steps is None else orjson.dumps(steps.durations),
            rule_groups_json=b"" if result.rule_groups is None else orjson.dumps(result.rule_groups),
            deduplicated=result.deduplicated,
            pinned_ids=[external_id for external_id, _ in result.pinned or ()],
            semantic_hits_json=semantic_json if result.semantic_entries is not None else b"",
            semantic_hit_documents=semantic_documents,
            union_candidates=result.union_candidates,
            union_facets_json=b"" if result.union_facets is None else orjson.dumps(result.union_facets),
            capped_typos_json=orjson.dumps(result.capped_typos) if result.capped_typos else b"",
            degraded=result.degraded,
        )

    async def ApplyBatch(
        self, request: shard_pb2.ApplyBatchRequest, context: grpc.aio.ServicerContext
    ) -> shard_pb2.ApplyBatchReply:
        """The write transaction runs in a thread so reads keep being served meanwhile."""
        with gc_paused():
            operations = orjson.loads(request.operations_json)
        flag = self._abort_flags.setdefault(request.batch_uid, threading.Event())
        should_abort = flag.is_set if request.abortable else (lambda: False)
        steps = Steps()
        skip = frozenset(request.skip_tasks)
        held = False
        started = time.perf_counter()
        try:
            if request.prepare:  # held open until the commit (shard/held.py)
                result, held = await asyncio.to_thread(
                    self.store.batches.prepare, request.batch_uid, operations, skip, should_abort, steps
                )
            else:  # the commit of a prepared batch, or a batch in one phase (abortable then)
                result = await asyncio.to_thread(
                    self.store.batches.commit, request.batch_uid, operations, skip, should_abort, steps
                )
        except (BatchAborted, BatchDropped):
            return shard_pb2.ApplyBatchReply(aborted=True)
        except (lmdb.Error, OSError) as error:
            # The transaction was aborted, so the data is intact; the scheduler fails the batch's tasks.
            full = isinstance(error, lmdb.MapFullError) or os.strerror(errno.ENOSPC) in str(error)
            status = grpc.StatusCode.RESOURCE_EXHAUSTED if full else grpc.StatusCode.DATA_LOSS
            await context.abort(status, f"{self.name}: {error}")
        finally:
            self._abort_flags.pop(request.batch_uid, None)
        elapsed = time.perf_counter() - started
        self.metrics.batch_seconds.observe(elapsed)
        log.debug(
            "batch applied", batch_uid=request.batch_uid, prepare=request.prepare, ms=round(elapsed * 1000, 1)
        )
        # The steps are this call's (the batch's progress trace), never part of the recorded result.
        return shard_pb2.ApplyBatchReply(
            result_json=orjson.dumps({**result, "steps": steps.durations}), prepared=held
        )

    async def AbortBatch(
        self, request: shard_pb2.AbortBatchRequest, context: grpc.aio.ServicerContext
    ) -> shard_pb2.AbortBatchReply:
        self._abort_flags.setdefault(request.batch_uid, threading.Event()).set()
        await asyncio.to_thread(self.store.batches.drop, request.batch_uid)
        return shard_pb2.AbortBatchReply()

    async def GetDocuments(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        """Results are ``[sequence, merge key, document]``: the gateway merges the shards' pages by key
        (empty without ``sort``), then sequence, so the order is the same whatever the shard count.
        """
        query = orjson.loads(request.json)
        selection = (query.get("ids"), query.get("filter"), FilterFeatures.from_params(query))
        try:
            if query.get("sort"):
                wanted = query["offset"] + query["limit"]
                args = (query["index"], query["sort"], wanted, *selection)
                entries, total = await asyncio.to_thread(self.store.sort_documents, *args)
                results: list[Any] = entries[query["offset"] :]
            else:
                page, total = await asyncio.to_thread(
                    self.store.list_documents, query["index"], query["offset"], query["limit"], *selection
                )
                results = [(sequence, [], document) for sequence, document in page]
        except ApiError as error:
            return json_pb2.JsonReply(error_json=orjson.dumps(error.to_dict()))
        reply: dict[str, Any] = {"results": results, "total": total}
        if query.get("retrieveVectors") and results:
            documents = [entry[2] for entry in results]
            show = (query["index"], documents, None, query.get("primaryKey"))
            reply["embedders"] = await asyncio.to_thread(self.store.show_vectors, *show)
        return json_pb2.JsonReply(json=orjson.dumps(reply))

    async def GetDocument(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        document = self.store.get_document(query["index"], query["id"])
        if not query.get("retrieveVectors"):
            return json_pb2.JsonReply(json=orjson.dumps(document))
        embedders = []
        if document is not None:
            embedders = self.store.show_vectors(query["index"], [document], [query["id"]], None)
        return json_pb2.JsonReply(json=orjson.dumps({"document": document, "embedders": embedders}))

    async def Stats(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        """The table sizes scan the index's keys: in a thread, like a search."""
        query = orjson.loads(request.json)
        if "index" in query:
            internal = bool(query.get("showInternalDatabaseSizes"))
            stats = await asyncio.to_thread(self.store.index_stats, query["index"], internal)
            return json_pb2.JsonReply(json=orjson.dumps(stats))
        return json_pb2.JsonReply(json=orjson.dumps(self.store.sizes()))

    async def CheckDocuments(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        """Reads every document of the index: in a thread, like a search."""
        query = orjson.loads(request.json)
        found = await asyncio.to_thread(self.store.check_documents, query["index"], query)
        return json_pb2.JsonReply(json=orjson.dumps(found))

    async def Fields(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        paths = await asyncio.to_thread(self.store.field_paths, query["index"])
        return json_pb2.JsonReply(json=orjson.dumps({"fields": paths}))

    async def Embed(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        """A model's forward pass or a provider's answer: in a thread, off the event loop and the
        search thread."""
        query = orjson.loads(request.json)
        args = (query["index"], query["embedder"], query["text"], query.get("fragments"))
        try:
            vector = await asyncio.to_thread(self.store.embed_query, *args)
        except ApiError as error:
            return json_pb2.JsonReply(error_json=orjson.dumps(error.to_dict()))
        return json_pb2.JsonReply(json=orjson.dumps({"vector": vector, "indexFound": vector is not None}))

    async def DocumentVector(
        self, request: json_pb2.JsonRequest, context: grpc.aio.ServicerContext
    ) -> json_pb2.JsonReply:
        query = orjson.loads(request.json)
        args = (
            query["index"],
            query["embedder"],
            query["id"],
            query.get("filter"),
            FilterFeatures.from_params(query),
        )
        try:
            found = await asyncio.to_thread(self.store.document_vector, *args)
        except ApiError as error:
            return json_pb2.JsonReply(error_json=orjson.dumps(error.to_dict()))
        return json_pb2.JsonReply(json=orjson.dumps(found))


def _failure(call_id: int, index_uid: str, error: Exception) -> shard_pb2.SearchAnswer:
    """A search that failed unexpectedly: its answer says so, and the others on the stream go on."""
    log.exception("search failed", index=index_uid)
    return shard_pb2.SearchAnswer(call_id=call_id, failure=repr(error))


def _answered(search: _Search, reply: shard_pb2.SearchReply, metrics: ShardMetrics) -> shard_pb2.SearchAnswer:
    """The answer to send (a copy of ``reply``); it carries the time the search took here, waits
    included (``work_ns``)."""
    answer = shard_pb2.SearchAnswer(call_id=search.call_id, reply=reply)
    answer.reply.work_ns = time.perf_counter_ns() - search.received
    metrics.search_seconds.observe(answer.reply.work_ns / 1e9)
    return answer


def _hits(entries: list[Entry]) -> tuple[bytes, list[bytes]]:
    """The entries without their hits, and each hit's JSON apart (``SearchReply.hit_documents``)."""
    documents = [orjson.dumps(entry[HIT]) for entry in entries]
    return orjson.dumps([[*entry[:HIT], None, *entry[HIT + 1 :]] for entry in entries]), documents


async def serve(
    layout: DataLayout,
    shard_id: int,
    cache_budget: int,
    shards: int,
    embedding_cache: int = 0,
    accept_older: bool = False,
    results_budget: int = 0,
) -> None:
    """``cache_budget``: this shard's share of ``--read-cache-size``, in bytes; ``shards``: how many
    shards share each index; ``embedding_cache``: ``--experimental-embedding-cache-entries``;
    ``accept_older``: ``--experimental-dumpless-upgrade``; ``results_budget``: this shard's share of
    ``--result-cache-size``."""
    layout.create()
    store = ShardStore(
        layout.shard_dir(shard_id), cache_budget, shards, embedding_cache, accept_older, results_budget
    )
    keep_full_collections_rare()
    server = aio_server(layout.shard_socket(shard_id))
    metrics = ShardMetrics(shard_id, store)
    shard_pb2_grpc.add_ShardServicer_to_server(ShardService(shard_id, store, metrics), server)
    add_operations(server, metrics.registry)
    operators = OperatorServices(
        server,
        shard_pb2.DESCRIPTOR.services_by_name["Shard"].full_name,
        operations_pb2.DESCRIPTOR.services_by_name["Operations"].full_name,
    )
    await server.start()
    await operators.serving()
    log.info("shard listening", socket=str(layout.shard_socket(shard_id)), read_cache_bytes=cache_budget)
    await wait_for_stop_signal()
    await operators.stopping()
    await server.stop(grace=2)
    store.close()
    log.info("shard stopped")
