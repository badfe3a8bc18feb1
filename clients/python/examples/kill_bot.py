"""A rule-following Kill bot: swap toward one colour's 10-J-Q-K, claim wins, kill only on proof."""

from cardshark.v1.kill_pb2 import KillView
from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

RANKS = "A23456789TJQK"


def fits(held: str, drawn: str) -> bool:
    """A drawn card may replace a held one of its suit, of a neighbouring value, or a Joker."""
    if "JK" in (held, drawn):
        return True
    return held[1] == drawn[1] or abs(RANKS.index(held[0]) - RANKS.index(drawn[0])) <= 1


def progress(hand: list[str]) -> tuple[int, int]:
    """Distinct 10/J/Q/K of the best colour plus Jokers, then the largest one-suit group."""
    high = [len({c[0] for c in hand if c[0] in "TJQK" and c[1] in k}) for k in ("HD", "CS")]
    group = max(sum(c[1] == s for c in hand) for s in "HDCS")
    return max(high) + hand.count("JK"), group


def winning(hand: list[str]) -> bool:
    """Four cards: every non-Joker a 10/J/Q/K, one colour, distinct values."""
    return len(hand) == 4 and progress(hand)[0] == 4


def known_hands(view: KillView) -> dict[int, list[str]]:
    """Cards surely in each rival's hand, from public reveals and drawn cards since."""
    known: dict[int, list[str]] = {}
    for e in view.events:
        if e.kind == "kill":
            known[e.target] = list(e.cards)
        elif e.kind == "claim_joker":
            known[e.seat] = list(e.cards) + (["JK"] if e.success else [])
            if e.success and "JK" in known.get(e.target, []):
                known[e.target].remove("JK")
        elif e.kind == "swap":
            known[e.seat] = [c for c in known.get(e.seat, []) if not fits(c, e.card)] + [e.card]
        elif e.kind == "two":
            known[e.seat] = [c for c in known.get(e.seat, []) if c not in e.cards] + [e.card]
            known[e.target] = []
        elif e.kind == "discard":
            known[e.seat] = []
    return known


def decide(request: DecisionRequest) -> str:
    """Show or claim sets, kill only proven winners, grab known Jokers, else draw and swap."""
    view, legal = request.kill, request.legal_actions
    ids = [a.id for a in legal]
    hand = list(view.hand)
    if "show_win" in ids or "claim_win" in ids:
        return "show_win" if "show_win" in ids else "claim_win"
    known = known_hands(view)
    # Hopeless: a rival surely holds a win we cannot kill, or the round nears its turn cap.
    doomed = [p for p, c in known.items() if p != view.seat and winning(c) and view.immune[p]]
    if doomed or view.turns >= 150:
        for way_out in ("show_trio", "claim_trio", "fold"):  # a trio pays more than a fold
            if way_out in ids:
                return way_out
    for a in legal:
        if a.kind == "kill" and winning(known.get(a.seat, [])):
            return a.id
    for a in legal:
        if a.kind == "claim_joker" and "JK" in known.get(a.seat, []):
            return a.id
    if "draw" in ids:
        return "draw"
    # Otherwise pick the decline, swap, two-card exchange or discard leaving the best hand.
    options = {a.id: hand for a in legal if a.kind == "decline"}
    for a in legal:
        if a.kind in ("swap", "two", "discard"):
            rest = list(hand)
            rest.remove(a.card)  # swap and two take the drawn card in, the others leave it
            options[a.id] = rest + ([view.drawn] if a.kind != "discard" else [])
    if options:
        return max(options, key=lambda i: progress(options[i]))
    return "continue" if "continue" in ids else ids[0]


if __name__ == "__main__":
    run(decide, name="kill-rules", games=["kill"])
