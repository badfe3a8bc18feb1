"""docs/security.md's table of promises names tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_the_security_table_names_exists() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    table = text.split("## Every promise and the test that checks it", 1)[1]
    named = 0
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith("| promise") or row.startswith("|---"):
            continue
        cell = row.rstrip(" |").rsplit(" | ", 1)[1]
        current = None
        for ref in re.findall(r"`([^`]+)`", cell):
            path, _, name = ref.partition("::")
            if path:
                current = ROOT / "tests" / "server" / path
                assert current.exists(), ref
            assert current is not None, ref
            if name:
                assert f"def {name}(" in current.read_text(), ref
                named += 1
    assert named >= 20
