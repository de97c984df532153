"""The scheduler process: its store, catalogs, executor and webhook delivery behind the gRPC service,
until a stop signal or a crashed loop (which the launcher restarts)."""

from __future__ import annotations

import asyncio

from common.config import Config
from common.dump.writer import remove_leftovers as remove_dump_leftovers
from common.layout import DataLayout
from common.logging import get_logger
from common.operations import add_operations
from common.process import wait_for_stop_signal
from common.rpc import operations_pb2, scheduler_pb2, scheduler_pb2_grpc
from common.rpc.channels import aio_server
from common.rpc.operators import OperatorServices
from scheduler.batching import Limits
from scheduler.cleanup import cleanup_old_tasks
from scheduler.compaction import remove_leftovers
from scheduler.delivery import Deliverer
from scheduler.executor import Executor
from scheduler.features import FeatureCatalog
from scheduler.keys import KeyCatalog
from scheduler.metrics import SchedulerMetrics
from scheduler.objstore import ObjectStorage, snapshot_uploader
from scheduler.outbox import Outbox
from scheduler.server import SchedulerService
from scheduler.shards import ShardClients
from scheduler.snapshots import Snapshots, schedule_snapshots
from scheduler.store import SchedulerStore
from scheduler.upgrade import DatabaseUpgrade
from scheduler.webhooks import WebhookCatalog

log = get_logger(__name__)


async def serve(config: Config) -> None:
    layout = DataLayout(config.db_path)
    layout.create()
    store = SchedulerStore(layout.scheduler_dir)
    remove_leftovers(store)
    shards = ShardClients(layout, config.shards)
    limits = Limits(
        config.experimental_max_number_of_batched_tasks, config.experimental_limit_batched_tasks_total_size
    )
    webhooks = WebhookCatalog(store, config)
    deliverer = Deliverer.from_config(Outbox(store), webhooks, config)
    storage = ObjectStorage.from_config(config)
    snapshots = Snapshots(store, shards, config, None if storage is None else snapshot_uploader(storage))
    snapshots.remove_leftovers()
    upgrade = DatabaseUpgrade(store, config.db_path, config.shards, config.experimental_dumpless_upgrade)
    executor = Executor(store, shards, limits, deliverer, snapshots, upgrade)
    executor.dump_dir = config.dump_dir
    remove_dump_leftovers(config.dump_dir)
    keys = KeyCatalog(store)
    keys.ensure_defaults()
    service = SchedulerService(store, executor, keys, FeatureCatalog(store), webhooks)
    server = aio_server(layout.scheduler_socket)
    scheduler_pb2_grpc.add_SchedulerServicer_to_server(service, server)
    operators = OperatorServices(
        server,
        scheduler_pb2.DESCRIPTOR.services_by_name["Scheduler"].full_name,
        operations_pb2.DESCRIPTOR.services_by_name["Operations"].full_name,
    )
    add_operations(server, SchedulerMetrics(store, executor, deliverer).registry)
    if not config.experimental_replication_parameters:
        # With replication parameters, task uids are the replicas' business: none is deleted here.
        executor.before_batch = lambda: cleanup_old_tasks(store, service)
    await server.start()
    await operators.serving()
    await upgrade.enqueue_if_needed(service)
    # Delivery first: it loads the outbox before the executor can commit (and stage) anything.
    delivering = asyncio.create_task(deliverer.run_forever())
    running = asyncio.create_task(executor.run_forever())
    stopping = asyncio.create_task(wait_for_stop_signal())
    background = [delivering, running]
    if config.schedule_snapshot is not None:
        background.append(asyncio.create_task(schedule_snapshots(service, config.schedule_snapshot)))
    log.info("scheduler listening", socket=str(layout.scheduler_socket))
    await asyncio.wait({*background, stopping}, return_when=asyncio.FIRST_COMPLETED)
    ended = [t for t in background if t.done() and not t.cancelled() and t.exception()]
    crashed = bool(ended)
    if crashed:
        # A dead executor would leave a healthy-looking scheduler that never processes a task again
        # (a dead deliverer, one that never notifies; a dead snapshot clock, no scheduled snapshot):
        # exit so that the launcher restarts it, and the in-flight batch and the outbox are resumed.
        log.error("the task executor or webhook delivery stopped", exc_info=ended[0].exception())
    for task in (*background, stopping):
        task.cancel()
    await operators.stopping()
    await deliverer.close()
    await server.stop(grace=2)
    await shards.close()
    store.close()
    log.info("scheduler stopped")
    if crashed:
        raise SystemExit(1)
