"""Turning a batch's document tasks into per-shard operations (CPU work, run off the event loop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.documents import DocumentError, extract_document_id, infer_primary_key
from common.documents.geo import check_geo
from common.documents.geojson import check_geojson
from common.documents.payload import stored_documents
from common.documents.vectors import normalize_vectors
from common.features import FilterFeatures
from common.gcpause import gc_paused
from common.partition import shard_of

MAX_FIELDS = 65_535
"""Distinct fields an index can hold (core.md §3.3: ``max_fields_limit_exceeded``); shards store field ids
in 16 bits."""


@dataclass
class DocumentPlan:
    """Per-shard operations plus what the catalog must learn (a primary key) and which tasks failed."""

    operations: list[list[dict[str, Any]]]
    primary_key: str | None
    failures: dict[int, dict[str, str]] = field(default_factory=dict)
    geo: bool = False
    """Whether the index uses ``_geo``, whose documents' points are then validated."""
    geojson: bool = False
    """Whether ``_geojson`` is filterable, whose documents' shapes are then validated."""


def plan_documents(
    index_uid: str,
    tasks: list[dict[str, Any]],
    payloads: dict[int, bytes],
    primary_key: str | None,
    shard_count: int,
    geo: bool = False,
    geojson: bool = False,
) -> DocumentPlan:
    plan = DocumentPlan([[] for _ in range(shard_count)], primary_key, geo=geo, geojson=geojson)
    with gc_paused():
        _plan_tasks(plan, index_uid, tasks, payloads, shard_count)
    return plan


def _plan_tasks(
    plan: DocumentPlan,
    index_uid: str,
    tasks: list[dict[str, Any]],
    payloads: dict[int, bytes],
    shard_count: int,
) -> None:
    for task in tasks:
        uid = task["uid"]
        if task["type"] == "documentAdditionOrUpdate":
            try:
                documents = stored_documents(payloads[uid], task["params"].get("payloadFormat"))
                _plan_addition(plan, index_uid, task, documents, shard_count)
            except DocumentError as error:
                plan.failures[uid] = error.to_error()
        elif task["params"]["kind"] == "ids":
            per_shard: list[list[str]] = [[] for _ in range(shard_count)]
            for external_id in task["params"]["ids"]:
                per_shard[shard_of(external_id, shard_count)].append(external_id)
            for shard, ids in enumerate(per_shard):
                plan.operations[shard].append(
                    {"op": "deleteDocuments", "task": uid, "index": index_uid, "ids": ids}
                )
        elif task["params"]["kind"] == "filter":
            # Every shard evaluates the filter on its own documents when the batch runs; the primary
            # key (as of this point of the batch) finds the external ids of the documents it removes.
            operation = {
                "op": "deleteByFilter",
                "task": uid,
                "index": index_uid,
                "filter": task["params"]["filter"],
                **FilterFeatures.from_params(task["params"]).params(),
                "primaryKey": plan.primary_key,
            }
            for shard_ops in plan.operations:
                shard_ops.append(operation)
        else:
            for shard_ops in plan.operations:
                shard_ops.append({"op": "clearDocuments", "task": uid, "index": index_uid})


def _plan_addition(
    plan: DocumentPlan,
    index_uid: str,
    task: dict[str, Any],
    documents: list[dict[str, Any]],
    shard_count: int,
) -> None:
    params = task["params"]
    wanted = params.get("primaryKey")
    if plan.primary_key is not None and wanted is not None and wanted != plan.primary_key:
        raise DocumentError(
            "index_primary_key_already_exists",
            f"Index `{index_uid}`: Index already has a primary key: `{plan.primary_key}`.",
        )
    primary_key = plan.primary_key or wanted or infer_primary_key(documents[0] if documents else None)
    _check_field_count(index_uid, documents)
    # The position in the payload gives a created document its sequence, whichever shard holds it.
    per_shard: list[list[list[Any]]] = [[] for _ in range(shard_count)]
    for position, document in enumerate(documents):
        external_id = extract_document_id(document, primary_key)
        normalize_vectors(index_uid, document, external_id)
        if plan.geo:
            check_geo(index_uid, document, document[primary_key])
        if plan.geojson:
            check_geojson(index_uid, document, document[primary_key])
        per_shard[shard_of(external_id, shard_count)].append([external_id, document, position])
    plan.primary_key = primary_key
    for shard, docs in enumerate(per_shard):
        plan.operations[shard].append(
            {
                "op": "addDocuments",
                "task": task["uid"],
                "index": index_uid,
                "mode": params.get("method", "replace"),
                "skipCreation": params.get("skipCreation", False),
                "documents": docs,
            }
        )


def _check_field_count(index_uid: str, documents: list[dict[str, Any]]) -> None:
    """Refuse a task whose documents name more top-level fields than an index can hold, before a shard
    meets a field id past 16 bits. Fields added by earlier tasks, and nested paths, are not counted."""
    fields: set[str] = set()
    for document in documents:
        fields.update(document)
    if len(fields) > MAX_FIELDS:
        raise DocumentError(
            "max_fields_limit_exceeded",
            f"Index `{index_uid}`: A document cannot contain more than {MAX_FIELDS:,} fields.",
        )
