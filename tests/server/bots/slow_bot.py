"""A bot that thinks 40 ms before each random legal action: matches long enough to kill a
worker in the middle of one."""

import random
import time

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

DELAY_S = 0.04

# Each match's choices come from the seed the referee sends it (DecisionRequest.random_seed):
# the same moves in every run of a seeded tournament.
streams: dict[str, random.Random] = {}


def pick(request: DecisionRequest) -> str:
    """A legal action drawn from this match's own seeded stream."""
    rng = streams.get(request.match_id)
    if rng is None:
        rng = streams[request.match_id] = random.Random(request.random_seed)
    return str(rng.choice(request.legal_actions).id)


def decide(request: DecisionRequest) -> str:
    """Wait, then any legal action."""
    time.sleep(DELAY_S)
    return pick(request)


if __name__ == "__main__":
    run(decide, name="slow")
