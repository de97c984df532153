"""Load the shared datasets into a running cluster, for scenarios that search real documents.

Documents are streamed from disk and posted in chunks so the 171k cities never sit in memory at
once (the load generator shares the machine with the server), and each chunk's task is awaited so a
scenario starts measuring only once the index is complete. ``bench/ingest.py`` reads the same files
to time indexing itself.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import orjson

from bench.loadgen import REPO_ROOT

DATASETS_DIR = REPO_ROOT.parent / "shared" / "datasets"
_TERMINAL = ("succeeded", "failed", "canceled")
T = TypeVar("T")


class TaskFailed(Exception):
    """An indexing task ended in ``failed`` or ``canceled``; the message carries its error."""


@dataclass(frozen=True)
class Dataset:
    path: str
    primary_key: str

    def documents(self) -> Iterator[dict[str, Any]]:
        """A JSON array file is parsed whole; NDJSON / JSON Lines stream one line at a time."""
        file = DATASETS_DIR / self.path
        if file.suffix == ".json":
            yield from orjson.loads(file.read_bytes())
            return
        with open(file, "rb") as lines:
            for line in lines:
                if line.strip():
                    yield orjson.loads(line)


DATASETS: dict[str, Dataset] = {
    "movies": Dataset("movies-1688/movies.json", "id"),
    "cities": Dataset("cities/cities.ndjson", "id"),
    "cranfield": Dataset("cranfield/corpus.jsonl", "_id"),
}


def load(
    url: str, index_uid: str, name: str, chunk_size: int = 5000, headers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Index the dataset ``name`` (a key of ``DATASETS``) into ``index_uid``; return its finished tasks.

    ``headers`` go with every request (``Authorization`` for a cluster with a master key)."""
    dataset = DATASETS[name]
    return add_documents(
        url, index_uid, dataset.documents(), dataset.primary_key, chunk_size, headers=headers
    )


def add_documents(
    url: str,
    index_uid: str,
    documents: Iterable[dict[str, Any]],
    primary_key: str | None = None,
    chunk_size: int = 5000,
    timeout: float = 600.0,
    headers: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Post ``documents`` in chunks, then wait for every task; raise ``TaskFailed`` on the first failure."""
    params = {"primaryKey": primary_key} if primary_key else {}
    task_uids = []
    with httpx.Client(base_url=url, timeout=60.0, headers=headers) as client:
        for chunk in chunked(documents, chunk_size):
            response = client.post(
                f"/indexes/{index_uid}/documents",
                params=params,
                content=orjson.dumps(chunk),
                headers={"Content-Type": "application/json"},
            )
            response.raise_for_status()
            task_uids.append(int(response.json()["taskUid"]))
        deadline = time.monotonic() + timeout
        return [wait_for_task(client, uid, deadline) for uid in task_uids]


def wait_for_task(client: httpx.Client, task_uid: int, deadline: float) -> dict[str, Any]:
    """Poll ``GET /tasks/{uid}`` with a growing interval until the task reaches a final status."""
    interval = 0.02
    while True:
        response = client.get(f"/tasks/{task_uid}")
        response.raise_for_status()
        task: dict[str, Any] = response.json()
        if task["status"] == "succeeded":
            return task
        if task["status"] in _TERMINAL:
            raise TaskFailed(f"task {task_uid} {task['status']}: {task.get('error')}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"task {task_uid} still {task['status']}")
        time.sleep(interval)
        interval = min(interval * 2, 0.5)


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items (the last may be shorter), taken lazily."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk
