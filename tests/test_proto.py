"""The .proto files lint clean, the committed stubs are fresh, and every game has a view."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

from cardshark.v1 import referee_pb2 as pb
from games.registry import all_games, get_game
from server.codec import protocol

ROOT = Path(__file__).resolve().parents[1]
BUF = ROOT / "proto" / "node_modules" / ".bin" / "buf"


def test_committed_stubs_match_the_proto_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "proto" / "generate.py"), str(tmp_path)], check=True)
    fresh = {
        p.relative_to(tmp_path): p.read_bytes() for p in (tmp_path / "cardshark").rglob("*.py*")
    }
    committed_dir = ROOT / "clients" / "python"
    committed = {
        p.relative_to(committed_dir): p.read_bytes()
        for p in (committed_dir / "cardshark").rglob("*.py*")
        if "__pycache__" not in p.parts
    }
    assert sorted(fresh) == sorted(committed), "stub files differ; run python proto/generate.py"
    stale = [str(name) for name in fresh if fresh[name] != committed[name]]
    assert not stale, f"stale stubs {stale}; run python proto/generate.py"


def test_buf_lint_passes() -> None:
    assert BUF.exists(), "buf is missing: run `npm install --prefix proto` (as .ci/run does)"
    run = subprocess.run([str(BUF), "lint"], cwd=ROOT / "proto", capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_registered_game_has_a_view_message() -> None:
    assert set(all_games()) <= protocol.supported_games()


def test_views_convert_to_their_messages_and_back() -> None:
    """Every key of every view has a field of the same name, type and value."""
    import random

    for name, game in all_games().items():
        state = game.new_match(4)
        rng = random.Random(4)
        for step in range(400):
            if game.to_act(state) is None:
                break
            if step % 37 == 0:
                for seat in range(state.seats):
                    view = game.view(state, seat)
                    expected = json.loads(json.dumps(view))  # shared tuples as lists
                    msg = protocol.decision_request(
                        game_name=name,
                        request_id=1,
                        match_id="m",
                        seat=seat,
                        view=view,
                        actions=game.legal_actions(state),
                        move_ms=1,
                        bank_ms=0,
                    )
                    back = json_format.MessageToDict(
                        getattr(msg.request, protocol.view_field(name)),
                        preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True,
                    )
                    assert back == expected, f"{name}: view does not round-trip"
            game.apply(state, rng.choice(game.legal_actions(state)))


def test_every_proto_module_imports() -> None:
    for path in (ROOT / "clients" / "python" / "cardshark" / "v1").glob("*_pb2.py"):
        importlib.import_module(f"cardshark.v1.{path.stem}")
    assert pb.DecisionRequest.DESCRIPTOR.oneofs_by_name["view"]


def test_shared_view_parts_go_on_the_wire_as_if_converted_each_time() -> None:
    """A view's shared tuples are converted once, and the bytes are the plain conversion's."""
    import random

    game = get_game("knives")
    state = game.new_match(7)
    rng = random.Random(7)
    while not (state.records and len(state.tricks) >= 2):  # into a later hand's tricks
        game.apply(state, rng.choice(game.legal_actions(state)))
    seat = game.to_act(state)
    assert seat is not None

    def request(view: dict[str, Any]) -> bytes:
        msg = protocol.decision_request(
            game_name="knives",
            request_id=3,
            match_id="m",
            seat=seat,
            view=view,
            actions=game.legal_actions(state),
            move_ms=1000,
            bank_ms=0,
        )
        return bytes(msg.SerializeToString())

    view = game.view(state, seat)
    assert {k for k, v in view.items() if type(v) is tuple} == {"auction", "tricks", "results"}
    assert view["results"] and view["tricks"]
    plain = request(json.loads(json.dumps(view)))  # lists only: the constructor path
    protocol._SHARED_CACHE.clear()
    first = request(game.view(state, seat))
    converted = len(protocol._SHARED_CACHE)
    second = request(game.view(state, (seat + 1) % 5))  # another seat shares the same parts
    again = request(game.view(state, seat))
    assert first == plain == again and second != first
    assert converted == 3 and len(protocol._SHARED_CACHE) == 3


def test_grown_shared_views_go_on_the_wire_as_if_converted_each_time() -> None:
    """A shared tuple that grows is extended, not rebuilt, and its bytes are extended: every
    request of whole matches equals the plain conversion of its view."""
    import random

    def request(name: str, seat: int, view: dict[str, Any], legal: Any) -> bytes:
        msg = protocol.decision_request(
            game_name=name,
            request_id=3,
            match_id="m",
            seat=seat,
            view=view,
            actions=legal,
            move_ms=1000,
            bank_ms=0,
        )
        return bytes(msg.SerializeToString())

    for name in ("knaves", "knives"):
        game = get_game(name)
        state = game.new_match(11)
        rng = random.Random(11)
        while (seat := game.to_act(state)) is not None:
            legal = game.legal_actions(state)
            view = game.view(state, seat)
            plain = request(name, seat, json.loads(json.dumps(view)), legal)
            assert request(name, seat, view, legal) == plain, f"{name}: {len(state.history)}"
            game.apply(state, rng.choice(legal))


def test_struct_matches_the_librarys_own_conversion() -> None:
    """Hand records and options convert exactly as google.protobuf's Struct.update does."""
    import random

    def reference(data: dict[str, Any]) -> struct_pb2.Struct:
        out = struct_pb2.Struct()
        out.update(data)
        return out

    for name, game in all_games().items():
        state = game.new_match(11)
        rng = random.Random(11)
        while game.to_act(state) is not None:
            game.apply(state, rng.choice(game.legal_actions(state)))
        records = game.hand_records(state)
        assert records
        for record in records:
            assert protocol.struct(record) == reference(record), name
    odd = {
        "empty_list": [],
        "empty_dict": {},
        "flags": [True, False, 1, 0, 1.5, None, "1"],
        "nested": [[], [[1, "a"], {"k": [None]}], {"deep": {"deeper": (2, 3)}}],
        "mixed": ["a", {"b": 1}, "c", ["d"], "e"],
        "true": True,
        "one": 1,
        "none": None,
    }
    assert protocol.struct(odd) == reference(odd)
    assert protocol.struct(odd) == protocol.struct(odd)  # the second time from cached bytes


def test_every_proto_file_names_its_package_in_other_languages() -> None:
    """go_package, java_package (multiple files) and csharp_namespace, the same in every file."""
    for path in sorted((ROOT / "clients" / "python" / "cardshark" / "v1").glob("*_pb2.py")):
        module = importlib.import_module(f"cardshark.v1.{path.stem}")
        options = module.DESCRIPTOR.GetOptions()
        name = module.DESCRIPTOR.name
        assert options.go_package == (
            "github.com/cardshark/cardshark/gen/go/cardshark/v1;cardsharkv1"
        ), name
        assert options.java_package == "dev.cardshark.v1", name
        assert options.java_multiple_files, name
        assert options.csharp_namespace == "Cardshark.V1", name
