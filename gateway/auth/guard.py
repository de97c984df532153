"""Authenticating a request and checking its route's action (core.md §3.7, §3.8).

``Guard.authorize`` is the whole per-request cost: a header split, a constant-time comparison with
the master key, a dict lookup of the key, set membership of the action and of the path's index.
"""

from __future__ import annotations

import hmac
import time

from common.errors import ApiError
from gateway.auth.access import FULL_ACCESS, Access, KeyAccess, TenantAccess
from gateway.auth.actions import GLOBAL_ONLY, KEY_ACTIONS, PUBLIC
from gateway.auth.keyring import ApiKey, KeyRing
from gateway.auth.tenant import TenantToken, decode_tenant_token, invalid_api_key, looks_like_jwt

_BEARER = "Bearer"
_TENANT_ACTIONS = frozenset({"search", "chatCompletions"})
_TOKEN_CACHE_SIZE = 10_000


def missing_authorization_header() -> ApiError:
    return ApiError(
        "missing_authorization_header",
        "The Authorization header is missing. It must use the bearer authorization method.",
    )


def missing_master_key() -> ApiError:
    return ApiError(
        "missing_master_key",
        "Meilisearch is running without a master key. To access this API endpoint, you must have set a "
        "master key at launch.",
    )


def bearer_token(header: str | None) -> str | None:
    """The token of ``Bearer <token>`` (case-sensitive scheme); None for no or another scheme."""
    if header is None or not header.startswith(_BEARER):
        return None
    rest = header[len(_BEARER) :]
    if rest and not rest.startswith(" "):
        return None
    return rest.strip()


class Guard:
    def __init__(self, master_key: str | None, keys: KeyRing) -> None:
        self.master_key = master_key
        self.keys = keys
        self._tokens: dict[str, TenantToken] = {}
        """Verified tenant tokens: a front end sends the same token with every search, and verifying
        a JWT costs far more than the rest of the check. Expiry and indexes are still checked each time."""

    def authorize(self, action: str, index_uid: str | None, header: str | None) -> Access:
        """What the request may do, or the contract's 401/403 error.

        ``index_uid`` is the index named in the route's path, if any.
        """
        if action == PUBLIC:
            return FULL_ACCESS
        if self.master_key is None:
            return self._without_master_key(action, header)
        token = bearer_token(header)
        if token is None:
            raise missing_authorization_header()
        # Header bytes that are not UTF-8 arrive as surrogates: compare the bytes sent (encode() raised: 500).
        if hmac.compare_digest(token.encode("utf-8", "surrogateescape"), self.master_key.encode()):
            return FULL_ACCESS
        access: KeyAccess | None = None
        if action in _TENANT_ACTIONS and looks_like_jwt(token):
            access = self._tenant(token, index_uid)
        if access is None:
            key = self.keys.by_key(token)
            if key is None:
                raise invalid_api_key()
            access = KeyAccess(key)
        _check_key(access.key, action)
        if index_uid is not None:
            access.require_index(index_uid)
        return access

    def _without_master_key(self, action: str, header: str | None) -> Access:
        """Everything is open, except that ``/keys`` needs a master key and a header, if sent, is read."""
        if action in KEY_ACTIONS:
            raise missing_master_key()
        if header is not None:
            token = bearer_token(header)
            if token is None:
                raise missing_authorization_header()
            if not token:
                raise invalid_api_key()
        return FULL_ACCESS

    def _tenant(self, token: str, index_uid: str | None) -> TenantAccess | None:
        """A verified tenant token, its expiry then its own rules checked before its parent key (the
        reference's order); None when the token is not a tenant token."""
        tenant = self._tokens.get(token)
        # A changed or deleted parent key is another object in the ring (or none): verify again.
        if tenant is None or self.keys.by_uid(tenant.parent.uid) is not tenant.parent:
            tenant = decode_tenant_token(token, self.keys)
            if tenant is None:
                return None
            if len(self._tokens) >= _TOKEN_CACHE_SIZE:
                del self._tokens[next(iter(self._tokens))]
            self._tokens[token] = tenant
        if tenant.expires is not None and (now := int(time.time())) > tenant.expires:
            raise invalid_api_key(
                f"Tenant token expired. Was valid up to `{tenant.expires}` and we're now `{now}`."
            )
        access = TenantAccess(tenant)
        if index_uid is not None and not tenant.rules.allows(index_uid):
            access.require_index(index_uid)
        return access


def _check_key(key: ApiKey, action: str) -> None:
    """Unexpired, granting the action; a global-only action needs a key for every index."""
    if key.expired(time.time_ns()) or action not in key.actions:
        raise invalid_api_key()
    if action in GLOBAL_ONLY and not key.indexes.all:
        raise invalid_api_key()
