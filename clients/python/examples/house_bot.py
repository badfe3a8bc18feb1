"""A house bot of known strength: a game's rule bot that plays a random legal action at a rate.

Usage: house_bot.py GAME NOISE [SEED] [--server S --token T]. NOISE 0 is the rule bot
(e.g. knaves_bot.py), NOISE 1 plays uniformly random legal actions.
"""

import importlib
import random
import sys
from collections.abc import Callable

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

KEPT_MATCHES = 256  # random streams of recent (match, seat)s; older matches are over


def noisy(
    decide: Callable[[DecisionRequest], str], noise: float, seed: int
) -> Callable[[DecisionRequest], str]:
    """decide, but a uniformly random legal action with probability noise."""
    streams: dict[tuple[str, int], random.Random] = {}

    def choose(request: DecisionRequest) -> str:
        # One stream per match and seat, seeded by the request's random_seed (which follows
        # the schedule, never a database id), so a match plays the same whatever the process
        # played before it and in whichever database: a resumed `cardshark compare` or the
        # same seeded tournament replays exactly.
        key = (request.match_id, request.seat)
        rng = streams.get(key)
        if rng is None:
            rng = streams[key] = random.Random(f"{seed}:{request.random_seed}")
            if len(streams) > KEPT_MATCHES:
                del streams[next(iter(streams))]
        if rng.random() < noise:
            return rng.choice(request.legal_actions).id
        return decide(request)

    return choose


def main() -> None:
    """Read GAME NOISE [SEED], leave the rest to the SDK's --server/--token parsing."""
    args = sys.argv[1:]
    positional = []
    while args and not args[0].startswith("-") and len(positional) < 3:
        positional.append(args.pop(0))
    if len(positional) < 2:
        sys.exit("usage: house_bot.py GAME NOISE [SEED] [--server S] [--token T]")
    game, noise = positional[0], float(positional[1])
    seed = int(positional[2]) if len(positional) > 2 else 0
    if not 0.0 <= noise <= 1.0:
        sys.exit(f"house_bot.py: NOISE must be from 0 to 1, not {positional[1]}")
    rules = importlib.import_module(f"{game.replace('-', '_')}_bot")
    sys.argv = [sys.argv[0], *args]
    run(noisy(rules.decide, noise, seed), name=f"{game}-house-noise{noise:g}", games=[game])


if __name__ == "__main__":
    main()
