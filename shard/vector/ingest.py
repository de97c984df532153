"""What a document write does to vectors: each embedder's entry for each document, computed (and
embedded) before anything of the operation is written, so a failure fails the operation alone.

Per document and embedder (search.md §6.11, §1.6):

- ``_vectors.<name>`` given as an array, an array of arrays, ``null`` or ``{embeddings, regenerate}``:
  those embeddings, dimensions checked. For a generated source they are user-provided
  (``regenerate: false``) and kept across later updates, unless ``regenerate: true`` says they stand
  only until the document's text changes.
- not given, ``userProvided`` source: the stored embeddings are kept; a new document without them
  fails its task (``vector_embedding_error``), as the reference does.
- not given, generated source: user-provided embeddings are kept; otherwise the ``documentTemplate``
  is rendered (cut to ``documentTemplateMaxBytes``), or for a multimodal embedder each indexing
  fragment (one embedding per fragment that renders, ``shard/embedding/fragments.py``), and embedded
  only when the hash of what rendered differs from the stored one. Texts are embedded per embedder
  for the whole operation in one call.

``_vectors`` entries naming an embedder leave the stored document (they live in the vector tables);
others stay in it as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import orjson

from common.document_template import DEFAULT_MAX_BYTES, DEFAULT_TEMPLATE, TemplateError, render_document
from common.documents.projection import VECTORS
from common.errors import ApiError
from shard.embedding.fragments import indexing_inputs, uses_fragments
from shard.index.env import decode_u32, external_key
from shard.index.settings import load_settings, searchable_attributes
from shard.vector.embedders import USER_PROVIDED
from shard.vector.storage import NO_HASH, Entry, text_hash
from shard.vector.writer import VectorWriter


class Embedding(Protocol):
    """The embedders, as the batch reaches them (``shard/embedding`` through ``batches.py``)."""

    def dimensions(self, config: dict[str, Any]) -> int: ...

    def embed(self, index_uid: str, name: str, config: dict[str, Any], texts: list[str]) -> np.ndarray:
        """float32 ``(len(texts), d)``; raises ``ApiError`` (``vector_embedding_error``)."""
        ...


@dataclass
class Planned:
    external_id: str
    document: dict[str, Any]
    """As it will be stored: without the ``_vectors`` entries of embedders."""
    position: int
    final: dict[str, Any]
    """The document once written (an update merged onto what was stored)."""
    entries: dict[str, Entry] = field(default_factory=dict)
    """Embedder -> the entry to store; an embedder absent here keeps what is stored."""
    states: dict[str, tuple[bytes, bool]] = field(default_factory=dict)
    """Embedder -> (text hash, user-provided) of the entry it will have, embedded or not yet."""


def plan_documents(
    writer: VectorWriter,
    index_id: int,
    index_uid: str,
    documents: Iterable[Sequence[Any]],
    *,
    merge: bool,
    embedding: Embedding,
) -> list[Planned]:
    """The operation's documents, stripped, each with its embedders' new entries. Raises ``ApiError``
    for bad vectors or a failed embedding; nothing is written."""
    return _Planner(writer, index_id, index_uid, embedding).plan(documents, merge)


class _Planner:
    def __init__(self, writer: VectorWriter, index_id: int, index_uid: str, embedding: Embedding) -> None:
        self.writer = writer
        self.index_id = index_id
        self.index_uid = index_uid
        self.embedding = embedding
        self.embedders = writer.embedders(index_id)
        self.searchable = searchable_names(load_settings(writer.env, writer.txn, index_id))
        self.texts: dict[str, list[str]] = {}
        self.targets: dict[str, list[tuple[Planned, bytes, int]]] = {}
        """Per embedder, the texts to embed and the planned documents (with hashes and their number of
        texts) they are for."""

    def plan(self, documents: Iterable[Sequence[Any]], merge: bool) -> list[Planned]:
        planned: list[Planned] = []
        latest: dict[str, Planned] = {}
        for external_id, document, position in documents:
            self.writer.ctx.tick()
            given = document.get(VECTORS)
            body = _stripped(document, self.embedders)
            earlier = latest.get(external_id)
            doc_id = _doc_id(self.writer, self.index_id, external_id)
            final = body
            if merge:  # the document as the update leaves it, which the templates render
                previous = earlier.final if earlier is not None else self._stored_body(doc_id)
                final = body if previous is None else {**previous, **body}
            item = Planned(external_id, body, position, final)
            for name, config in self.embedders.items():
                stored = earlier.states.get(name) if earlier is not None else self._stored(doc_id, name)
                self._plan_one(item, final, stored, name, config, given if isinstance(given, dict) else {})
            latest[external_id] = item
            planned.append(item)
        for name, texts in self.texts.items():
            vectors = self.embedding.embed(self.index_uid, name, self.embedders[name], texts)
            targets = self.targets[name]
            blocks = split_rows(vectors, [count for _, _, count in targets])
            for (item, hashed, _), rows in zip(targets, blocks, strict=True):
                item.entries[name] = Entry(rows, False, hashed)
        return planned

    def _plan_one(
        self,
        item: Planned,
        final: dict[str, Any],
        stored: tuple[bytes, bool] | None,
        name: str,
        config: dict[str, Any],
        given: dict[str, Any],
    ) -> None:
        source = config.get("source")
        value = given.get(name, _ABSENT)
        explicit = isinstance(value, dict)
        regenerate = bool(value["regenerate"]) if explicit else False
        raw = value["embeddings"] if explicit else value
        # `{"regenerate": true}` alone asks for a generated embedding (userProvided: keeps what it has)
        asked = explicit and regenerate and raw is None
        if value is not _ABSENT and not asked:
            rows = _embeddings(self.index_uid, item.external_id, name, raw, self.embedding.dimensions(config))
            user = not regenerate
            hashed = NO_HASH
            if not user and source != USER_PROVIDED:  # kept until the document's text changes
                hashed = inputs_hash(self._inputs(item, config, final))
            item.entries[name] = Entry(rows, user, hashed)
            item.states[name] = (hashed, user)
            return
        elif source == USER_PROVIDED:
            if stored is None:
                raise ApiError(
                    "vector_embedding_error",
                    f"Index `{self.index_uid}`: While embedding documents for embedder `{name}`: no vectors"
                    f" provided for document `{item.external_id}`\n- Note: `{name}` has `source:"
                    f" userProvided`, so documents must provide embeddings as an array in `_vectors.{name}`."
                    f"\n- Hint: opt-out for a document with `_vectors.{name}: null`",
                )
            item.states[name] = stored
            return
        elif stored is not None and stored[1] and not asked:
            item.states[name] = stored  # user-provided embeddings stay until the document says otherwise
            return
        inputs = self._inputs(item, config, final)
        hashed = inputs_hash(inputs)
        item.states[name] = (hashed, False)
        if stored is not None and stored[0] == hashed and not stored[1]:
            return
        self.texts.setdefault(name, []).extend(inputs)
        self.targets.setdefault(name, []).append((item, hashed, len(inputs)))

    def _inputs(self, item: Planned, config: dict[str, Any], document: dict[str, Any]) -> list[str]:
        return document_inputs(self.index_uid, item.external_id, config, document, self.searchable)

    def _stored(self, doc_id: int | None, name: str) -> tuple[bytes, bool] | None:
        """(text hash, user-provided) of the document's stored entry; None when it has none."""
        if doc_id is None:
            return None
        header = self.writer.stored_header((self.index_id, name), doc_id)
        return None if header is None else (header[0], header[1])

    def _stored_body(self, doc_id: int | None) -> dict[str, Any] | None:
        """The document as the batch has it so far (earlier operations' pending writes included)."""
        if doc_id is None:
            return None
        value = self.writer.ctx.documents.get(self.index_id, doc_id)
        return None if value is None else orjson.loads(value)


def _embeddings(index_uid: str, external_id: str, name: str, raw: Any, dimensions: int) -> np.ndarray:
    """``raw`` (an array, an array of arrays, or null) as float32 rows of ``dimensions``; a value of
    the wrong type is ``invalid_vectors_type``, a row of the wrong length ``invalid_vector_dimensions``,
    both worded as the reference words them."""
    if raw is None or raw == []:
        return np.zeros((0, dimensions), dtype=np.float32)
    nested = isinstance(raw[0], list)

    def refuse(path: str, expected: str, value: Any) -> ApiError:
        return ApiError(
            "invalid_vectors_type",
            f"Index `{index_uid}`: Bad embedder configuration in the document with id: `{external_id}`."
            f" Invalid value type at `._vectors.{name}{path}`: expected {expected}, but found"
            f" {_found(value)}",
        )

    rows = raw if nested else [raw]
    for number, row in enumerate(rows):
        if not isinstance(row, list):
            raise refuse(f"[{number}]", "an array", row)
        if not set(map(type, row)) <= _NUMBERS:  # one pass in C; the loop below only names the culprit
            for position, value in enumerate(row):
                if type(value) not in _NUMBERS:
                    path = f"[{number}][{position}]" if nested else f"[{position}]"
                    raise refuse(path, "a number", value)
        if len(row) != dimensions:
            raise ApiError(
                "invalid_vector_dimensions",
                f"Index `{index_uid}`: Invalid vector dimensions in document with id `{external_id}` in"
                f" `._vectors.{name}`.\n  - note: embedding #{number} has dimensions {len(row)}\n  - note:"
                f" embedder `{name}` requires {dimensions}",
            )
    return np.asarray(rows, dtype=np.float32)


_ABSENT: Any = object()
_NUMBERS = frozenset({int, float})
"""JSON numbers as orjson decodes them (``bool`` is a type of its own there)."""


def _found(value: Any) -> str:
    """How the reference names a JSON value of the wrong type: ``a boolean: `true```, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        kind = "a boolean"
    elif isinstance(value, int):
        kind = "a positive integer" if value >= 0 else "a negative integer"
    elif isinstance(value, float):
        kind = "a float"
    elif isinstance(value, str):
        kind = "a string"
    else:
        kind = "an array" if isinstance(value, list) else "an object"
    return f"{kind}: `{orjson.dumps(value).decode()}`"


def template_config(config: dict[str, Any]) -> dict[str, Any]:
    """Where an embedder's document template lives (a composite's indexing embedder)."""
    nested = config.get("indexingEmbedder")
    return nested if config.get("source") == "composite" and isinstance(nested, dict) else config


def document_inputs(
    index_uid: str,
    external_id: str,
    config: dict[str, Any],
    document: dict[str, Any],
    searchable: Callable[[str], bool] | None,
) -> list[str]:
    """What the embedder embeds for the document, one text per embedding: its template rendered and
    cut to its byte limit, or (multimodal) the JSON of each indexing fragment that renders, possibly
    none."""
    source = template_config(config)
    if uses_fragments(source):
        return indexing_inputs(source, document)
    template = source.get("documentTemplate") or DEFAULT_TEMPLATE
    try:
        limit = source.get("documentTemplateMaxBytes", DEFAULT_MAX_BYTES)
        return [render_document(template, document, limit, searchable)]
    except TemplateError as error:
        raise ApiError(
            "vector_embedding_error",
            f"Index `{index_uid}`: While rendering the document template for document `{external_id}`:"
            f" {error.message}",
        ) from None


def inputs_hash(inputs: list[str]) -> bytes:
    """The stored hash of a document's inputs: a template's text hashes as itself, so the hashes of
    documents embedded before fragments existed still match."""
    return text_hash("\0".join(inputs))


def split_rows(vectors: np.ndarray, counts: list[int]) -> list[np.ndarray]:
    """float32 ``(count, d)`` blocks of ``vectors``, one per document, in order."""
    rows = np.asarray(vectors, dtype=np.float32)
    bounds = np.cumsum(counts)[:-1]
    return list(np.split(rows, bounds)) if counts else []


def searchable_names(settings: dict[str, Any]) -> Callable[[str], bool] | None:
    """Whether a top-level field is searchable (a template's ``field.is_searchable``)."""
    return _searchable(searchable_attributes(settings))


def _searchable(attributes: tuple[str, ...] | None) -> Callable[[str], bool] | None:
    if attributes is None:
        return None
    names = frozenset(attribute.split(".", 1)[0] for attribute in attributes)
    return names.__contains__


def _stripped(document: dict[str, Any], embedders: dict[str, Any]) -> dict[str, Any]:
    vectors = document.get(VECTORS)
    if not isinstance(vectors, dict) or not any(name in embedders for name in vectors):
        return document
    kept = {name: value for name, value in vectors.items() if name not in embedders}
    body = {key: value for key, value in document.items() if key != VECTORS}
    if kept:
        body[VECTORS] = kept
    return body


def _doc_id(writer: VectorWriter, index_id: int, external_id: str) -> int | None:
    packed = writer.txn.get(external_key(index_id, external_id), db=writer.env.external_ids)
    return None if packed is None else decode_u32(packed)


def store_planned(writer: VectorWriter, index_id: int, planned: list[Planned]) -> None:
    """After the documents were written: each planned entry under the document's internal id (a
    document ``skipCreation`` left out has none)."""
    embedders = writer.embedders(index_id)
    for item in planned:
        doc_id = _doc_id(writer, index_id, item.external_id)
        if doc_id is None:
            continue
        for name, entry in item.entries.items():
            writer.put((index_id, name), doc_id, entry, bool(embedders[name].get("binaryQuantized")))
