"""Each document's sequence: its place in one insertion order that every shard count agrees on.

``sequence = task uid * 2**32 + position of the document in that task's payload``, fixed when the
document is created; a replacement or update keeps it, as it keeps its internal id. Internal ids are
allocated in increasing sequence order (``IndexState.allocate``), so a shard reads its documents in id
order and the gateway merges shards by sequence: ties and listings no longer depend on how many shards
numbered the documents.
"""

from __future__ import annotations

from shard.index.env import StoreEnv, Txn, decode_u64, encode_u32, encode_u64, index_prefix
from shard.index.postings import Appender

_POSITION_BITS = 32


def sequence_of(task_uid: int, position: int) -> int:
    """The sequence of the document at ``position`` in the payload of task ``task_uid``."""
    return (task_uid << _POSITION_BITS) | position


def sequence_key(index_id: int, doc_id: int) -> bytes:
    return index_prefix(index_id) + encode_u32(doc_id)


class SequenceWriter:
    """Records the sequences of created documents; their ids are new maxima, so writes mostly append."""

    def __init__(self, env: StoreEnv, txn: Txn) -> None:
        self._appender = Appender(txn, env.sequences)

    def put(self, index_id: int, doc_id: int, sequence: int) -> None:
        self._appender.put(sequence_key(index_id, doc_id), encode_u64(sequence))


def delete_sequence(env: StoreEnv, txn: Txn, index_id: int, doc_id: int) -> None:
    txn.delete(sequence_key(index_id, doc_id), db=env.sequences)


def read_sequences(env: StoreEnv, txn: Txn, index_id: int, doc_ids: list[int]) -> list[int]:
    """The sequences of live documents, in the order of ``doc_ids``."""
    sequences = []
    for doc_id in doc_ids:
        stored = txn.get(sequence_key(index_id, doc_id), db=env.sequences)
        if stored is None:
            raise LookupError(f"internal document {doc_id} of index {index_id} has no sequence")
        sequences.append(decode_u64(stored))
    return sequences
