"""The tables bot authors need twice, in docs/protocol.md §8 and in clients/README.md, agree."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADERS = [
    "| language or tool | read each line as it comes | write each answer at once |",
    "| setting | Python SDK | Node.js | C++ | stdio bridge |",
]


def table(path: Path, header: str) -> list[str]:
    """The rows of the one markdown table in path that starts with header."""
    lines = path.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if line == header]
    assert len(starts) == 1, f"{path.name}: {len(starts)} tables start with {header}"
    rows = []
    for line in lines[starts[0] :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize("header", HEADERS)
def test_protocol_and_the_kits_readme_show_the_same_table(header: str) -> None:
    protocol = table(ROOT / "docs" / "protocol.md", header)
    readme = table(ROOT / "clients" / "README.md", header)
    assert protocol == readme
    assert len(protocol) > 5
