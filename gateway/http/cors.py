"""Permissive CORS, as the contract specifies for every route."""

from __future__ import annotations

from sanic import HTTPResponse, Request

from gateway.http.responses import empty_response

ALLOW_ORIGIN = {"Access-Control-Allow-Origin": "*"}


async def preflight(request: Request) -> HTTPResponse:
    requested_headers = request.headers.get("access-control-request-headers", "*")
    return empty_response(
        status=200,
        headers={
            **ALLOW_ORIGIN,
            "Access-Control-Allow-Methods": "GET, POST, PUT, PATCH, DELETE, OPTIONS",
            "Access-Control-Allow-Headers": requested_headers,
            "Access-Control-Max-Age": "86400",
        },
    )


def add_cors_headers(_request: Request, response: HTTPResponse) -> None:
    response.headers.update(ALLOW_ORIGIN)
