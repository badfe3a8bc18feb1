"""A managed bot that floods the referee in its last match, then stops reading until its stop.

Usage: flood_last.py MATCHES [COUNT]; CARDSHARK_SERVER=fd:N and CARDSHARK_TOKEN as for any
managed bot (local transport only). It plays random legal actions (seeded) until the first
request of its MATCHES-th match; there it writes COUNT (default 10,000) Decision frames with
request ids the referee never issued and stops reading: every one is a fault whose notice
piles up unread on the server's side, so the server closes the stream with data still queued.
On SIGTERM (the server's stop) it reads everything to the end, so the server's queue flushes
after its close and before it drops the connection: the state that once crashed the stop path.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys

from cardshark.v1 import referee_pb2 as pb
from cardshark_bot.local import frame, open_link, parse_fd

MATCHES = int(sys.argv[1])
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
UNKNOWN_ID = 2_000_000_000  # far above any id the referee issues in a test run


async def main() -> None:
    random.seed(MATCHES)
    fd = parse_fd(os.environ["CARDSHARK_SERVER"])
    assert fd is not None, "the local transport only"
    loop = asyncio.get_running_loop()
    matches: list[str] = []

    def on_message(msg: pb.RefereeMessage) -> None:
        if msg.WhichOneof("kind") != "request":
            return
        req = msg.request
        first = req.match_id not in matches
        if first:
            matches.append(req.match_id)
        if first and len(matches) == MATCHES:
            flood = b"".join(
                frame(pb.BotMessage(decision=pb.Decision(request_id=UNKNOWN_ID + i, action_id="x")))
                for i in range(COUNT)
            )
            link.write_raw(flood)
            assert link.transport is not None
            link.transport.pause_reading()
            loop.add_signal_handler(signal.SIGTERM, link.transport.resume_reading)
            return
        action = random.choice(req.legal_actions).id
        link.send(pb.BotMessage(decision=pb.Decision(request_id=req.request_id, action_id=action)))

    link = await open_link(fd, on_message)
    link.send(
        pb.BotMessage(hello=pb.Hello(token=os.environ["CARDSHARK_TOKEN"], protocol_version=1))
    )
    await link.done  # the server closed the socket: read to its end


if __name__ == "__main__":
    asyncio.run(main())
