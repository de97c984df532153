"""``POST /indexes/{uid}/documents/edit`` (flag ``editDocumentsByFunction``): not supported.

Editing by function runs a Rhai script per document, and no maintained Rhai interpreter exists for
Python (none on PyPI). The request is still read as the reference reads it (query string, body,
then the flag), so clients get the same validation errors; a valid request with the flag on is then
refused with ``edit_documents_by_function_error`` saying why, rather than enqueued to fail later.
"""

from __future__ import annotations

from sanic import Blueprint, HTTPResponse, Request

from common.errors import ApiError
from common.validation import Kind, Param, QueryKind, QuerySchema, Schema, Spec
from gateway.features import RuntimeFeatures
from gateway.http.requests import checked_index_uid, json_body, parse_query

bp = Blueprint("document_edition")

_QUERY = QuerySchema({"customMetadata": Param(QueryKind.STRING, code="invalid_index_custom_metadata")})
_BODY = Schema(
    {
        "filter": Spec(Kind.ANY, code="invalid_document_edition_function_filter"),
        "context": Spec(Kind.ANY, code="invalid_document_edition_context"),
        # The reference reports a mistyped function under the filter's code; kept for compatibility.
        "function": Spec(
            Kind.STRING,
            required=True,
            code="invalid_document_edition_function_filter",
            missing_code="missing_document_edition_function",
        ),
    }
)
UNSUPPORTED = (
    "Editing documents by function is not supported by Sift: it runs Rhai functions, and no Rhai "
    "interpreter is available to Python. Update the documents with `PUT /indexes/{indexUid}/documents` "
    "instead."
)


@bp.post("/indexes/<index_uid:str>/documents/edit", ctx_action="documents.*")
async def edit_documents(request: Request, index_uid: str) -> HTTPResponse:
    parse_query(request, _QUERY)
    _BODY.validate(json_body(request))
    features: RuntimeFeatures = request.app.ctx.features
    features.require(
        "editDocumentsByFunction",
        "Using the documents edit route requires enabling the `edit documents by function` experimental "
        "feature. See https://github.com/orgs/meilisearch/discussions/762",
    )
    checked_index_uid(index_uid)
    raise ApiError("edit_documents_by_function_error", UNSUPPORTED)
