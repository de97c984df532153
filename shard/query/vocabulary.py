"""Vocabulary lookups on the words table: prefix expansion (typo derivations are in ``typos.py``, split
words in ``splits.py``). The vocabulary is never scanned linearly: every lookup is a key-range read."""

from __future__ import annotations

from shard.index.env import Database, Txn, index_prefix

PREFIX_LIMIT = 1000
_SEPARATOR = b"\x00"
# Keys are index id (4 bytes) + word + 0x00 + field id (2 bytes); LMDB keys are at most 511 bytes.
ID_BYTES = 4
SUFFIX_BYTES = 3
MAX_WORD_CHARS = 511
"""A bound on a stored word's characters, given the key size limit."""


def prefix_words(
    txn: Txn, db: Database, index_id: int, prefix: str, limit: int | None = PREFIX_LIMIT
) -> list[str]:
    """Vocabulary words starting with ``prefix`` (itself included), in key order, at most ``limit``
    (None: all).

    Steps through the per-field duplicates rather than seeking past them: most words are in one or
    two fields, and a step costs about half a seek.
    """
    start = index_prefix(index_id) + prefix.encode()
    cursor = txn.cursor(db)
    words: list[str] = []
    if (limit is not None and limit <= 0) or not cursor.set_range(start):
        return words
    previous = None
    for key in cursor.iternext(keys=True, values=False):
        if not key.startswith(start):
            break
        term = key[ID_BYTES:-SUFFIX_BYTES]
        if term != previous:
            if len(words) == limit:
                break
            words.append(term.decode())
            previous = term
    return words


def word_exists(txn: Txn, db: Database, index_id: int, word: str) -> bool:
    start = index_prefix(index_id) + word.encode() + _SEPARATOR
    cursor = txn.cursor(db)
    return cursor.set_range(start) and cursor.key().startswith(start)
