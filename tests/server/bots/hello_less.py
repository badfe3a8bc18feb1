"""Connections that never say Hello: N channels, each opening a Play stream every PERIOD s.

Usage: hello_less.py ADDRESS N PERIOD ROUNDS
Each channel has a connection of its own (a local subchannel pool). It prints `ready`, waits
for a line on stdin, then opens ROUNDS streams on every channel, PERIOD s apart, and sends
nothing on them; prints `quiet` once the last round is open and, when every stream has
ended, one line of JSON: how many ended with each status (`message` counts anything the
server sent, which it must not). Its channels stay open, quiet, until stdin closes: a peer
that stopped calling but keeps its sockets.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import AsyncIterator

import grpc

ADDRESS, N, PERIOD, ROUNDS = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
ended: Counter[str] = Counter()


async def silence() -> AsyncIterator[bytes]:
    await asyncio.Event().wait()
    yield b""  # never reached: no message, Hello or other, is ever sent


async def stream(channel: grpc.aio.Channel) -> None:
    call = channel.stream_stream("/cardshark.v1.Referee/Play")(silence())
    try:
        async for _ in call:
            ended["message"] += 1
    except grpc.aio.AioRpcError as err:
        ended[err.code().name] += 1
    else:
        ended["OK"] += 1


async def main() -> None:
    loop = asyncio.get_running_loop()
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(ADDRESS, options=options) for _ in range(N)]
    print("ready", flush=True)
    await loop.run_in_executor(None, sys.stdin.readline)
    start = loop.time()
    calls = []
    for round_ in range(ROUNDS):
        await asyncio.sleep(max(0.0, start + round_ * PERIOD - loop.time()))  # the schedule
        calls += [asyncio.create_task(stream(channel)) for channel in channels]
    print("quiet", flush=True)
    await asyncio.gather(*calls)
    print(json.dumps(ended), flush=True)
    await loop.run_in_executor(None, sys.stdin.read)


asyncio.run(main())
