"""``/indexes/{uid}/documents`` (core.md §3.3): reads fan out to shards, writes become tasks."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import orjson
from sanic import Blueprint, HTTPResponse, Request

from common.documents import PayloadFormat, is_valid_document_id, parse_payload
from common.documents.payload import stored_payload
from common.documents.primary_key import invalid_document_id_error
from common.documents.projection import VECTORS, select_attributes, vectors_field, without_vectors
from common.errors import ApiError
from common.filter.errors import FilterError
from common.filter.parse import parse_filter
from common.sort import SortError, parse_sort
from common.validation import STAR, Kind, Param, QueryKind, QuerySchema, Schema, Spec
from gateway.foreign import refuse_foreign, resolve_foreign
from gateway.http.requests import checked_index_uid, json_body, parse_query
from gateway.http.responses import json_response
from gateway.pages import merge_shard_pages
from gateway.search.params import query_filter, sort_entries

bp = Blueprint("documents")

_WRITE_QUERY = QuerySchema(
    {
        "primaryKey": Param(QueryKind.STRING, code="invalid_index_primary_key"),
        "csvDelimiter": Param(QueryKind.STRING, code="invalid_document_csv_delimiter"),
        "customMetadata": Param(QueryKind.STRING, code="invalid_index_custom_metadata"),
        "skipCreation": Param(QueryKind.STRING, code="invalid_skip_creation"),
    }
)
_DELETE_QUERY = QuerySchema({"customMetadata": Param(QueryKind.STRING, code="invalid_index_custom_metadata")})
_READ_QUERY = QuerySchema(
    {
        "offset": Param(QueryKind.POSITIVE_INTEGER, code="invalid_document_offset"),
        "limit": Param(QueryKind.POSITIVE_INTEGER, code="invalid_document_limit"),
        "fields": Param(QueryKind.STRING_LIST, code="invalid_document_fields", star=True),
        "retrieveVectors": Param(QueryKind.BOOLEAN, code="invalid_document_retrieve_vectors"),
        "ids": Param(QueryKind.STRING_LIST, code="invalid_document_ids"),
        "filter": Param(QueryKind.STRING, code="invalid_document_filter"),
        "sort": Param(QueryKind.STRING, code="invalid_document_sort"),
    }
)
_ONE_QUERY = QuerySchema(
    {
        "fields": Param(QueryKind.STRING_LIST, code="invalid_document_fields", star=True),
        "retrieveVectors": Param(QueryKind.BOOLEAN, code="invalid_document_retrieve_vectors"),
    }
)
_FETCH = Schema(
    {
        "offset": Spec(Kind.POSITIVE_INTEGER, code="invalid_document_offset"),
        "limit": Spec(Kind.POSITIVE_INTEGER, code="invalid_document_limit"),
        "fields": Spec(Kind.ARRAY, nullable=True, code="invalid_document_fields", items=Spec(Kind.STRING)),
        "retrieveVectors": Spec(Kind.BOOLEAN, code="invalid_document_retrieve_vectors"),
        "ids": Spec(
            Kind.ARRAY, nullable=True, code="invalid_document_ids", items=Spec(Kind.STRING | Kind.INTEGER)
        ),
        "filter": Spec(Kind.STRING | Kind.ARRAY, nullable=True, code="invalid_document_filter"),
        "sort": Spec(Kind.ARRAY, nullable=True, code="invalid_document_sort", items=Spec(Kind.STRING)),
    }
)
_DELETE_BY_FILTER = Schema(
    {
        "filter": Spec(
            Kind.STRING | Kind.ARRAY,
            code="invalid_document_filter",
            required=True,
            missing_code="missing_document_filter",
        )
    }
)


def _custom_metadata(query: dict[str, Any]) -> str | None:
    value = query.get("customMetadata")
    return value if isinstance(value, str) else None


async def _add_or_update(request: Request, index_uid: str, method: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    query = parse_query(request, _WRITE_QUERY)
    skip = query.get("skipCreation", "false")
    if skip.lower() not in ("true", "false"):
        raise ApiError(
            "invalid_skip_creation", f"skipCreation must be either `true` or `false`. Found: `{skip}`"
        )
    fmt = PayloadFormat.from_content_type(request.headers.get("content-type"), query.get("csvDelimiter"))
    documents = parse_payload(request.body, fmt)
    params = {
        "method": method,
        "primaryKey": query.get("primaryKey"),
        "skipCreation": skip.lower() == "true",
        "allowIndexCreation": True,
        "details": {"receivedDocuments": len(documents), "indexedDocuments": None},
        "payloadFormat": fmt.kind,
    }
    payload = stored_payload(request.body, fmt, documents)
    task = await request.app.ctx.cluster.register_task(
        "documentAdditionOrUpdate", uid, params, payload, _custom_metadata(query)
    )
    return json_response(task, status=202)


@bp.post("/indexes/<index_uid:str>/documents", ctx_action="documents.add")
async def add_documents(request: Request, index_uid: str) -> HTTPResponse:
    return await _add_or_update(request, index_uid, "replace")


@bp.put("/indexes/<index_uid:str>/documents", ctx_action="documents.add")
async def update_documents(request: Request, index_uid: str) -> HTTPResponse:
    return await _add_or_update(request, index_uid, "update")


async def _delete(request: Request, index_uid: str, params: dict[str, Any]) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    query = parse_query(request, _DELETE_QUERY)
    task = await request.app.ctx.cluster.register_task(
        "documentDeletion", uid, params, b"", _custom_metadata(query)
    )
    return json_response(task, status=202)


@bp.delete("/indexes/<index_uid:str>/documents/<document_id:str>", ctx_action="documents.delete")
async def delete_document(request: Request, index_uid: str, document_id: str) -> HTTPResponse:
    details = {"providedIds": 1, "deletedDocuments": None, "originalFilter": None}
    return await _delete(request, index_uid, {"kind": "ids", "ids": [document_id], "details": details})


@bp.post("/indexes/<index_uid:str>/documents/delete-batch", ctx_action="documents.delete")
async def delete_documents_batch(request: Request, index_uid: str) -> HTTPResponse:
    checked_index_uid(index_uid)
    body = json_body(request)
    if not isinstance(body, list):
        found = orjson.dumps(body).decode()
        raise ApiError("bad_request", f"Json deserialize error: invalid type: {found}, expected a sequence")
    ids = [value if isinstance(value, str) else orjson.dumps(value).decode() for value in body]
    details = {"providedIds": len(ids), "deletedDocuments": None, "originalFilter": None}
    return await _delete(request, index_uid, {"kind": "ids", "ids": ids, "details": details})


@bp.delete("/indexes/<index_uid:str>/documents", ctx_action="documents.delete")
async def clear_documents(request: Request, index_uid: str) -> HTTPResponse:
    return await _delete(request, index_uid, {"kind": "clear", "details": {"deletedDocuments": None}})


@bp.post("/indexes/<index_uid:str>/documents/delete", ctx_action="documents.delete")
async def delete_by_filter(request: Request, index_uid: str) -> HTTPResponse:
    """The filter's syntax is checked now; shards evaluate it when the task runs (core.md §3.3)."""
    checked_index_uid(index_uid)
    raw = _DELETE_BY_FILTER.validate(json_body(request))["filter"]
    try:
        tree = parse_filter(raw)
    except FilterError as error:
        raise error.api_error("invalid_document_filter") from None
    if tree is None:
        raise ApiError("invalid_document_filter", "Sending an empty filter is forbidden.")
    refuse_foreign(tree, request.app.ctx.features.enabled("foreignKeys"))
    details = {"providedIds": 0, "deletedDocuments": None, "originalFilter": orjson.dumps(raw).decode()}
    params = {
        "kind": "filter",
        "filter": raw,
        **request.app.ctx.features.filters().params(),
        "details": details,
    }
    return await _delete(request, index_uid, params)


async def _require_index(request: Request, uid: str) -> dict[str, Any]:
    index: dict[str, Any] = await request.app.ctx.cluster.ask_scheduler("GetIndex", {"uid": uid})
    return index


@bp.get("/indexes/<index_uid:str>/documents", ctx_action="documents.get")
async def get_documents(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    query = parse_query(request, _READ_QUERY)
    if "filter" in query:
        query["filter"] = query_filter(query["filter"])
    if "sort" in query:
        query["sort"] = sort_entries(query["sort"])
    index = await _require_index(request, uid)
    return json_response(await _read_page(request, index, query))


@bp.post("/indexes/<index_uid:str>/documents/fetch", ctx_action="documents.get")
async def fetch_documents(request: Request, index_uid: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    body = _FETCH.validate(json_body(request))
    index = await _require_index(request, uid)
    if body.get("ids") is not None:
        body["ids"] = [i if isinstance(i, str) else str(i) for i in body["ids"]]
    return json_response(await _read_page(request, index, body))


async def _read_page(request: Request, index: dict[str, Any], query: dict[str, Any]) -> dict[str, Any]:
    uid = index["uid"]
    retrieve_vectors = bool(query.get("retrieveVectors", False))
    sort = query.get("sort") or None
    try:
        parse_sort(sort or [])
    except SortError as error:
        raise error.api_error("invalid_document_sort") from None
    offset, limit = query.get("offset", 0), query.get("limit", 20)
    ids = query.get("ids")
    for position, external_id in enumerate(ids or []):
        if not is_valid_document_id(external_id):
            detail = invalid_document_id_error(external_id).message
            raise ApiError("invalid_document_ids", f"In `.ids[{position}]`: {detail}")
    shard_query = {
        "index": uid,
        "offset": 0,
        "limit": offset + limit,
        "ids": ids,
        "filter": await resolve_foreign(request.app, uid, query.get("filter"), "invalid_document_filter"),
        "sort": sort,
        **request.app.ctx.features.filters().params(),
        "retrieveVectors": retrieve_vectors,
        "primaryKey": index.get("primaryKey"),
    }
    replies = await request.app.ctx.cluster.ask_shards("GetDocuments", shard_query)
    page = merge_shard_pages([reply["results"] for reply in replies], offset, limit)
    fields = query.get("fields")
    embedders = {name for reply in replies for name in reply.get("embedders", ())}
    results = [_project(doc, fields, retrieve_vectors, embedders) for doc in page]
    return {"results": results, "offset": offset, "limit": limit, "total": sum(r["total"] for r in replies)}


def _project(
    document: dict[str, Any], fields: Any, retrieve_vectors: bool, embedders: Collection[str] = ()
) -> dict[str, Any]:
    """``fields`` selects stored fields; ``_vectors`` comes last and only with ``retrieveVectors``:
    the stored one when ``fields`` names it (or is absent), else only the ``embedders``' entries,
    which the shards added (core.md §3.3)."""
    selected = fields is not None and fields is not STAR
    vectors = vectors_field(document)
    if selected and VECTORS not in fields:
        vectors = {name: value for name, value in vectors.items() if name in embedders}
    document = without_vectors(select_attributes(document, fields) if selected else document)
    if retrieve_vectors:
        document[VECTORS] = vectors
    return document


@bp.get("/indexes/<index_uid:str>/documents/<document_id:str>", ctx_action="documents.get")
async def get_document(request: Request, index_uid: str, document_id: str) -> HTTPResponse:
    uid = checked_index_uid(index_uid)
    query = parse_query(request, _ONE_QUERY)
    await _require_index(request, uid)
    if not is_valid_document_id(document_id):
        error = invalid_document_id_error(document_id)
        raise ApiError(error.code, error.message)
    retrieve_vectors = bool(query.get("retrieveVectors", False))
    found = await request.app.ctx.cluster.get_document(uid, document_id, retrieve_vectors)
    document, embedders = (found["document"], found["embedders"]) if retrieve_vectors else (found, [])
    if document is None:
        raise ApiError("document_not_found", f"Document `{document_id}` not found.")
    return json_response(_project(document, query.get("fields"), retrieve_vectors, embedders))
