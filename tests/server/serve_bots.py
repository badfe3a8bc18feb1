"""A referee process that starts managed bots, prints their pids, then plays or waits.

Usage: serve_bots.py N (wait|play) [sandbox] — used by the no-orphan tests, which kill it.
Sandboxed, each bot first starts a setsid child that sleeps forever (SLEEPER on its line).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile

from server.bots.sandbox import NO_SANDBOX, SandboxPolicy
from server.play.arena import Arena
from tests.server.conftest import RANDOM_BOT

SLEEPER = "987654322"
ESCAPING_BOT = ["/bin/sh", "-c", f'setsid sleep {SLEEPER} & exec "$0" "$@"', *RANDOM_BOT]


async def main(count: int, mode: str, sandboxed: bool) -> None:
    policy = SandboxPolicy() if sandboxed else NO_SANDBOX
    async with Arena(log_dir=tempfile.mkdtemp(), sandbox=policy) as arena:
        bots = []
        for i in range(count):
            token = arena.register(f"bot{i}")
            bot = await arena.spawn(f"bot{i}", ESCAPING_BOT if sandboxed else RANDOM_BOT, token)
            bots.append(arena.identity(token))
            print(bot.pid, flush=True)
        assert arena.running is not None
        for identity in bots:  # ready: every bot has connected and said Hello
            assert await arena.running.hub.wait_for(identity.bot_id, 30) is not None
        print("ready", flush=True)
        if mode == "play":
            record = await arena.play("knaves", bots, seed=1)
            print(record.status, flush=True)
        else:
            await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3:] == ["sandbox"]))
