"""Public index uid -> internal index id.

Data is keyed by the internal id, which never changes and is never reused, so renames and swaps
rewrite only these entries, and a re-created index cannot meet stale keys of an old one.
"""

from __future__ import annotations

from shard.index.env import StoreEnv, Txn, decode_u32, encode_u32

_NEXT_INDEX_ID = b"next_index_id"


def lookup(env: StoreEnv, txn: Txn, uid: str) -> int | None:
    packed = txn.get(uid.encode(), db=env.catalog)
    return None if packed is None else decode_u32(packed)


def ensure(env: StoreEnv, txn: Txn, uid: str) -> int:
    """The index's internal id, registering the index first if it is new."""
    existing = lookup(env, txn, uid)
    if existing is not None:
        return existing
    packed = txn.get(_NEXT_INDEX_ID, db=env.meta)
    index_id = 0 if packed is None else decode_u32(packed)
    txn.put(_NEXT_INDEX_ID, encode_u32(index_id + 1), db=env.meta)
    txn.put(uid.encode(), encode_u32(index_id), db=env.catalog)
    return index_id


def remove(env: StoreEnv, txn: Txn, uid: str) -> int | None:
    packed = txn.pop(uid.encode(), db=env.catalog)
    return None if packed is None else decode_u32(packed)


def rename(env: StoreEnv, txn: Txn, old: str, new: str) -> None:
    """A no-op when ``old`` is absent: this shard may never have received a document for it."""
    if old == new:
        return
    if lookup(env, txn, new) is not None:
        raise ValueError(f"cannot rename index `{old}` to `{new}`: `{new}` already exists")
    index_id = remove(env, txn, old)
    if index_id is not None:
        txn.put(new.encode(), encode_u32(index_id), db=env.catalog)


def swap(env: StoreEnv, txn: Txn, a: str, b: str) -> None:
    """Exchange the two entries; an absent one is swapped like any other, so the present one moves."""
    id_a, id_b = remove(env, txn, a), remove(env, txn, b)
    if id_b is not None:
        txn.put(a.encode(), encode_u32(id_b), db=env.catalog)
    if id_a is not None:
        txn.put(b.encode(), encode_u32(id_a), db=env.catalog)


def uids_by_id(env: StoreEnv, txn: Txn) -> dict[int, str]:
    return {decode_u32(packed): uid.decode() for uid, packed in txn.cursor(env.catalog)}
