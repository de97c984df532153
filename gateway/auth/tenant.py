"""Tenant tokens (core.md §3.8): JWTs signed with an API key's value, carrying search rules.

Only search routes accept them. The token names its parent key (``apiKeyUid``), is verified with
that key's value as the HMAC secret, may expire (``exp``), and restricts which indexes can be
searched and with which extra filter (``searchRules``).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import jwt
import orjson

from common.errors import ApiError
from common.index_patterns import pattern_matches
from common.validation.json_body import depth_error, too_deep
from gateway.auth.keyring import ApiKey, KeyRing, canonical_uid

_ALGORITHMS = ["HS256", "HS384", "HS512"]
# The reference checks the signature and the audience only; `exp` is checked below with its own error.
_OPTIONS = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_iss": False}
_JWT_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.InvalidSignatureError, "InvalidSignature"),
    (jwt.InvalidAlgorithmError, "InvalidAlgorithm"),
    (jwt.InvalidAudienceError, "InvalidAudience"),
)


def invalid_api_key(message: str = "The provided API key is invalid.") -> ApiError:
    return ApiError("invalid_api_key", message)


def rust_list(values: list[str] | tuple[str, ...]) -> str:
    """A list of strings as Rust's ``Debug`` prints it, which the reference's messages embed."""
    return "[" + ", ".join(orjson.dumps(value).decode() for value in values) + "]"


@dataclass(frozen=True)
class SearchRules:
    rules: dict[str, Any]
    """Index pattern -> extra filter (None for no filter); the list form maps every pattern to None."""

    def allows(self, uid: str) -> bool:
        return any(pattern_matches(pattern, uid) for pattern in self.rules)

    def filter_for(self, uid: str) -> Any:
        """The filter of the most specific matching rule: the exact uid, else the longest pattern."""
        matching = [pattern for pattern in self.rules if pattern_matches(pattern, uid)]
        if not matching:
            return None
        best = max(matching, key=lambda pattern: (pattern == uid, len(pattern)))
        return self.rules[best]


@dataclass(frozen=True)
class TenantToken:
    parent: ApiKey
    rules: SearchRules
    expires: int | None
    """``exp`` in Unix seconds."""


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2


def decode_tenant_token(token: str, keys: KeyRing) -> TenantToken | None:
    """The verified token, or None when it is not a tenant token (then it is tried as an API key).

    Raises the contract's 403 for a token that names a key but fails verification.
    """
    payload = _unverified_payload(token)
    uid = payload.get("apiKeyUid") if isinstance(payload, dict) else None
    canonical = canonical_uid(uid) if isinstance(uid, str) else None
    if canonical is None:
        return None
    parent = keys.by_uid(canonical)
    if parent is None:
        raise invalid_api_key()
    try:
        claims = jwt.decode(token, parent.key, algorithms=_ALGORITHMS, options=_OPTIONS)  # type: ignore[arg-type]
    except jwt.PyJWTError as error:
        reason = next((name for kind, name in _JWT_ERRORS if isinstance(error, kind)), "InvalidToken")
        raise invalid_api_key(f"Could not decode tenant token, {reason}.") from None
    # serde reports where it stopped reading: the end of a one-line payload.
    text = _payload_text(token)
    at = f"at line 1 column {len(text)}"
    if too_deep(text.encode(), claims):  # serde's limit; orjson could not encode the rules' filter (500)
        raise _json_error(depth_error(text.encode()))
    if "searchRules" not in claims:
        raise _json_error(f"missing field `searchRules` {at}")
    rules = _search_rules(claims["searchRules"])
    if rules is None:
        raise _json_error(f"data did not match any variant of untagged enum SearchRules {at}")
    expires = claims.get("exp")
    if expires is not None and (isinstance(expires, bool) or not isinstance(expires, int)):
        raise _json_error(f"invalid type: expected an integer `exp` {at}")
    return TenantToken(parent, rules, expires)


def _json_error(detail: str) -> ApiError:
    return invalid_api_key(f"Could not decode tenant token, JSON error: {detail}.")


def _payload_text(token: str) -> str:
    segment = token.split(".")[1]
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)).decode()
    except ValueError:  # not base64 (binascii.Error, non-ASCII characters) or not UTF-8
        return ""


def _unverified_payload(token: str) -> Any:
    try:
        return orjson.loads(_payload_text(token))
    except orjson.JSONDecodeError:
        return None


def _search_rules(value: Any) -> SearchRules | None:
    """The list form (index patterns) or the object form (pattern -> null or ``{"filter": ...}``)."""
    if isinstance(value, list) and all(isinstance(pattern, str) for pattern in value):
        return SearchRules(dict.fromkeys(value))
    if isinstance(value, dict) and all(rule is None or isinstance(rule, dict) for rule in value.values()):
        return SearchRules({pattern: (rule or {}).get("filter") for pattern, rule in value.items()})
    return None
