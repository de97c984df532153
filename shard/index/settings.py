"""An index's settings as this shard last received them, next to the data they shape.

The scheduler owns settings; every shard keeps the effective settings it indexed with, in the same
transaction as the data, so indexing and search on the shard never need to ask the scheduler and a
shard can always tell what its postings were built from. Absent means defaults.
"""

from __future__ import annotations

from typing import Any

import orjson

from shard.analysis import AnalysisConfig
from shard.index.env import StoreEnv, Txn, index_prefix

Settings = dict[str, Any]


def load_settings(env: StoreEnv, txn: Txn, index_id: int) -> Settings:
    stored = txn.get(index_prefix(index_id), db=env.settings)
    if stored is None:
        return {}
    settings: Settings = orjson.loads(stored)
    return settings


def save_settings(env: StoreEnv, txn: Txn, index_id: int, settings: Settings) -> None:
    txn.put(index_prefix(index_id), orjson.dumps(settings), db=env.settings)


def delete_settings(env: StoreEnv, txn: Txn, index_id: int) -> None:
    txn.delete(index_prefix(index_id), db=env.settings)


def searchable_attributes(settings: Settings) -> tuple[str, ...] | None:
    """The searchable attribute list in order, or None for every field (``["*"]``)."""
    return _attribute_list(settings, "searchableAttributes")


def displayed_attributes(settings: Settings) -> tuple[str, ...] | None:
    return _attribute_list(settings, "displayedAttributes")


def _attribute_list(settings: Settings, key: str) -> tuple[str, ...] | None:
    attributes = settings.get(key) or ["*"]
    return None if "*" in attributes else tuple(attributes)


def needs_rebuild(previous: Settings, new: Settings) -> bool:
    """Whether postings and token records built under ``previous`` differ from what ``new`` gives.

    Only analysis (stop words, separators, dictionary, localized attributes) and the set of searchable
    fields shape them. Attribute order, proximity precision, prefix search and typo settings are
    applied at query time from the stored positions, postings per field and prefix tables, so
    changing them re-indexes nothing.
    """
    before, after = AnalysisConfig.from_settings(previous), AnalysisConfig.from_settings(new)
    if before.analysis_key() != after.analysis_key():
        return True
    return _searchable_set(previous) != _searchable_set(new)


def _searchable_set(settings: Settings) -> frozenset[str] | None:
    attributes = searchable_attributes(settings)
    return None if attributes is None else frozenset(attributes)
