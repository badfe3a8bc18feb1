"""The interpreters and compilers a bot or its build can use on this server, with versions.

A program counts when the sandbox's PATH finds it (/usr/local/bin, /usr/bin, /bin) and it
resolves inside a system directory the sandbox mounts (SYSTEM_DIRS): what the server's own
PATH finds elsewhere (a ~/.cargo/bin, say) is listed as not offered. `python3` is the server's
own Python, which the sandbox mounts and puts first on a bot's PATH, with the Python kit, grpcio
and protobuf. See docs/submitting.md.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from server.bots.sandbox import CLIENTS_DIR, SYSTEM_DIRS

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
VERSION_TIMEOUT_S = 10.0

# (program, kind, the arguments that print its version, text given on stdin): the usual
# languages of bot authors, in the order they are listed.
CANDIDATES: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("python3", "interpreter", ("--version",), ""),
    ("node", "interpreter", ("--version",), ""),
    ("g++", "compiler", ("--version",), ""),
    ("gcc", "compiler", ("--version",), ""),
    ("perl", "interpreter", ("--version",), ""),
    ("clang++", "compiler", ("--version",), ""),
    ("clang", "compiler", ("--version",), ""),
    ("java", "interpreter", ("-version",), ""),
    ("javac", "compiler", ("-version",), ""),
    ("go", "compiler", ("version",), ""),
    ("rustc", "compiler", ("--version",), ""),
    ("cargo", "compiler", ("--version",), ""),
    ("ruby", "interpreter", ("--version",), ""),
    ("lua", "interpreter", ("-v",), ""),
    ("lua5.4", "interpreter", ("-v",), ""),
    ("luajit", "interpreter", ("-v",), ""),
    ("php", "interpreter", ("--version",), ""),
    ("pypy3", "interpreter", ("--version",), ""),
    ("tclsh", "interpreter", (), "puts [info patchlevel]\n"),
    ("ghc", "compiler", ("--version",), ""),
    ("ocamlfind", "compiler", ("-version",), ""),
    ("ocaml", "interpreter", ("-version",), ""),
    ("dotnet", "compiler", ("--version",), ""),
    ("kotlinc", "compiler", ("-version",), ""),
    ("scala", "interpreter", ("-version",), ""),
    ("julia", "interpreter", ("--version",), ""),
    ("Rscript", "interpreter", ("--version",), ""),
    ("dart", "compiler", ("--version",), ""),
    ("swift", "compiler", ("--version",), ""),
    ("gfortran", "compiler", ("--version",), ""),
    ("fpc", "compiler", ("-iV",), ""),
    ("nim", "compiler", ("--version",), ""),
    ("zig", "compiler", ("version",), ""),
    ("sbcl", "interpreter", ("--version",), ""),
    ("guile", "interpreter", ("--version",), ""),
    ("elixir", "interpreter", ("--version",), ""),
    ("deno", "interpreter", ("--version",), ""),
    ("bun", "interpreter", ("--version",), ""),
    ("bash", "interpreter", ("--version",), ""),
)


@dataclass(frozen=True)
class Runtime:
    """One interpreter or compiler found here."""

    name: str
    kind: str  # "interpreter" or "compiler"
    path: str  # where the PATH found it
    version: str  # the first line its version option printed ("" if none)
    offered: bool  # a sandboxed bot or build can run it

    def as_dict(self) -> dict[str, Any]:
        """The runtime as JSON-ready fields."""
        return asdict(self)


def _inside_sandbox(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d.rstrip("/") + "/") for d in SYSTEM_DIRS)


def version_line(path: str, args: tuple[str, ...], stdin: str = "") -> str:
    """The first non-empty line a program prints for its version (stdout, else stderr)."""
    try:
        done = subprocess.run(
            [path, *args],
            input=stdin,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=VERSION_TIMEOUT_S,
            env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8", "HOME": "/nonexistent"},
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    for text in (done.stdout, done.stderr):
        for line in text.splitlines():
            if line.strip():
                return " ".join(line.split())
    return ""


def find_runtimes(server_path: str | None = None) -> list[Runtime]:
    """Every candidate found on the sandbox's PATH, then those only server_path finds."""
    found: list[tuple[str, str, str, tuple[str, ...], str, bool]] = []
    kit = kit_python()
    for name, kind, args, stdin in CANDIDATES:
        if name == "python3" and kit:
            continue  # the sandbox's PATH finds the server's Python first (clean_environment)
        path = shutil.which(name, path=SANDBOX_PATH)
        offered = path is not None and _inside_sandbox(path)
        if path is None or not offered:
            path = shutil.which(name, path=server_path or os.environ.get("PATH", ""))
        if path is not None:
            found.append((name, kind, path, args, stdin, offered))
    with ThreadPoolExecutor(max_workers=8) as pool:
        versions = list(pool.map(lambda f: version_line(f[2], f[3], f[4]), found))
    runtimes = []
    seen: set[tuple[str, str]] = set()
    for (name, kind, path, _, _, offered), version in zip(found, versions, strict=True):
        same = (os.path.realpath(path), version)
        if same not in seen:  # not another name for one already listed (lua and lua5.4)
            seen.add(same)
            runtimes.append(Runtime(name, kind, path, version, offered))
    runtimes = kit + runtimes
    return sorted(runtimes, key=lambda r: not r.offered)


def kit_python() -> list[Runtime]:
    """The server's own interpreter, if the Python kit (cardshark_bot) is installed in it."""
    if importlib.util.find_spec("cardshark_bot") is None:
        return []
    version = f"Python {platform.python_version()} with the kit (cardshark_bot, grpcio)"
    return [Runtime("python3", "interpreter", sys.executable, version, True)]


def kits_directory() -> str:
    """Where the bot kits are, mounted read-only in every sandbox."""
    return str(CLIENTS_DIR)
