"""A managed bot to start, and why one did not: what preflight and the code cache share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO


@dataclass(frozen=True)
class BotToStart:
    """A managed bot as the runner asks for it: name, stored id, command; with stored code,
    its digest, and the directory it is unpacked in (the command's working directory)."""

    name: str
    bot_id: str
    command: str
    digest: str | None = None
    workdir: Path | None = None
    hold: IO[bytes] | None = field(default=None, compare=False)  # keeps workdir in the cache


@dataclass(frozen=True)
class StartFailure:
    """Why one managed bot is not playing: what it did, what it wrote, where its log is."""

    name: str
    bot_id: str
    reason: str  # e.g. "exited with status 1 before saying Hello"
    stderr: tuple[str, ...] = ()
    log_path: Path | None = None
    server_fault: bool = False  # the server could not start it: never the bot's forfeit
    refused: bool = False  # it cannot play this game: --allow-absent does not seat it either

    def message(self) -> str:
        """The failure in a few lines: the bot and what happened, its stderr's tail, its log."""
        lines = [f"bot {self.name!r} {self.reason}"]
        if self.stderr:
            lines.append("  last lines of its stderr:")
            lines.extend(f"  | {line}" for line in self.stderr)
        if self.log_path is not None:
            lines.append(f"  log: {self.log_path}")
        return "\n".join(lines)
