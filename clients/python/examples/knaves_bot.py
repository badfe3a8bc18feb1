"""A rule-following Knaves bot: take tricks cheaply, never win a trick holding a Jack penalty."""

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

RANKS = "23456789TJQKA"
RANK = {rank: i for i, rank in enumerate(RANKS)}  # a card's rank, low to high
PENALTY = {"JH": 4, "JD": 3, "JC": 2, "JS": 1}


def beats(card: str, best: str, trump: str) -> bool:
    """True if card beats the trick's current best card."""
    if card[1] == best[1]:
        return RANK[card[0]] > RANK[best[0]]
    return card[1] == trump


def decide(request: DecisionRequest) -> str:
    """Lead high non-Jacks; follow with the cheapest card that wins a clean trick, else shed."""
    view = request.knaves
    cards = [a.card for a in request.legal_actions]
    by_rank = sorted(cards, key=lambda c: (c in PENALTY, RANK[c[0]]))
    trick = list(view.trick)
    if not trick:
        safe = [c for c in cards if c not in PENALTY]
        return "play:" + max(safe or cards, key=lambda c: RANK[c[0]])
    trump = view.trump
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, trump):
            best = card
    last = len(trick) == 2
    taken = sum(PENALTY.get(c, 0) for c in trick)  # the penalty already in the trick
    for card in by_rank:
        cost = taken + PENALTY.get(card, 0)
        if beats(card, best, trump) and cost < 1 and (last or RANK[card[0]] >= 10):
            return "play:" + card
    losing = [c for c in cards if not beats(c, best, trump)]
    pool = losing or by_rank
    return "play:" + max(pool, key=lambda c: (c in PENALTY, RANK[c[0]]))


if __name__ == "__main__":
    run(decide, name="knaves-rules", games=["knaves"])
