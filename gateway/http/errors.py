"""Every error leaves the gateway as the contract's error object, or as an empty 404/405."""

from __future__ import annotations

from sanic import HTTPResponse, Request
from sanic.exceptions import MethodNotAllowed, NotFound, PayloadTooLarge

from common.errors import ApiError
from common.logging import get_logger
from gateway.http.body import payload_too_large
from gateway.http.cors import ALLOW_ORIGIN
from gateway.http.responses import empty_response, json_response

log = get_logger(__name__)


def error_response(error: ApiError, headers: dict[str, str] | None = None) -> HTTPResponse:
    all_headers = {**ALLOW_ORIGIN, **(headers or {})}
    if error.status == 503:
        all_headers["Retry-After"] = "10"
    return json_response(error.to_dict(), status=error.status, headers=all_headers)


def handle_exception(request: Request, exception: Exception) -> HTTPResponse:
    if isinstance(exception, ApiError):
        return error_response(exception)
    if isinstance(exception, NotFound):
        return empty_response(status=404, headers=ALLOW_ORIGIN)
    if isinstance(exception, MethodNotAllowed):
        return empty_response(status=405, headers=ALLOW_ORIGIN)
    if isinstance(exception, PayloadTooLarge):
        return error_response(payload_too_large(request.app.ctx.config.http_payload_size_limit))
    log.error("unhandled error", path=request.path, method=request.method, exc_info=exception)
    return error_response(ApiError("internal", f"An internal error occurred: {exception}."))
