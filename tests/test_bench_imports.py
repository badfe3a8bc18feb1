"""bench/ measures the engines, not the command line: no bench script imports server.cli.

(A bench may still run `python -m server.cli` as a subprocess: that is the product's command.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def cli_imports(source: str) -> list[str]:
    """The server.cli modules a Python source imports (import and from-import, any depth)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        found += [n for n in names if n == "server.cli" or n.startswith("server.cli.")]
    return found


def test_the_check_sees_every_form() -> None:
    assert cli_imports("import server.cli.compare") == ["server.cli.compare"]
    assert cli_imports("from server.cli import common") == ["server.cli", "server.cli.common"]
    assert cli_imports("def f():\n    from server.cli.compare import set_seats\n") == [
        "server.cli.compare",
        "server.cli.compare.set_seats",
    ]
    assert cli_imports("from server import cli") == ["server.cli"]
    assert cli_imports("import server.play.compare\nfrom server.client import x") == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bench_imports_no_cli_module(script: Path) -> None:
    assert cli_imports(script.read_text()) == [], f"{script.name} imports the CLI"
