"""Every field path the index's documents ever had: what ``POST /indexes/{uid}/fields`` lists.

As in the reference engine, the set only grows while the index lives: deleting, replacing or
clearing documents keeps their fields listed; deleting the index forgets them. Paths are dotted
(``author.name``), objects inside arrays included, and an object also lists its own name.
``_geojson`` and ``_vectors`` are listed whole (their inner keys are values, not fields).

Kept sorted under the index's ``fields`` tag in ``index_state``, written only by batches that add a
path, so reads never scan documents.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from shard.index.blocks import iter_values
from shard.index.codec import DocumentCodec
from shard.index.env import StoreEnv, Txn, index_prefix

_TAG: Final = b"fields"
_OPAQUE: Final = frozenset({"_geojson", "_vectors"})


class KnownFields:
    """One index's field paths during a batch; ``dirty`` when they must be written back."""

    def __init__(self, paths: set[str], dirty: bool = False) -> None:
        self.paths = paths
        self.dirty = dirty

    def add(self, document: dict[str, Any]) -> None:
        before = len(self.paths)
        for name, value in document.items():
            self.paths.add(name)
            if name not in _OPAQUE:
                _nested(self.paths, name, value)
        if len(self.paths) != before:
            self.dirty = True


def _nested(paths: set[str], path: str, value: Any) -> None:
    """The paths below ``path``; array elements are walked with the array's own path."""
    if isinstance(value, dict):
        for name, item in value.items():
            child = f"{path}.{name}"
            paths.add(child)
            _nested(paths, child, item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                _nested(paths, path, item)


def load_fields(env: StoreEnv, codec: DocumentCodec, txn: Txn, index_id: int) -> KnownFields:
    stored = txn.get(index_prefix(index_id) + _TAG, db=env.index_state)
    if stored is not None:
        return KnownFields(set(orjson.loads(stored)))
    # Written by a Sift without this record (or an index without documents): learn the paths from
    # the stored documents; the next batch writing to the index keeps them.
    known = KnownFields(set())
    for _, value in iter_values(txn, env.documents, codec, index_id):
        known.add(orjson.loads(value))
    return known


def save_fields(env: StoreEnv, txn: Txn, index_id: int, known: KnownFields) -> None:
    if known.dirty:
        txn.put(index_prefix(index_id) + _TAG, orjson.dumps(sorted(known.paths)), db=env.index_state)
        known.dirty = False
