"""A bot that plays legally except once: its Nth request with a choice gets an illegal card.

Usage: one_illegal.py LOG [N] (default N 5), then the kit's own options; CARDSHARK_SERVER and
CARDSHARK_TOKEN as for any bot. The request it answered illegally goes to LOG (hex of the
serialized DecisionRequest) before the answer is sent.
"""

from __future__ import annotations

import sys

from seeded import pick

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

LOG = sys.argv.pop(1)
AT = int(sys.argv.pop(1)) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 5
CARDS = [rank + suit for suit in "SHDC" for rank in "23456789TJQKA"]
choices = 0


def decide(request: DecisionRequest) -> str:
    """A random legal action, except at the AT-th choice: a card that is not legal."""
    global choices
    legal = [a.id for a in request.legal_actions]
    if len(legal) > 1:
        choices += 1
        if choices == AT:
            with open(LOG, "w") as log:
                log.write(request.SerializeToString().hex())
            return next(f"play:{c}" for c in CARDS if f"play:{c}" not in legal)
    return pick(request)


if __name__ == "__main__":
    run(decide, name="one-illegal")
