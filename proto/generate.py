"""Regenerate the committed Python stubs from proto/cardshark/v1/*.proto.

Usage: python proto/generate.py [OUT_DIR]   (default: clients/python)
Never edit the generated files by hand; tests/test_proto.py fails when they are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grpc_tools
from grpc_tools import protoc

PROTO_ROOT = Path(__file__).resolve().parent
DEFAULT_OUT = PROTO_ROOT.parent / "clients" / "python"


def generate(out: Path) -> list[Path]:
    """Write *_pb2.py, *_pb2.pyi and *_pb2_grpc.py for every .proto under out/cardshark/v1."""
    sources = sorted(PROTO_ROOT.glob("cardshark/v1/*.proto"))
    include = Path(grpc_tools.__file__).parent / "_proto"
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *(str(s.relative_to(PROTO_ROOT)) for s in sources),
    ]
    (out / "cardshark" / "v1").mkdir(parents=True, exist_ok=True)
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    for package in (out / "cardshark", out / "cardshark" / "v1"):
        (package / "__init__.py").write_text('"""Generated protobuf stubs; do not edit."""\n')
    return sorted((out / "cardshark").rglob("*.py*"))


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    for path in generate(target):
        print(path)
