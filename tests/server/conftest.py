"""Fixtures for referee tests: a live server with managed bot processes."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
RANDOM_BOT = [PYTHON, str(ROOT / "clients" / "python" / "examples" / "random_bot.py")]
HOSTILE_BOT = [PYTHON, str(ROOT / "tests" / "server" / "bots" / "hostile.py")]
# How managed bots reach the referee; tests of faults and full matches run over both.
TRANSPORTS = ("grpc", "local")
