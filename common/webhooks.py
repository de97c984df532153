"""Task webhooks (core.md §3.14): the stored record, its public view, and the rules the reference
checks on them (limits, URL, header names and values, UUID paths) with its messages.

Shared by the gateway (path UUIDs, views) and the scheduler (which stores webhooks and checks a
create or update against the stored ones, since limits and header merges depend on them).
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from typing import Any

from common.errors import ApiError
from common.settings import mask_secret

NIL_UUID = "00000000-0000-0000-0000-000000000000"
"""The launch-option webhook (``--task-webhook-url``), listed first and never editable."""
MAX_WEBHOOKS = 20
MAX_HEADERS = 200
SIGNING_SECRET = "signingSecret"
"""Sift's addition to the webhook object: the key of the ``X-Sift-Signature`` HMAC, never shown."""

_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_HEADER_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def launch_webhook(url: str, authorization: str | None, secret: str | None) -> dict[str, Any]:
    """The record of the launch-option webhook: its headers are the authorization header, if given."""
    record: dict[str, Any] = {"uuid": NIL_UUID, "url": url, "headers": {}}
    if authorization is not None:
        record["headers"]["Authorization"] = authorization
    if secret is not None:
        record[SIGNING_SECRET] = secret
    return record


def public_webhook(record: dict[str, Any]) -> dict[str, Any]:
    """The API's webhook object: headers sorted by name (bytewise, as the reference's map), every
    ``Authorization`` value masked after a ``Bearer `` prefix; ``signingSecret`` only says it is set."""
    headers = {}
    for name in sorted(record["headers"]):
        value = record["headers"][name]
        if name.lower() == "authorization":
            prefix = "Bearer " if value.startswith("Bearer ") else ""
            value = prefix + mask_secret(value[len(prefix) :])
        headers[name] = value
    view = {"uuid": record["uuid"], "isEditable": record["uuid"] != NIL_UUID, "url": record["url"]}
    view["headers"] = headers
    if record.get(SIGNING_SECRET) is not None:
        view[SIGNING_SECRET] = mask_secret(record[SIGNING_SECRET])
    return view


def missing_url(webhook_uuid: str) -> ApiError:
    return ApiError("invalid_webhook_url", f"The URL for the webhook `{webhook_uuid}` is missing.")


def too_many_webhooks() -> ApiError:
    return ApiError(
        "invalid_webhooks",
        f"Defining too many webhooks would crush the server. Please limit the number of webhooks to "
        f"{MAX_WEBHOOKS}. You may use a third-party proxy server to dispatch events to more than "
        f"{MAX_WEBHOOKS} endpoints.",
    )


def webhook_not_found(webhook_uuid: str) -> ApiError:
    return ApiError("webhook_not_found", f"Webhook `{webhook_uuid}` not found.")


def immutable_webhook(webhook_uuid: str) -> ApiError:
    return ApiError(
        "immutable_webhook",
        f"Webhook `{webhook_uuid}` is immutable. The webhook defined from the command line cannot be "
        "modified using the API.",
    )


def check_webhook(record: dict[str, Any]) -> None:
    """A webhook about to be stored: its URL is set, its headers are valid and few enough, its URL
    parses; in that order, as the reference reports them."""
    if not record.get("url"):
        raise missing_url(record["uuid"])
    for name, value in record["headers"].items():
        if not _HEADER_NAME.fullmatch(name):
            raise ApiError(
                "invalid_webhook_headers", f"Invalid header name `{name}`: invalid HTTP header name"
            )
        if _BAD_HEADER_VALUE.search(value):
            raise ApiError(
                "invalid_webhook_headers", f"Invalid header value `{name}`: failed to parse header value"
            )
    if len(record["headers"]) > MAX_HEADERS:
        raise ApiError(
            "invalid_webhook_headers",
            f"Too many headers for the webhook `{record['uuid']}`. Please limit the number of headers to "
            f"{MAX_HEADERS}. Hint: To remove an already defined header set its value to `null`",
        )
    problem = url_problem(record["url"])
    if problem is not None:
        raise ApiError("invalid_webhook_url", f"Invalid URL `{record['url']}`: {problem}")


# URLs: the WHATWG rules the reference's parser applies, as far as they refuse a URL; a URL is kept as
# given. Only http(s) URLs are ever called (common/outbound.py); others are accepted, as there.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SPECIAL = frozenset({"http", "https", "ws", "wss", "ftp", "file"})
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


def url_problem(url: str) -> str | None:
    """Why a URL does not parse, in the reference's words, or None."""
    text = url.strip("".join(chr(c) for c in range(0x21)))
    scheme = _SCHEME.match(text)
    if scheme is None:
        return "relative URL without a base"
    name = scheme.group()[:-1].lower()
    if name not in _SPECIAL or name == "file":
        return None
    rest = text[scheme.end() :].lstrip("/\\")
    authority = re.split(r"[/\\?#]", rest, maxsplit=1)[0].rpartition("@")[2]
    if authority.startswith("["):
        end = authority.find("]")
        try:
            ipaddress.IPv6Address(authority[1:end] if end > 0 else "")
        except ValueError:
            return "invalid IPv6 address"
        return _port_problem(authority[end + 1 :])
    host, colon, port = authority.partition(":")
    if not host:
        return "empty host"
    if _FORBIDDEN_HOST.search(host):
        return "invalid international domain name"
    labels = host.removesuffix(".").split(".")
    if _IPV4_PART.fullmatch(labels[-1]) and not _is_ipv4(labels):
        return "invalid IPv4 address"
    return _port_problem(colon + port)


def _port_problem(port: str) -> str | None:
    """``port``: what follows the host, ``:`` included (an empty port is allowed)."""
    if port and not (port[0] == ":" and (port[1:].isdigit() or port == ":")):
        return "invalid port number"
    if port[1:] and int(port[1:]) > 65535:
        return "invalid port number"
    return None


def _is_ipv4(labels: list[str]) -> bool:
    """WHATWG IPv4 parsing: 1 to 4 decimal, octal or hex parts, the last filling the remaining bytes."""
    if len(labels) > 4 or not all(_IPV4_PART.fullmatch(label) for label in labels):
        return False
    numbers = []
    for label in labels:
        if label[:2].lower() == "0x":
            numbers.append(int(label[2:] or "0", 16))
        elif len(label) > 1 and label.startswith("0"):
            if not all(c in "01234567" for c in label):
                return False
            numbers.append(int(label, 8))
        else:
            numbers.append(int(label))
    if any(number > 255 for number in numbers[:-1]):
        return False
    return numbers[-1] < 256 ** (5 - len(numbers))


# Path UUIDs: the reference's parser accepts simple, hyphenated, braced and URN forms; its errors.
_GROUPS = (8, 4, 4, 4, 12)


def parse_webhook_uuid(text: str) -> str:
    """The canonical (lower-case, hyphenated) UUID ``text`` names, or ``invalid_webhook_uuid``."""
    inner = text
    if len(text) == 38 and text[0] == "{" and text[-1] == "}":
        inner = text[1:-1]
    elif len(text) == 45 and text.startswith("urn:uuid:"):
        inner = text[9:]
    if len(inner) in (32, 36):
        hex_only = inner.replace("-", "") if len(inner) == 36 else inner
        shape_ok = len(inner) == 32 or [len(g) for g in inner.split("-")] == list(_GROUPS)
        if shape_ok and len(hex_only) == 32 and all(c in "0123456789abcdefABCDEF" for c in hex_only):
            return str(uuid.UUID(hex_only))
    raise ApiError("invalid_webhook_uuid", f"Invalid UUID: {_uuid_problem(text)}")


def _uuid_problem(text: str) -> str:
    offset, simple, inner = 0, True, text
    braced = len(text) >= 2 and text[0] == "{" and text[-1] == "}"
    if len(text) == 38 and braced:
        simple, inner = False, text[1:-1]
    elif len(text) == 45 and text.startswith("urn:uuid:"):
        simple, inner = False, text[9:]
    elif len(text) not in (32, 36) and braced:
        offset, simple, inner = 1, False, text[1:-1]
    elif len(text) not in (32, 36) and text.startswith("urn:uuid:"):
        offset, simple, inner = 9, False, text[9:]
    position = 0
    for char in inner:
        if char != "-" and char not in "0123456789abcdefABCDEF":
            return f"invalid character: found `{char}` at {position + offset}"
        position += len(char.encode())
    groups = inner.split("-")
    if len(groups) == 1 and simple:
        return f"invalid length: found {len(text)}"
    if len(groups) != 5:
        return f"invalid group count: expected 5, found {len(groups)}"
    for index, (group, expected) in enumerate(zip(groups, _GROUPS, strict=True)):
        if len(group) != expected:
            return f"invalid group length in group {index}: expected {expected}, found {len(group)}"
    return f"invalid length: found {len(text)}"
