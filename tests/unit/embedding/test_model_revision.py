"""Which ``revision`` a local model's files answer to (``shard/embedding/model_files.py``): a Hugging
Face cache snapshot by its commit and its branches, a ``--local-dir`` download by its commit, other
directories and the packaged zip by none."""

from __future__ import annotations

from pathlib import Path

import pytest

from shard.embedding import EmbeddingError
from shard.embedding.model_files import REQUIRED, ModelFiles

COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"


def _model(directory: Path) -> Path:
    directory.mkdir(parents=True)
    for name in REQUIRED:
        (directory / name).write_text("{}")
    return directory


def test_a_cache_snapshot_answers_to_its_commit_and_branches(tmp_path: Path) -> None:
    repository = tmp_path / "models--org--name"
    snapshot = _model(repository / "snapshots" / COMMIT)
    (repository / "refs").mkdir()
    (repository / "refs" / "main").write_text(COMMIT + "\n")
    (repository / "refs" / "old").write_text("0" * 40)
    files = ModelFiles(str(snapshot))
    for revision in (None, COMMIT, "main"):
        files.check_revision(revision)
    with pytest.raises(
        EmbeddingError, match=f"at revision `old` is not available: .* holds revision `{COMMIT}`"
    ):
        files.check_revision("old")


def test_a_local_dir_download_answers_to_its_commit(tmp_path: Path) -> None:
    directory = _model(tmp_path / "minilm")
    metadata = directory / ".cache" / "huggingface" / "download" / "config.json.metadata"
    metadata.parent.mkdir(parents=True)
    metadata.write_text(f'{COMMIT}\n"etag"\n1700000000.0\n')
    files = ModelFiles(str(directory))
    files.check_revision(COMMIT)
    with pytest.raises(EmbeddingError, match="holds revision"):
        files.check_revision("main")


def test_files_that_do_not_say_refuse_any_revision(tmp_path: Path) -> None:
    files = ModelFiles(str(_model(tmp_path / "plain")))
    files.check_revision(None)
    with pytest.raises(EmbeddingError, match="does not say which revision it holds"):
        files.check_revision(COMMIT)
    packaged = ModelFiles("sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(EmbeddingError, match="the packaged model ships one unnamed revision"):
        packaged.check_revision("main")
    packaged.close()
