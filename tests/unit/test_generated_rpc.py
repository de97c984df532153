"""The committed gRPC modules are exactly what ``proto/`` generates."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.rpc import generate


def test_committed_modules_match_proto_sources(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools", reason="grpcio-tools is a test dependency")
    written = generate.generate(tmp_path)
    assert written, "no module generated"
    stale = [p.name for p in written if p.read_bytes() != (generate.OUTPUT_DIR / p.name).read_bytes()]
    assert not stale, f"run `make proto`: {stale} differ from proto/"
    committed = {p.name for p in generate.OUTPUT_DIR.glob("*_pb2*.py*")}
    assert committed == {p.name for p in written}
