"""A legal action drawn from the match's own stream, seeded by the referee's
DecisionRequest.random_seed: a test bot plays the same moves in every run of a seeded
tournament. Imported by the test bots beside it (a script's directory is on its path)."""

import random

from cardshark.v1.referee_pb2 import DecisionRequest

_streams: dict[str, random.Random] = {}


def pick(request: DecisionRequest) -> str:
    """A legal action drawn from this match's own seeded stream."""
    rng = _streams.get(request.match_id)
    if rng is None:
        rng = _streams[request.match_id] = random.Random(request.random_seed)
    return str(rng.choice(request.legal_actions).id)
