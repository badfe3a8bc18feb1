"""The referee's options are declared once and reach every command that runs a referee."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from server.cli import command
from server.cli.referee_options import RefereeOptions, referee_options

COMMANDS = [["tournament", "run"], ["tournament", "resume"], ["serve"], ["worker"]]
SHARED = ["--host", "--tls-cert", "--tls-key", "--tls-client-ca", "--sandbox", "--bot-memory"]
SHARED += ["--bot-cpu", "--bot-pids"]
PLAY = ["--clock", "--transport"]


def options_of(path: list[str]) -> dict[str, object]:
    """Each option of a command of the real command tree: its default and its help."""
    node = command()
    for name in path:
        node = node.commands[name]
    return {opt: (p.default, p.help) for p in node.params for opt in p.opts}


def test_every_referee_command_takes_the_same_options_with_the_same_defaults() -> None:
    seen = [options_of(path) for path in COMMANDS]
    for flag in SHARED:
        assert len({str(opts[flag]) for opts in seen}) == 1, flag
    for flag in PLAY:
        assert len({str(opts[flag]) for opts in seen[:3]}) == 1, flag
        assert flag not in seen[3], f"the worker plays as each tournament says: {flag}"
    assert options_of(["serve"])["--bot-memory"][0] == RefereeOptions().bot_memory == 1024


def test_a_command_receives_them_as_one_value(tmp_path: Path) -> None:
    got: list[RefereeOptions] = []
    app = typer.Typer()

    @app.command()
    @referee_options()
    def run(name: str, rounds: int = 1, *, referee: RefereeOptions) -> None:
        got.append(referee)
        assert (name, rounds) == ("x", 3)

    args = ["x", "--rounds", "3", "--host", "0.0.0.0", "--sandbox", "none", "--bot-pids", "9"]
    args += ["--clock", "wall", "--tls-cert", str(tmp_path / "c.pem")]
    typer.main.get_command(app).main(args, standalone_mode=False)
    assert got == [
        RefereeOptions(
            host="0.0.0.0", sandbox="none", bot_pids=9, clock="wall", tls_cert=tmp_path / "c.pem"
        )
    ]


def test_a_bad_value_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as exit_:
        RefereeOptions(clock="sundial").check()
    assert exit_.value.exit_code == 2
    assert capsys.readouterr().err.strip().startswith("error: unknown --clock 'sundial'")
