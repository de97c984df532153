"""The ``/network`` object (core.md §3.15, flag ``network``): PATCH validation and how a PATCH changes
the stored topology.

Sift is one host, so the topology is only recorded and shown: nothing is sent to remotes. As in the
reference's community build, a leader cannot be set (451 ``requires_enterprise_edition``). The
gateway validates the body; the scheduler applies it to the stored record (``merge_network``), which
raises the errors that depend on what is stored (a new remote without a url).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from common.errors import ApiError
from common.uuid7 import uuid7
from common.validation import Kind, Schema, Spec

NIL_VERSION = "00000000-0000-0000-0000-000000000000"
EMPTY: dict[str, Any] = {"self": None, "remotes": {}, "shards": {}, "leader": None, "version": NIL_VERSION}

_REMOTE = Schema(
    {
        "url": Spec(Kind.STRING, nullable=True, code="invalid_network_url"),
        "searchApiKey": Spec(Kind.STRING, nullable=True, code="invalid_network_search_api_key"),
        "writeApiKey": Spec(Kind.STRING, nullable=True, code="invalid_network_write_api_key"),
    }
)
_REMOTE_LIST = Spec(Kind.ARRAY, nullable=True, code="invalid_network_remotes", items=Spec(Kind.STRING))
_SHARD = Schema({"remotes": _REMOTE_LIST, "addRemotes": _REMOTE_LIST, "removeRemotes": _REMOTE_LIST})
_SHARDS = Spec(
    Kind.OBJECT,
    nullable=True,
    code="invalid_network_shards",
    values=Spec(Kind.OBJECT, nullable=True, schema=_SHARD),
)
PATCH = Schema(
    {
        "remotes": Spec(
            Kind.OBJECT,
            nullable=True,
            code="invalid_network_remotes",
            values=Spec(Kind.OBJECT, nullable=True, schema=_REMOTE),
        ),
        "shards": _SHARDS,
        "previousShards": _SHARDS,
        "self": Spec(Kind.STRING, nullable=True, code="invalid_network_self"),
        "leader": Spec(Kind.STRING, nullable=True, code="invalid_network_leader"),
        "previousRemotes": Spec(Kind.OBJECT, nullable=True, code="invalid_network_remotes"),
    }
)


def check_patch(patch: dict[str, Any]) -> None:
    """What the community build refuses in a well-formed PATCH (checked after the feature flag)."""
    if patch.get("previousRemotes") is not None:
        raise ApiError(
            "unexpected_network_previous_remotes",
            "Unexpected `previousRemotes` in network call.\n"
            "  - Note: `previousRemote` is reserved for internal use.",
        )
    if patch.get("leader") is not None:
        raise ApiError(
            "requires_enterprise_edition",
            "Meilisearch Enterprise Edition is required to set `network.leader`",
        )
    for name, remote in (patch.get("remotes") or {}).items():
        url = (remote or {}).get("url")
        if url is not None and not urlsplit(url).scheme:
            raise ApiError(
                "invalid_network_url", f"Invalid `.remotes.{name}.url` (`{url}`): relative URL without a base"
            )


def merge_network(stored: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """The record after a validated PATCH: named remotes and shards change, ``null`` removes one, a
    removed remote leaves every shard; each PATCH gets a new version."""
    network = {**EMPTY, **stored}
    remotes = {name: dict(remote) for name, remote in network["remotes"].items()}
    for name, change in (patch.get("remotes") or {}).items():
        if change is None:
            remotes.pop(name, None)
            continue
        if "url" in change and change["url"] is None:
            raise ApiError("invalid_network_url", f"Field `.remotes.{name}.url` cannot be set to `null`")
        current = remotes.get(name)
        if current is None and change.get("url") is None:
            raise ApiError("missing_network_url", f"Missing field `.remotes.{name}.url`")
        remotes[name] = {"url": None, "searchApiKey": None, "writeApiKey": None, **(current or {}), **change}
    shards = {name: list(shard["remotes"]) for name, shard in network["shards"].items()}
    for name, change in (patch.get("shards") or {}).items():
        if change is None:
            shards.pop(name, None)
            continue
        owners = list(change["remotes"]) if change.get("remotes") is not None else shards.get(name, [])
        owners += [remote for remote in change.get("addRemotes") or [] if remote not in owners]
        removed = set(change.get("removeRemotes") or [])
        shards[name] = [remote for remote in owners if remote not in removed]
    gone = set(network["remotes"]) - set(remotes)
    kept = {name: [r for r in owners if r not in gone] for name, owners in shards.items()}
    # A shard nobody owns is not listed (the reference drops `{"s": {}}` the same way).
    result_shards = {name: {"remotes": owners} for name, owners in kept.items() if owners}
    self_name = patch["self"] if "self" in patch else network["self"]
    return {
        "self": self_name,
        "remotes": remotes,
        "shards": result_shards,
        "leader": None,
        "version": uuid7(),
    }


def public_network(record: dict[str, Any]) -> dict[str, Any]:
    """The GET shape: every remote with its ``status`` (always ``available``: nothing is contacted)."""
    network = {**EMPTY, **record}
    remotes = {name: {**remote, "status": "available"} for name, remote in network["remotes"].items()}
    return {**network, "remotes": remotes}
