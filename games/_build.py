"""Compile the engines with mypyc beside their sources: `python -m games._build [--force]`.

`pip install -e .` runs it (setup.py); run it by hand after editing an engine, or the engines
run as pure Python until then (games/_native.py checks every source's hash at import). It
never fails: without a C compiler, Python's headers or mypyc, or when the build fails, it
leaves no extension modules and records why, and the engines run as pure Python. The
compiler's output goes to build/mypyc/build.log.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import shutil
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from games._native import (
    COMPILED,
    GROUP,
    HERE,
    RECORD,
    SUFFIX,
    EngineBuild,
    extension_files,
    judge,
    source_digests,
)

ROOT = HERE.parent
BUILD_DIR = ROOT / "build" / "mypyc"
LOG = BUILD_DIR / "build.log"


def compiler_problem() -> str | None:
    """Why no extension module can be built here (no C compiler, headers or mypyc), or None."""
    cc = os.environ.get("CC") or str(sysconfig.get_config_var("CC") or "cc")
    words = shlex.split(cc) or ["cc"]
    if shutil.which(words[0]) is None:
        return f"no C compiler: {words[0]} not found"
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.exists():
        return f"no Python headers: {header} not found"
    try:
        import mypyc.build  # noqa: F401
    except ImportError as exc:
        return f"mypyc not installed ({exc})"
    return None


def _remove_artefacts() -> None:
    # Unlinked, not overwritten: a process that has one loaded keeps its copy.
    for path in (*extension_files(), RECORD):
        path.unlink(missing_ok=True)


def _write_record(record: dict[str, Any]) -> None:
    tmp = RECORD.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    tmp.replace(RECORD)


@contextlib.contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """Send this process's and its children's (the compiler's) stdout and stderr to log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(log, "w", encoding="utf-8") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])


def _compile() -> None:
    """mypycify the set and build it in place (raises, or exits, when it cannot)."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    with contextlib.chdir(ROOT):
        extensions = mypycify(
            [f"games/{name}.py" for name in COMPILED],
            group_name=GROUP,
            target_dir=str(BUILD_DIR.relative_to(ROOT)),
        )
        dist = Distribution({"name": "cardshark-engines", "ext_modules": extensions})
        command = dist.get_command_obj("build_ext")
        command.inplace = True
        command.build_temp = str(BUILD_DIR / "temp")
        command.build_lib = str(BUILD_DIR / "lib")
        dist.run_command("build_ext")


def build(force: bool = False) -> EngineBuild:
    """Compile the engines unless a current build is here; say how they will run."""
    current = judge(honour_env=False)
    if current.compiled and not force:
        return current
    _remove_artefacts()
    problem = compiler_problem()
    if problem is not None:
        _write_record({"error": problem})
        return judge(honour_env=False)
    sources = source_digests()  # before mypyc reads them: an edit during the build reads stale
    try:
        with _output_to(LOG):
            _compile()
    except (Exception, SystemExit) as exc:
        _remove_artefacts()
        if isinstance(exc, SystemExit):  # mypyc reports errors, then exits
            reason = f"mypyc stopped with status {exc.code}"
        else:
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        _write_record({"error": f"mypyc build failed: {reason}; see {LOG}"})
        return judge(honour_env=False)
    from mypy.version import __version__ as mypyc_version

    _write_record({"mypyc": mypyc_version, "suffix": SUFFIX, "sources": sources})
    return judge(honour_env=False)


def main(argv: list[str] | None = None) -> None:
    """Build, then print one line: how the engines run now."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even if current")
    args = parser.parse_args(argv)
    start = time.monotonic()
    result = build(force=args.force)
    print(f"engines: {result.describe()} [{time.monotonic() - start:.0f} s]")


if __name__ == "__main__":
    main()
