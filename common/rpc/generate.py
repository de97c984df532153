"""Regenerate the gRPC modules in ``common/rpc`` from ``proto/sift/v1``.

The ``.proto`` files live under ``proto/`` (the documented inter-process contract), but the generated
modules must import each other as ``common.rpc.*``. We therefore compile copies of the files laid out
at ``common/rpc/`` inside a scratch include root, which makes protoc emit ``from common.rpc import``.

Run: ``python -m common.rpc.generate`` (needs the ``grpcio-tools`` test dependency).
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = REPO_ROOT / "proto" / "sift" / "v1"
OUTPUT_DIR = REPO_ROOT / "common" / "rpc"
_IMPORT = re.compile(r'^import "sift/v1/(\w+\.proto)";', re.MULTILINE)


def generate(output_dir: Path) -> list[Path]:
    """Compile every proto into ``output_dir`` and return the written module paths."""
    from grpc_tools import protoc  # test-only dependency: imported lazily

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        staged = root / "common" / "rpc"
        staged.mkdir(parents=True)
        for proto in sorted(PROTO_DIR.glob("*.proto")):
            text = _IMPORT.sub(r'import "common/rpc/\1";', proto.read_text())
            (staged / proto.name).write_text(text)
        args = [
            "grpc_tools.protoc",
            f"-I{root}",
            f"--python_out={root}",
            f"--pyi_out={root}",
            f"--grpc_python_out={root}",
            *[str(p) for p in sorted(staged.glob("*.proto"))],
        ]
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed")
        written = []
        for module in sorted(staged.glob("*_pb2*.py*")):
            target = output_dir / module.name
            shutil.copyfile(module, target)
            written.append(target)
        return written


if __name__ == "__main__":
    for path in generate(OUTPUT_DIR):
        print(path.relative_to(REPO_ROOT), file=sys.stderr)
