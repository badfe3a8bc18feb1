"""A bot that thinks 40 ms before each random legal action: matches long enough to kill a
worker in the middle of one. `slow_bot.py N` thinks only before the first N decisions of its
process, then answers at once: the match in play when a test kills its worker is slow, the
matches replayed after it are not."""

import sys
import time

from seeded import pick

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

DELAY_S = 0.04
SLOW_DECISIONS = int(sys.argv.pop(1)) if len(sys.argv) > 1 and sys.argv[1].isdigit() else None
decided = 0


def decide(request: DecisionRequest) -> str:
    """Wait (while still slow), then any legal action."""
    global decided
    decided += 1
    if SLOW_DECISIONS is None or decided <= SLOW_DECISIONS:
        time.sleep(DELAY_S)
    return pick(request)


if __name__ == "__main__":
    run(decide, name="slow")
