"""A cardshark bot that plays a uniformly random legal action in every game.

Its randomness comes from each request's random_seed, one stream per match and seat, so a
seeded tournament replays the same moves wherever it is played.
"""

import random

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

KEPT_MATCHES = 256  # streams of recent (match, seat)s; older matches are over
streams: dict[tuple[str, int], random.Random] = {}


def decide(request: DecisionRequest) -> str:
    """Any legal action will do."""
    key = (request.match_id, request.seat)
    rng = streams.get(key)
    if rng is None:
        rng = streams[key] = random.Random(request.random_seed)
        if len(streams) > KEPT_MATCHES:
            del streams[next(iter(streams))]
    return rng.choice(request.legal_actions).id


if __name__ == "__main__":
    run(decide, name="random")
