"""What a bot-code cache directory holds, for the tests that look into one."""

from __future__ import annotations

from pathlib import Path

from server.bots.code import USES


def entries(root: Path) -> list[str]:
    """The names in a cache directory but its use records: trees, and any temporary left."""
    return sorted(p.name for p in root.iterdir() if p.name != USES)
