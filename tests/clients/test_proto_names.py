"""Every kit can generate code from the protocol: no field names that clash in generated C++.

protoc's C++ generator gives a field `f` accessors such as `f()`, `clear_f()`, and for a
repeated field `f_size()`, `add_f()`, `mutable_f()`. A message with both `repeated hand` and
`hand_size` then has two `hand_size()` methods and its C++ stubs do not compile. This test
says so by name instead of leaving it to a compiler error in the C++ kit's build.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf import descriptor_pb2
from grpc_tools import protoc  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "proto"
FD = descriptor_pb2.FieldDescriptorProto


def descriptor_set(tmp_path: Path) -> descriptor_pb2.FileDescriptorSet:
    import grpc_tools

    wkt = Path(grpc_tools.__file__).parent / "_proto"
    files = sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.glob("cardshark/v1/*.proto"))
    out = tmp_path / "protocol.pb"
    code = protoc.main(
        ["protoc", f"-I{PROTO_ROOT}", f"-I{wkt}", f"--descriptor_set_out={out}", *files]
    )
    assert code == 0, f"protoc failed on {files}"
    return descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())


def accessors(field: descriptor_pb2.FieldDescriptorProto) -> set[str]:
    """The argument-free C++ methods protoc generates for one field."""
    name = field.name
    names = {name, f"clear_{name}"}
    if field.label == FD.LABEL_REPEATED:
        names |= {f"{name}_size", f"add_{name}", f"mutable_{name}"}
    elif field.type in (FD.TYPE_MESSAGE, FD.TYPE_STRING, FD.TYPE_BYTES):
        names |= {f"mutable_{name}", f"release_{name}", f"has_{name}"}
    elif field.HasField("oneof_index"):
        names.add(f"has_{name}")
    return names


def clashes(message: descriptor_pb2.DescriptorProto, scope: str) -> list[str]:
    found = []
    owner: dict[str, str] = {}
    members: list[tuple[str, set[str]]] = [(f.name, accessors(f)) for f in message.field]
    synthetic = {f.oneof_index for f in message.field if f.proto3_optional}  # `optional` fields
    members += [
        (f"oneof {o.name}", {f"{o.name}_case", f"clear_{o.name}"})
        for i, o in enumerate(message.oneof_decl)
        if i not in synthetic
    ]
    for member, names in members:
        for method in sorted(names):
            if method in owner and owner[method] != member:
                found.append(f"{scope}: `{owner[method]}` and `{member}` both make {method}()")
            owner.setdefault(method, member)
    for nested in message.nested_type:
        found += clashes(nested, f"{scope}.{nested.name}")
    return found


def test_generated_cpp_accessors_do_not_clash(tmp_path: Path) -> None:
    found = []
    for file in descriptor_set(tmp_path).file:
        if file.name.startswith("cardshark/"):
            for message in file.message_type:
                found += clashes(message, f"{file.name} {message.name}")
    assert not found, (
        "field names that clash in generated C++ (rename one of each pair):\n" + "\n".join(found)
    )
