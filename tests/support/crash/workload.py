"""The random workload of the crash cycles: the writes a cycle sends and the effect each one has.

Planning is pure (a seeded ``random.Random`` in, a list of ``Write`` out) and ``apply_write`` is the
model a succeeded task is replayed into, so both live apart from anything that talks to the cluster;
the constants here (the index and its id space) are shared by the HTTP helpers, the checks and
the runner.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

INDEX = "crash"
ID_SPACE = 200
_WORDS = ("red", "green", "blue", "amber", "violet", "teal", "ochre", "ivory")
_INVALID_ID = "not a valid id!"

Document = dict[str, Any]


@dataclass(frozen=True)
class Write:
    """One HTTP write as sent; ``invalid`` ones carry a bad document id, so their task must fail."""

    rid: str
    kind: str  # replace | update | delete | delete_batch | clear
    documents: tuple[Document, ...] = ()
    ids: tuple[int, ...] = ()
    invalid: bool = False


def plan_writes(rng: random.Random, cycle: int, count: int) -> list[Write]:
    """A random mix of writes over ids 0..ID_SPACE-1, so updates and deletes hit existing documents."""
    writes = []
    for n in range(count):
        rid = f"c{cycle}w{n}"
        roll = rng.random()
        if roll < 0.36:
            writes.append(Write(rid, "replace", _documents(rng, cycle, merge=False)))
        elif roll < 0.62:
            writes.append(Write(rid, "update", _documents(rng, cycle, merge=True)))
        elif roll < 0.77:
            writes.append(Write(rid, "delete", ids=(rng.randrange(ID_SPACE),)))
        elif roll < 0.92:
            ids = tuple(rng.randrange(ID_SPACE) for _ in range(rng.randint(1, 12)))
            writes.append(Write(rid, "delete_batch", ids=ids))
        elif roll < 0.94:
            writes.append(Write(rid, "clear"))
        else:
            kind = rng.choice(("replace", "update"))
            documents = list(_documents(rng, cycle, merge=kind == "update"))
            documents.insert(rng.randrange(len(documents) + 1), {"id": _INVALID_ID, "v": 0})
            writes.append(Write(rid, kind, tuple(documents), invalid=True))
    return writes


def _documents(rng: random.Random, cycle: int, merge: bool) -> tuple[Document, ...]:
    count = rng.randint(150, 400) if rng.random() < 0.08 else rng.randint(1, 8)
    documents = []
    for _ in range(count):
        doc: Document = {"id": rng.randrange(ID_SPACE)}
        if merge:
            for name in rng.sample(("v", "b", "o"), rng.randint(1, 2)):
                doc[name] = _value(rng, name)
        else:
            doc.update({"v": _value(rng, "v"), "a": rng.choice(_WORDS), "c": cycle})
            if rng.random() < 0.3:
                doc["o"] = _value(rng, "o")
        documents.append(doc)
    return tuple(documents)


def _value(rng: random.Random, name: str) -> Any:
    if name == "o":
        return {"x": rng.randrange(100), "tags": rng.sample(_WORDS, 2)}
    return rng.randrange(10_000)


def apply_write(model: dict[str, Document], write: Write) -> None:
    """The effect of a succeeded task: replace sets, update merges top-level fields or inserts."""
    if write.kind == "replace":
        for doc in write.documents:
            model[str(doc["id"])] = dict(doc)
    elif write.kind == "update":
        for doc in write.documents:
            key = str(doc["id"])
            model[key] = {**model.get(key, {}), **doc}
    elif write.kind in ("delete", "delete_batch"):
        for doc_id in write.ids:
            model.pop(str(doc_id), None)
    else:
        model.clear()
