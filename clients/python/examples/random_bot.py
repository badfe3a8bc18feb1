"""A cardshark bot that plays a uniformly random legal action in every game."""

import random

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run


def decide(request: DecisionRequest) -> str:
    """Any legal action will do."""
    return random.choice(request.legal_actions).id


if __name__ == "__main__":
    run(decide, name="random")
