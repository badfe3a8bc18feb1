"""The engines run compiled (mypyc) or as pure Python, never a stale or half compiled mix, and
the same engine tests pass on both builds (games/_native.py, games/_build.py).

CI runs the suite on the compiled build (.ci/test sets CARDSHARK_EXPECT_COMPILED where a
compiler is present); `test_a_sample_of_the_engine_tests_passes_on_pure_python` runs the engine
tests again in a child with the compiled modules hidden (CARDSHARK_PURE_PYTHON=1).
"""

from __future__ import annotations

import copy
import json
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

import games
from games import _native
from games._build import compiler_problem
from games.base import Action
from games.registry import all_games, get_game

ROOT = Path(__file__).resolve().parents[2]
ENV_WITHOUT_SWITCHES = {
    k: v
    for k, v in os.environ.items()
    if k not in (_native.PURE_ENV, "CARDSHARK_EXPECT_COMPILED", "PYTHONPATH")
}


def loaded_from() -> dict[str, str]:
    """Which file each module of the compiled set was loaded from in this process."""
    all_games()  # imports every engine
    return {
        name: Path(sys.modules[f"games.{name}"].__file__ or "").name for name in _native.COMPILED
    }


def test_this_process_runs_the_build_it_was_asked_for() -> None:
    files = loaded_from()
    if os.environ.get(_native.PURE_ENV):
        assert not games.ENGINES.compiled
        assert games.ENGINES.describe() == "pure Python (CARDSHARK_PURE_PYTHON is set)"
    if os.environ.get("CARDSHARK_EXPECT_COMPILED"):
        assert games.ENGINES.compiled, games.ENGINES.describe()
        assert games.ENGINES.describe().startswith("compiled (mypyc ")
    # never a mix: all from extension modules or all from source
    suffix = _native.SUFFIX if games.ENGINES.compiled else ".py"
    assert {name: f.endswith(suffix) for name, f in files.items()} == dict.fromkeys(files, True)


def test_a_sample_of_the_engine_tests_passes_on_pure_python() -> None:
    # Everything in tests/games but the slow hypothesis contract runs, which run for Knaves:
    # the golden transcripts of every game and each game's own rule tests.
    run = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/games", "-k", "(not test_contract or knaves) and not a_sample_of_the_engine",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV_WITHOUT_SWITCHES | {_native.PURE_ENV: "1"},
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and "failed" not in run.stdout


def copy_of_games(tmp_path: Path) -> Path:
    """games/'s sources in tmp_path/games, without any build of them."""
    shutil.copytree(
        ROOT / "games",
        tmp_path / "games",
        ignore=shutil.ignore_patterns("*.so", "_compiled.*", "__pycache__"),
    )
    return tmp_path / "games"


def fake_build(root: Path) -> None:
    """A record of root's sources as they are now and extension modules that are not ones:
    importing any of them fails, so a test sees whether one was loaded."""
    for path in _native.extension_files(root):
        path.write_bytes(b"not an extension module")
    record = {"mypyc": "0.0", "suffix": _native.SUFFIX, "sources": _native.source_digests(root)}
    (root / _native.RECORD.name).write_text(json.dumps(record), encoding="utf-8")


def in_copy(tmp_path: Path, code: str, env: dict[str, str] | None = None) -> str:
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV_WITHOUT_SWITCHES | (env or {}),
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


LOAD_KNAVES = (
    "import games, games.knaves, games.base\n"
    "print(games.ENGINES.describe())\n"
    "print(games.knaves.__file__, games.base.__file__)\n"
)


def test_a_build_whose_sources_changed_since_is_never_loaded(tmp_path: Path) -> None:
    root = copy_of_games(tmp_path)
    fake_build(root)
    assert _native.judge(honour_env=False, root=root).compiled  # as recorded: would be used
    with open(root / "knaves.py", "a", encoding="utf-8") as source:
        source.write("# an edit after the build\n")
    assert not _native.judge(honour_env=False, root=root).compiled
    out = in_copy(tmp_path, LOAD_KNAVES).splitlines()
    assert out[0] == (
        "pure Python (stale build: games/knaves.py changed since; "
        "`python -m games._build` recompiles)"
    )
    # the changed module and the unchanged ones beside it all from source: never a mix
    assert out[1] == f"{root / 'knaves.py'} {root / 'base.py'}"


def test_a_build_for_another_python_or_missing_a_module_is_not_loaded(tmp_path: Path) -> None:
    root = copy_of_games(tmp_path)
    fake_build(root)
    (root / f"kill{_native.SUFFIX}").unlink()
    assert _native.judge(honour_env=False, root=root).describe() == (
        f"pure Python (incomplete build: games/kill{_native.SUFFIX} is missing)"
    )
    fake_build(root)
    record = json.loads((root / "_compiled.json").read_text())
    (root / "_compiled.json").write_text(json.dumps(record | {"suffix": ".cpython-39.so"}))
    assert "compiled for another Python" in _native.judge(honour_env=False, root=root).detail
    assert (
        in_copy(tmp_path, LOAD_KNAVES)
        .splitlines()[1]
        .endswith("knaves.py " + str(root / "base.py"))
    )


def test_without_a_c_compiler_the_install_records_why_and_runs_pure_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert compiler_problem() == "no C compiler: /nonexistent/cc not found"
    root = copy_of_games(tmp_path)
    no_cc = {"CC": "/nonexistent/cc"}
    built = in_copy(tmp_path, "from games._build import main; main([])", env=no_cc)
    assert built.startswith("engines: pure Python (no C compiler: /nonexistent/cc not found)")
    assert not list(root.glob("*.so"))
    out = in_copy(tmp_path, LOAD_KNAVES).splitlines()
    assert out[0] == "pure Python (no C compiler: /nonexistent/cc not found)"
    assert out[1] == f"{root / 'knaves.py'} {root / 'base.py'}"


def test_frozen_values_and_states_survive_copy_deepcopy_and_pickle() -> None:
    # Compiled, a frozen dataclass refuses the field-by-field restore copy and pickle default to.
    game = get_game("kill")
    state = game.new_match(5)
    values = [game.spec, game.spec.options[0], game.result(state), game.legal_actions(state)[0]]
    for value in [*values, Action("play:AS", "play", card="AS", cards=("AS",), seat=2)]:
        for again in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
            assert type(again) is type(value)
            assert [getattr(again, f.name) for f in fields(again)] == [
                getattr(value, f.name) for f in fields(value)
            ]
    for again in (game.clone(state), pickle.loads(pickle.dumps(state))):
        assert game.view(again, 0) == game.view(state, 0)
        assert [a.id for a in game.legal_actions(again)] == [
            a.id for a in game.legal_actions(state)
        ]
