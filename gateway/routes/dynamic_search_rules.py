"""``/dynamic-search-rules`` (flag ``dynamicSearchRules``): rules listed and read from the scheduler's
``rules`` table; created, changed and deleted by ``dsrUpdate``/``dsrClear`` tasks (``indexUid``
``.meili_dsr``), as the reference's community build does.

Bodies are validated before the flag is checked, and the flag before anything else, as there.
"""

from __future__ import annotations

from typing import Any

from sanic import Blueprint, HTTPResponse, Request

from common.dynamic_search_rules import (
    LIST,
    TASK_INDEX_UID,
    matches_filter,
    rule_not_found,
    validate_patch,
)
from common.errors import ApiError, invalid_index_uid
from common.index_patterns import is_valid_index_uid
from common.timefmt import parse_rfc3339
from gateway.features import RuntimeFeatures
from gateway.http.requests import json_body
from gateway.http.responses import json_response

bp = Blueprint("dynamic_search_rules")

_ROUTES = "Using the `/dynamic-search-rules` routes"


def _require_feature(request: Request, what: str) -> None:
    features: RuntimeFeatures = request.app.ctx.features
    features.require(
        "dynamicSearchRules",
        f"{what} requires enabling the `dynamic search rules` experimental feature. "
        "See https://github.com/orgs/meilisearch/discussions/884",
    )


def _checked_uid(uid: str) -> str:
    """No rule can have an invalid uid: it is not found (the reference answers 404 too)."""
    if not is_valid_index_uid(uid):
        raise ApiError("dynamic_search_rule_not_found", invalid_index_uid(uid).message)
    return uid


async def _rules(request: Request) -> list[dict[str, Any]]:
    reply = await request.app.ctx.cluster.ask_scheduler("ListDynamicSearchRules", {})
    rules: list[dict[str, Any]] = reply["results"]
    return rules


async def _enqueue(
    request: Request, task_type: str, params: dict[str, Any], details: dict[str, Any]
) -> HTTPResponse:
    task = await request.app.ctx.cluster.register_task(
        task_type, TASK_INDEX_UID, {**params, "details": details}
    )
    return json_response(task, status=202)


@bp.post("/dynamic-search-rules", ctx_action="dynamicSearchRules.get")
async def list_rules(request: Request) -> HTTPResponse:
    query = LIST.validate(json_body(request))
    _require_feature(request, "Calling the `POST /dynamic-search-rules` route")
    offset, limit = query.get("offset", 0), query.get("limit", 20)
    rules = [rule for rule in await _rules(request) if matches_filter(rule, query.get("filter"))]
    # The reference lists the most recently changed first.
    rules.sort(key=lambda rule: parse_rfc3339(rule["lastUpdatedAt"]), reverse=True)
    return json_response(
        {"results": rules[offset : offset + limit], "offset": offset, "limit": limit, "total": len(rules)}
    )


@bp.delete("/dynamic-search-rules", ctx_action="dynamicSearchRules.delete")
async def clear_rules(request: Request) -> HTTPResponse:
    _require_feature(request, _ROUTES)
    return await _enqueue(request, "dsrClear", {}, {"deletedDocuments": None})


@bp.get("/dynamic-search-rules/<rule_uid:str>", ctx_action="dynamicSearchRules.get", unquote=True)
async def get_rule(request: Request, rule_uid: str) -> HTTPResponse:
    uid = _checked_uid(rule_uid)
    _require_feature(request, "Calling the `GET /dynamic-search-rules/{:ruleUid}` route")
    rule = next((rule for rule in await _rules(request) if rule["uid"] == uid), None)
    if rule is None:
        raise rule_not_found(uid)
    return json_response(rule)


@bp.patch("/dynamic-search-rules/<rule_uid:str>", ctx_action="dynamicSearchRules.update", unquote=True)
async def update_rule(request: Request, rule_uid: str) -> HTTPResponse:
    uid = _checked_uid(rule_uid)
    patch = validate_patch(json_body(request))
    _require_feature(request, _ROUTES)
    return await _enqueue(
        request, "dsrUpdate", {"uid": uid, "patch": patch}, {"rule": patch, "updatedRules": None}
    )


@bp.delete("/dynamic-search-rules/<rule_uid:str>", ctx_action="dynamicSearchRules.delete", unquote=True)
async def delete_rule(request: Request, rule_uid: str) -> HTTPResponse:
    uid = _checked_uid(rule_uid)
    _require_feature(request, _ROUTES)
    return await _enqueue(request, "dsrUpdate", {"uid": uid, "patch": None}, {"updatedRules": None})
