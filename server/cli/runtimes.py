"""`cardshark runtimes`: the interpreters and compilers bots and their builds can use here."""

from __future__ import annotations

import json

from server.bots.runtimes import find_runtimes, kits_directory
from server.cli.common import JsonOption

WIDTH = 80


def _fit(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def runtimes_command(as_json: JsonOption = False) -> None:
    """List the interpreters and compilers found here, with their versions."""
    found = find_runtimes()
    if as_json:
        print(json.dumps([r.as_dict() for r in found], indent=2))
        return
    if not found:
        print("no interpreter or compiler found on the sandbox's PATH")
        return
    width = max(len(r.name) for r in found)
    hidden = [r for r in found if not r.offered]
    for runtime in found:
        if runtime.offered:
            version = runtime.version or "(no version printed)"
            print(_fit(f"{runtime.name:<{width}}  {version}"))
    print()
    print(_fit(f"The bot kits, read-only in the sandbox: {kits_directory()}"))
    if hidden:
        print()
        print("Found on the server's PATH but outside the sandbox (bots cannot run them):")
        for runtime in hidden:
            print(_fit(f"{runtime.name:<{width}}  {runtime.path}"))
