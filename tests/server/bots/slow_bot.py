"""A bot that thinks 40 ms before each random legal action: matches long enough to kill a
worker in the middle of one."""

import time

from seeded import pick

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

DELAY_S = 0.04


def decide(request: DecisionRequest) -> str:
    """Wait, then any legal action."""
    time.sleep(DELAY_S)
    return pick(request)


if __name__ == "__main__":
    run(decide, name="slow")
