"""A referee process that starts managed bots, prints their pids, then plays or waits.

Usage: serve_bots.py N (wait|play) — used by the no-orphan tests, which kill it.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

from server.arena import Arena
from tests.server.conftest import RANDOM_BOT


async def main(count: int, mode: str) -> None:
    async with Arena(log_dir=tempfile.mkdtemp()) as arena:
        bots = []
        for i in range(count):
            token = arena.register(f"bot{i}")
            bot = await arena.spawn(f"bot{i}", RANDOM_BOT, token)
            bots.append(arena.identity(token))
            print(bot.pid, flush=True)
        print("ready", flush=True)
        if mode == "play":
            record = await arena.play("knaves", bots, seed=1)
            print(record.status, flush=True)
        else:
            await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
