"""What the embedders answered while a batch was prepared, kept on disk until the batch commits.

A batch is applied on every shard in two phases (``scheduler/prepare.py``): each shard first prepares
its part, then commits it once every shard prepared. The embedders' answers are the only inputs of a
batch that can differ when it runs twice (a provider fails, then answers; a dimensions probe times out);
everything else a batch does follows from the store and the operations. So a shard keeps those answers,
durably, before it says it prepared: after a crash it applies the batch again from them alone, and a
commit the scheduler decided can no longer fail on a provider. A later round of the same batch (other
tasks skipped) reuses them too, so no text is embedded twice.

One file per batch, ``<batch uid>.npz`` (written to ``.tmp``, fsynced, renamed, directory fsynced),
removed once the batch committed, or when a later batch starts (the scheduler never goes back).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from common.fsync import fsync_path

_SUFFIX = ".npz"
_TEMPORARY = ".tmp"


def config_key(config: dict[str, Any]) -> str:
    """An embedder configuration as one string: equal configurations embed a text alike."""
    return orjson.dumps(config, option=orjson.OPT_SORT_KEYS).decode()


class PreparedEmbeddings:
    """The embeddings (by configuration and text) and probed dimensions of one batch."""

    def __init__(self, directory: Path, batch_uid: int) -> None:
        self.path = directory / f"{batch_uid}{_SUFFIX}"
        self.vectors: dict[tuple[str, str], np.ndarray] = {}
        self.dimensions: dict[str, int] = {}
        self._saved = True
        """Whether the file holds everything recorded so far."""

    @classmethod
    def load(cls, directory: Path, batch_uid: int) -> PreparedEmbeddings:
        """The batch's kept answers (none when it has no file: never prepared, or nothing embedded).
        Files of earlier batches are dropped: those batches are over."""
        prepared = cls(directory, batch_uid)
        if not directory.exists():
            return prepared
        for path in directory.iterdir():
            stem = path.name.split(".", 1)[0]
            if path.name.endswith(_TEMPORARY) or (stem.isdigit() and int(stem) < batch_uid):
                path.unlink(missing_ok=True)
        if prepared.path.exists():
            with np.load(prepared.path) as saved:
                meta = orjson.loads(saved["meta"].tobytes())
                prepared.dimensions = meta["dimensions"]
                for number, (config, texts) in enumerate(meta["embeddings"]):
                    rows = saved[f"rows{number}"]
                    prepared.vectors.update(
                        ((config, text), row) for text, row in zip(texts, rows, strict=True)
                    )
        return prepared

    def record(self, config: str, texts: list[str], vectors: np.ndarray) -> None:
        for text, row in zip(texts, vectors, strict=True):
            self.vectors[(config, text)] = np.asarray(row, dtype=np.float32)
        self._saved = self._saved and not texts

    def record_dimensions(self, config: str, dimensions: int) -> None:
        self.dimensions[config] = dimensions
        self._saved = False

    def save(self) -> None:
        """Make what was recorded durable (nothing to do when nothing new was recorded)."""
        if self._saved:
            return
        grouped: dict[str, tuple[list[str], list[np.ndarray]]] = {}
        for (config, text), row in self.vectors.items():
            texts, rows = grouped.setdefault(config, ([], []))
            texts.append(text)
            rows.append(row)
        meta = {"dimensions": self.dimensions, "embeddings": [[c, t] for c, (t, _) in grouped.items()]}
        arrays = {"meta": np.frombuffer(orjson.dumps(meta), dtype=np.uint8)}
        for number, (_, rows) in enumerate(grouped.values()):
            arrays[f"rows{number}"] = np.stack(rows)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(_TEMPORARY)
        with open(temporary, "wb") as file:
            np.savez(file, **arrays)  # type: ignore[arg-type]
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)
        fsync_path(self.path.parent)
        self._saved = True

    def remove(self) -> None:
        """The batch committed: nothing will apply it again."""
        self.path.unlink(missing_ok=True)
