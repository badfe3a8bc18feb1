"""Whether the engines run compiled by mypyc or as pure Python, and why.

`python -m games._build` (which `pip install -e .` runs, see setup.py) compiles the modules in
`COMPILED` into extension modules beside their sources and records the SHA-256 of each source
it compiled in `games/_compiled.json`; where it cannot compile, the record says why. `select()`
runs once, from `games/__init__`, before any engine is imported. The extension modules are
used only when the record names this interpreter's ABI and every source still hashes as
recorded; otherwise a finder loads every module of the set from its .py file, so an edited
source never runs stale native code and compiled and pure modules are never mixed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
RECORD = HERE / "_compiled.json"
PURE_ENV = "CARDSHARK_PURE_PYTHON"
REBUILD = "python -m games._build"
# One mypyc group (calls between its modules are native): the engines and what they import.
# Not compiled: games/__init__, this module, the builder and the registry (it only imports).
COMPILED = (
    "base",
    "cards",
    "errors",
    "kansas_city",
    "kill",
    "kill_cards",
    "kill_infer",
    "knaves",
    "knives",
    "ninja_whist",
)
# The group's shared library, games/_engines__mypyc.<suffix>, which each module's stub loads.
GROUP = "games._engines"
SHARED_LIB = "_engines__mypyc"
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


@dataclass(frozen=True)
class EngineBuild:
    """How games/ runs in this process: compiled, or pure Python, with the reason."""

    compiled: bool
    detail: str  # "mypyc 1.x" when compiled, else why not

    def describe(self) -> str:
        """One line: `compiled (mypyc 1.x)` or `pure Python (why)`."""
        return f"compiled ({self.detail})" if self.compiled else f"pure Python ({self.detail})"


def source_digests(root: Path = HERE) -> dict[str, str]:
    """The SHA-256 of each compiled module's source."""
    return {n: hashlib.sha256((root / f"{n}.py").read_bytes()).hexdigest() for n in COMPILED}


def extension_files(root: Path = HERE) -> list[Path]:
    """The extension modules a build leaves for this interpreter, shared library first."""
    return [root / f"{name}{SUFFIX}" for name in (SHARED_LIB, *COMPILED)]


def judge(honour_env: bool = True, root: Path = HERE) -> EngineBuild:
    """Whether the compiled modules under root may be used, from its record and sources."""
    if honour_env and os.environ.get(PURE_ENV, "") not in ("", "0"):
        return EngineBuild(False, f"{PURE_ENV} is set")
    record_file = root / RECORD.name
    try:
        record = json.loads(record_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return EngineBuild(False, f"not compiled: no build record; `{REBUILD}` compiles it")
    except (OSError, ValueError) as exc:
        return EngineBuild(False, f"unreadable build record {record_file}: {exc}")
    if not isinstance(record, dict):
        return EngineBuild(False, f"unreadable build record {record_file}")
    if record.get("error"):
        return EngineBuild(False, str(record["error"]))
    if record.get("suffix") != SUFFIX:
        built = record.get("suffix")
        return EngineBuild(False, f"compiled for another Python ({built}, this one is {SUFFIX})")
    missing = [p.name for p in extension_files(root) if not p.exists()]
    if missing:
        return EngineBuild(False, f"incomplete build: games/{missing[0]} is missing")
    recorded = record.get("sources")
    changed = [
        name
        for name, digest in source_digests(root).items()
        if not isinstance(recorded, dict) or recorded.get(name) != digest
    ]
    if changed:
        return EngineBuild(
            False, f"stale build: games/{changed[0]}.py changed since; `{REBUILD}` recompiles"
        )
    return EngineBuild(True, f"mypyc {record.get('mypyc', '?')}")


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Loads the compiled set from its .py files (extension modules would win otherwise)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """The source file's spec for a module of the compiled set, else None (not ours)."""
        package, _, name = fullname.rpartition(".")
        if package != __package__ or name not in COMPILED:
            return None
        return importlib.util.spec_from_file_location(fullname, HERE / f"{name}.py")


def select() -> EngineBuild:
    """Decide for this process (before any engine is imported): compiled when current, else
    pure Python with every module of the set loaded from source."""
    build = judge()
    if not build.compiled and not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
    return build
