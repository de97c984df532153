"""The store's compaction (shard/index/compaction.py) and the gate that lets it swap environments."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shard.index.gate import EnvGate
from shard.store import ShardStore


def _add(task: int, *ids: int) -> dict[str, object]:
    documents = [[str(i), {"id": i, "text": f"word{i} " * 50}, n] for n, i in enumerate(ids)]
    return {"op": "addDocuments", "task": task, "index": "m", "mode": "replace", "documents": documents}


def test_compaction_keeps_the_data_records_the_batch_and_shrinks_the_file(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    try:
        for round_ in range(4):
            store.apply_batch(round_, [_add(round_, *range(500))])
        before = store.database_size()
        documents = store.list_documents("m", 0, 1000)
        result = store.apply_batch(9, [{"op": "compactIndex", "index": "m", "task": 12}])
        sizes = result["tasks"]["12"]
        assert sizes["preCompactionSize"] == before > sizes["postCompactionSize"]
        assert store.list_documents("m", 0, 1000) == documents
        assert store.applied_batch(9) == result
        assert store.apply_batch(9, [{"op": "compactIndex", "index": "m", "task": 12}]) == result
        assert not (tmp_path / "compaction").exists()
        store.apply_batch(10, [_add(13, 600)])
        assert store.get_document("m", "600") == {"id": 600, "text": "word600 " * 50}
    finally:
        store.close()


def test_an_unfinished_copy_is_discarded_at_start(tmp_path: Path) -> None:
    ShardStore(tmp_path).close()
    (tmp_path / "compaction").mkdir()
    (tmp_path / "compaction" / "data.mdb").write_bytes(b"partial copy")
    ShardStore(tmp_path).close()
    assert not (tmp_path / "compaction").exists()


def test_the_gate_swaps_only_when_nobody_uses_the_environment(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    gate = EnvGate(store.env)
    events: list[str] = []
    inside, leave = threading.Event(), threading.Event()

    def reader() -> None:
        with gate.using():
            inside.set()
            leave.wait()
            events.append("reader left")

    def swap(old: object) -> object:
        events.append("swapped")
        return old

    thread = threading.Thread(target=reader)
    thread.start()
    inside.wait()
    swapper = threading.Thread(target=gate.replace, args=(swap,))
    swapper.start()
    time.sleep(0.05)
    assert events == []
    leave.set()
    swapper.join(5)
    thread.join(5)
    assert events == ["reader left", "swapped"]
    store.close()
