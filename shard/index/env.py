"""The shard's LMDB environment, its named sub-databases and the key layout the store modules share.

Every per-index key starts with the 4-byte big-endian internal index id, so one index's keys are
contiguous (prefix scans and wipes touch nothing else) and renaming an index never rewrites them.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path
from typing import TypeAlias

import lmdb

from common.data_version import OLDEST_UPGRADABLE

Txn: TypeAlias = "lmdb.Transaction[bytes]"
Database: TypeAlias = "lmdb._Database"

# LMDB reserves address space, not disk: the file grows only as pages are used.
MAP_SIZE = 64 << 30

_U32 = struct.Struct(">I")
_U64 = struct.Struct(">Q")

# LMDB's compiled-in key limit is 511 bytes and external ids may be 511 bytes themselves, so long ids
# are stored as a prefix plus a digest; the two forms never collide because their lengths differ.
_MAX_RAW_EXTERNAL_ID = 506
_HASHED_ID_PREFIX = 475


FORMAT_VERSION = 8
"""Bumped when what is stored changes meaning; 2: token records stored per document (record_store.py);
3: positions and words analysed as the reference does (", " and ". " hard separators, ß kept), so an
older store would answer with stale positions and ``ss`` words; 4: ``ø ł þ ħ`` kept, and combining
marks Latin shares with Thai kept inside their word (an older store holds ``lodz`` and split words);
5: postings values carry the START and WHOLE marks (postings.py), which an older store lacks; 6: each
index's state counts the words of every field (``IndexState.field_tokens``, the ``bm25`` strategy's
average field lengths), which an upgrade counts by re-indexing, and ``_geo``, ``_geojson`` and
``_vectors`` are no longer indexed as words; 7: the prefixes table holds
three-character prefixes and each prefix's word-position levels too (prefixes.py), which a search
reads instead of expanding the words; 8: text no language is detected in is stemmed in English, not in
the shard's most common language so far (``FALLBACK_LANGUAGE``), so the stems table is rebuilt, and
the impacts table holds term frequency and field length classes (impacts.py), which bound the
``bm25`` strategy's scores."""
_FORMAT_KEY = b"format-version"


class StoreFormatError(RuntimeError):
    def __init__(self, path: Path, found: int) -> None:
        hint = (
            ", or start with `--experimental-dumpless-upgrade` to upgrade it in place"
            if OLDEST_UPGRADABLE <= found < FORMAT_VERSION
            else ""
        )
        super().__init__(
            f"The shard data in {path} uses storage format {found}, and this Sift reads format "
            f"{FORMAT_VERSION}. Export the documents with the Sift that wrote them, or re-index into an "
            f"empty data directory{hint}."
        )


class StoreEnv:
    """Opens the environment with durable commits (fsync on every write transaction)."""

    def __init__(self, path: Path, accept_older: bool = False) -> None:
        """``accept_older``: open a store of an upgradable older format, which only the
        ``upgradeStore`` operation (``shard/index/upgrade.py``) may touch before it is current."""
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lmdb = lmdb.open(str(path), map_size=MAP_SIZE, max_dbs=24, sync=True, metasync=True)
        # uid (utf-8) -> internal index id
        self.catalog = self.lmdb.open_db(b"catalog")
        # store-wide counters, e.g. the next internal index id
        self.meta = self.lmdb.open_db(b"meta")
        # batch uid (u64) -> orjson result
        self.batches = self.lmdb.open_db(b"batches")
        # index id + block id -> zstd block of 32 documents (orjson), see blocks.py
        self.documents = self.lmdb.open_db(b"documents")
        # index id + external id -> internal doc id (u32)
        self.external_ids = self.lmdb.open_db(b"external_ids")
        # index id + tag -> live doc id bitmap, stats counters, searchable field ids
        self.index_state = self.lmdb.open_db(b"index_state")
        # index id + word + 0x00 + field id (u16) -> doc ids having the word in that field, and those
        # where it is the field's first word or whole value (postings.py)
        self.words = self.lmdb.open_db(b"words")
        # index id + first 1, 2 or 3 characters of words + 0x00 + field id -> doc ids (short-prefix cache),
        # and their word position levels (shard/index/prefixes.py)
        self.prefixes = self.lmdb.open_db(b"prefixes")
        # index id + stem + 0x00 + field id -> doc ids having a word with that stem (stem != word)
        self.stems = self.lmdb.open_db(b"stems")
        # index id + "w" + word + 0x00 + field id + class -> doc ids holding the word that many times there;
        # index id + 0x00 + field id + class -> doc ids whose field has that many words (impacts.py)
        self.impacts = self.lmdb.open_db(b"impacts")
        # index id + internal doc id (u32) -> the document's token record (each searchable field's words
        # and positions), zstd with the index's trained dictionary, see record_store.py
        self.records = self.lmdb.open_db(b"records")
        # index id + internal doc id (u32) -> the document's sequence (u64), see sequence.py
        self.sequences = self.lmdb.open_db(b"sequences")
        # index id -> the index's settings (orjson); kept when documents are cleared
        self.settings = self.lmdb.open_db(b"settings")
        # index id + facet field id (u16) + kind + value -> doc ids, see shard/index/facet_keys.py
        self.facets = self.lmdb.open_db(b"facets")
        # index id + internal doc id (u32) -> the document's `_geojson` shape (WKB), see shard/index/shapes.py
        self.shapes = self.lmdb.open_db(b"shapes")
        # index id + embedder key + internal doc id (u32) -> the document's embeddings for that embedder,
        # whether they are user-provided and the hash of the text they embed (shard/vector/storage.py)
        self.vectors = self.lmdb.open_db(b"vectors")
        # index id + embedder key -> the embedder's vector space: dimensions, counts, embedded documents,
        # and the store-wide vector generation it was created and last changed at (shard/vector/storage.py)
        self.vector_spaces = self.lmdb.open_db(b"vector_spaces")
        # index id + embedder key + vector generation (u64) -> the doc ids whose vectors that batch changed:
        # what a restart replays over the space's last checkpoint (shard/vector/registry.py)
        self.vector_journal = self.lmdb.open_db(b"vector_journal")
        self.vector_tables = (self.vectors, self.vector_spaces, self.vector_journal)
        # Searchable data: rebuilt from the documents when settings that shape it change.
        self.searchable = (self.words, self.prefixes, self.stems, self.impacts, self.records)
        # Every database keyed by index prefix holding documents or data derived from them: clearing
        # an index's documents clears exactly these.
        self.per_index = (
            self.documents,
            self.external_ids,
            self.index_state,
            self.sequences,
            *self.searchable,
            self.facets,
            self.shapes,
            *self.vector_tables,
        )
        # Every named database, for the environment's used size.
        self.all_tables = (self.catalog, self.meta, self.batches, *self.per_index, self.settings)

        self._check_format(accept_older)

    def _check_format(self, accept_older: bool) -> None:
        """Refuse a data directory laid out by an older Sift instead of misreading it."""
        with self.lmdb.begin(write=True) as txn:
            stored = txn.get(_FORMAT_KEY, db=self.meta)
            if stored is None:
                if txn.stat(self.catalog)["entries"]:
                    raise StoreFormatError(self.path, 1)
                txn.put(_FORMAT_KEY, encode_u32(FORMAT_VERSION), db=self.meta)
                return
            found = decode_u32(stored)
            if found != FORMAT_VERSION and not (accept_older and OLDEST_UPGRADABLE <= found < FORMAT_VERSION):
                raise StoreFormatError(self.path, found)

    def stored_format(self, txn: Txn) -> int:
        stored = txn.get(_FORMAT_KEY, db=self.meta)
        assert stored is not None, "written when the store was opened"
        return decode_u32(stored)

    def record_format(self, txn: Txn) -> None:
        """The store is now in the current format (the upgrade's last write, in its transaction)."""
        txn.put(_FORMAT_KEY, encode_u32(FORMAT_VERSION), db=self.meta)

    def close(self) -> None:
        self.lmdb.close()


def encode_u32(value: int) -> bytes:
    return _U32.pack(value)


def decode_u32(data: bytes) -> int:
    value: int = _U32.unpack(data)[0]
    return value


def encode_u64(value: int) -> bytes:
    return _U64.pack(value)


def decode_u64(data: bytes) -> int:
    value: int = _U64.unpack(data)[0]
    return value


def index_prefix(index_id: int) -> bytes:
    return _U32.pack(index_id)


def external_key(index_id: int, external_id: str) -> bytes:
    raw = external_id.encode()
    if len(raw) > _MAX_RAW_EXTERNAL_ID:
        raw = raw[:_HASHED_ID_PREFIX] + hashlib.sha256(raw).digest()
    return _U32.pack(index_id) + raw


def batch_key(batch_uid: int) -> bytes:
    return encode_u64(batch_uid)
