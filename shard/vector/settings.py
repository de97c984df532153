"""What a change of the ``embedders`` setting does to stored vectors (search.md §6.11).

- a removed embedder drops its vectors;
- an added one embeds every stored document (a ``userProvided`` one has nothing to embed: its
  vectors come with later writes);
- a change of what shapes embeddings (``regeneration_key``: source, model, revision, pooling, url,
  request, OpenAI dimensions) regenerates every embedding that is not user-provided (a switch to
  ``userProvided`` drops them, as nothing can regenerate them);
- a change of ``documentTemplate`` / ``documentTemplateMaxBytes`` / ``indexingFragments`` re-embeds
  only the documents whose rendered text (or fragments) changed;
- turning ``binaryQuantized`` on rewrites the stored embeddings as sign bits;
- changed ``dimensions`` start the space again (user-provided vectors of the old size are dropped).

Everything is embedded before anything is written, so a provider failure fails the settings task
and leaves settings and vectors as they were. A local (``huggingFace``) model that is new or changed
is loaded even with no document to embed, so an unknown model or revision fails the settings task
rather than the first document write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

from common.errors import ApiError, index_prefix
from shard.index.blocks import iter_values
from shard.index.settings import Settings
from shard.vector.embedders import LOCAL, USER_PROVIDED, regeneration_key
from shard.vector.ingest import (
    Embedding,
    document_inputs,
    inputs_hash,
    searchable_names,
    split_rows,
    template_config,
)
from shard.vector.storage import Entry, decode_entry, iter_entries
from shard.vector.writer import VectorWriter

_TEMPLATE_FIELDS = ("documentTemplate", "documentTemplateMaxBytes", "indexingFragments")


@dataclass
class EmbedderChange:
    """The vector writes a settings change makes, computed first and applied once settings are saved."""

    writer: VectorWriter
    index_id: int
    dropped: list[str] = field(default_factory=list)
    """Embedders whose space goes (removed, or starting again)."""
    entries: list[tuple[str, int, Entry]] = field(default_factory=list)
    """(embedder, doc id, entry) to store, in order (a later one for a document wins)."""
    binary: set[str] = field(default_factory=set)

    def apply(self) -> None:
        for name in self.dropped:
            self.writer.drop((self.index_id, name))
        for name, doc_id, entry in self.entries:
            self.writer.put((self.index_id, name), doc_id, entry, name in self.binary)


def change_embedders(
    writer: VectorWriter, index_id: int, index_uid: str, settings: Settings, embedding: Embedding
) -> EmbedderChange:
    before: dict[str, Any] = writer.embedders(index_id)
    after: dict[str, Any] = settings.get("embedders") or {}
    change = EmbedderChange(writer, index_id, dropped=[name for name in before if name not in after])
    regenerate: dict[str, bool] = {}
    """Embedders to go over every document with: True ignores the stored text hash."""
    for name, config in after.items():
        old = before.get(name)
        if config.get("binaryQuantized"):
            change.binary.add(name)
        generated = config.get("source") != USER_PROVIDED
        if old is None:
            if generated:
                regenerate[name] = True
            continue
        resized = config.get("dimensions") != old.get("dimensions")
        requantized = bool(config.get("binaryQuantized")) != bool(old.get("binaryQuantized"))
        if not generated:
            if resized:
                _restart(writer, index_id, name, change, keep="none")  # they no longer fit
            elif old.get("source") != USER_PROVIDED:
                _restart(writer, index_id, name, change, keep="user")  # nothing can regenerate the others
            elif requantized:
                _restart(writer, index_id, name, change, keep="all")
        elif regeneration_key(old) != regeneration_key(config) or resized:
            _restart(writer, index_id, name, change, keep="user")
            regenerate[name] = True
        else:
            if requantized:
                _restart(writer, index_id, name, change, keep="all")
            if any(template_config(old).get(f) != template_config(config).get(f) for f in _TEMPLATE_FIELDS):
                regenerate[name] = False
    for name in regenerate:
        if after[name].get("source") == LOCAL:
            try:
                embedding.dimensions(after[name])  # loads the model, memoised for the documents
            except ApiError as error:
                raise ApiError(error.code, index_prefix(index_uid) + error.message) from None
    if regenerate:
        _embed_documents(writer, index_id, index_uid, settings, after, regenerate, embedding, change)
    return change


def _embed_documents(
    writer: VectorWriter,
    index_id: int,
    index_uid: str,
    settings: Settings,
    embedders: dict[str, Any],
    regenerate: dict[str, bool],
    embedding: Embedding,
    change: EmbedderChange,
) -> None:
    ctx = writer.ctx
    ctx.documents.flush()
    searchable = searchable_names(settings)
    texts: dict[str, list[str]] = {name: [] for name in regenerate}
    targets: dict[str, list[tuple[int, bytes, int]]] = {name: [] for name in regenerate}
    for doc_id, value in iter_values(ctx.txn, ctx.env.documents, ctx.codec, index_id):
        ctx.tick()
        document = orjson.loads(value)
        for name, everything in regenerate.items():
            stored = writer.stored_header((index_id, name), doc_id)
            if stored is not None and stored[1]:
                continue  # user-provided: kept
            inputs = document_inputs(index_uid, str(doc_id), embedders[name], document, searchable)
            hashed = inputs_hash(inputs)
            if not everything and stored is not None and stored[0] == hashed:
                continue
            texts[name].extend(inputs)
            targets[name].append((doc_id, hashed, len(inputs)))
    for name, pending in texts.items():
        if not targets[name]:
            continue
        vectors = embedding.embed(index_uid, name, embedders[name], pending)
        counts = [target[2] for target in targets[name]]
        for (doc_id, hashed, _), rows in zip(targets[name], split_rows(vectors, counts), strict=True):
            change.entries.append((name, doc_id, Entry(rows, False, hashed)))


def _restart(writer: VectorWriter, index_id: int, name: str, change: EmbedderChange, keep: str) -> None:
    """The embedder's space starts again (its shape changed: dimensions, sign bits, or what generates
    it), keeping ``all`` its stored entries (re-encoded), the ``user``-provided ones, or ``none``."""
    change.dropped.append(name)
    if keep == "none":
        return
    for doc_id, value in iter_entries(writer.env, writer.txn, index_id, name):
        entry = decode_entry(value)
        if keep == "all" or entry.user_provided:
            change.entries.append((name, doc_id, entry))
