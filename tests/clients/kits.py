"""The client kits' example bots as commands, built on first use (npm ci; cmake).

A missing toolchain fails the test that needs it with the Debian packages to install;
nothing is skipped. Builds hold a lock, so parallel test workers do not race.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
NODE_DIR = CLIENTS / "node"
CPP_DIR = CLIENTS / "cpp"
CPP_BUILD = CPP_DIR / "build"
PYTHON = sys.executable

KITS = ["python", "node", "cpp", "perl-bridge"]
APT = "apt-get install -y"
NODE_PACKAGES = "nodejs npm"
CPP_PACKAGES = "libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev cmake g++ pkg-config"


def require(tools: list[str], packages: str) -> None:
    """Fail (never skip) when a tool is missing, naming the packages that provide it."""
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(
            f"toolchain missing: {', '.join(missing)} not on PATH; install it with: "
            f"{APT} {packages}",
            pytrace=False,
        )


def run_step(command: list[str], cwd: Path, what: str, timeout: float = 900) -> None:
    """Run a build step; fail with its output when it fails."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        output = (done.stdout + done.stderr).strip()[-6000:]
        pytest.fail(f"{what} failed (exit {done.returncode}): {' '.join(command)}\n{output}")


@contextlib.contextmanager
def build_lock() -> Iterator[None]:
    key = hashlib.sha1(str(ROOT).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"cardshark-kits-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_node() -> None:
    """node and npm present, the kit's dependencies installed (npm ci) if they are not."""
    require(["node", "npm"], NODE_PACKAGES)
    with build_lock():
        if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
            run_step(["npm", "ci", "--no-audit", "--no-fund"], NODE_DIR, "npm ci of the Node kit")


def ensure_cpp() -> Path:
    """The C++ example bot, configured once and rebuilt incrementally (new .proto files too)."""
    require(["cmake", "g++", "pkg-config", "protoc", "grpc_cpp_plugin"], CPP_PACKAGES)
    with build_lock():
        if not (CPP_BUILD / "CMakeCache.txt").exists():
            run_step(["cmake", "-S", str(CPP_DIR), "-B", str(CPP_BUILD)], ROOT, "cmake configure")
        run_step(["cmake", "--build", str(CPP_BUILD), "-j2"], ROOT, "cmake build of the C++ kit")
    return CPP_BUILD / "random_bot"


def kit_commands() -> dict[str, list[str]]:
    """The command that runs each kit's example bot (random legal actions), built first."""
    ensure_node()
    cpp_bot = ensure_cpp()
    require(["perl"], "perl")
    return {
        "python": [PYTHON, str(CLIENTS / "python" / "examples" / "random_bot.py")],
        "node": ["node", str(NODE_DIR / "examples" / "random_bot.js")],
        "cpp": [str(cpp_bot)],
        "perl-bridge": [PYTHON, "-m", "cardshark_bot.bridge", "--"]
        + ["perl", str(CLIENTS / "perl" / "random_bot.pl")],
    }
