"""Managed bot processes: environment, own process group, capped stderr log, reaped."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from server.bots.process import LOG_CAP_BYTES, ManagedBot

NOISY = (
    "import os, sys; sys.stderr.write(os.environ['CARDSHARK_SERVER'] + ' ' "
    "+ os.environ['CARDSHARK_TOKEN'] + '\\n'); sys.stderr.write('x' * 1_000_000); "
    "sys.stderr.flush(); import time; time.sleep(60)"
)


def test_stderr_is_capped_env_is_set_and_the_group_is_reaped(tmp_path: Path) -> None:
    async def run() -> tuple[int, int | None, str]:
        bot = ManagedBot("noisy", [sys.executable, "-c", NOISY], tmp_path / "noisy.log")
        await bot.start("127.0.0.1:4242", "tok123")
        assert bot.pid is not None
        pgid = os.getpgid(bot.pid)
        for _ in range(100):
            if (tmp_path / "noisy.log").exists() and (
                tmp_path / "noisy.log"
            ).stat().st_size >= LOG_CAP_BYTES:
                break
            await asyncio.sleep(0.05)
        code = await bot.stop(timeout=1.0)
        return pgid, code, (tmp_path / "noisy.log").read_text()

    pgid, code, log = asyncio.run(run())
    assert pgid != os.getpgid(0), "the bot must run in its own process group"
    assert code is not None
    assert log.startswith("127.0.0.1:4242 tok123\n")
    assert log.endswith("[cardshark: log capped here]\n")
    assert len(log.encode()) <= LOG_CAP_BYTES + 64
