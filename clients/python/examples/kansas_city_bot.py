"""A rule-following Kansas City bot: win cheap tricks until it has 3 (2 with five), then duck."""

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

SUIT = {name: name[0].upper() for name in ("red", "orange", "yellow", "green", "blue", "purple")}
SUIT["black"] = "K"  # "B" is blue


def number(card: str) -> int:
    """The number of a plain face ("3R") or a trump code ("T3")."""
    return int(card[1:]) if card[0] == "T" else int(card[0])


def beats(card: str, best: str, led: str) -> bool:
    """True if card beats the trick's current best card (led: suit letter, or "T" for trump)."""
    if card[0] == "T":
        return best[0] != "T" or number(card) > number(best)
    return best[0] != "T" and card[1] == led and number(card) > number(best)


def strength(card: str) -> tuple[bool, int]:
    """Trumps above plain cards, then by number."""
    return card[0] == "T", number(card)


def decide(request: DecisionRequest) -> str:
    """Pass high cards, upgrade only while short of tricks, win cheaply until the target."""
    view = request.kansas_city
    legal = request.legal_actions
    cards = [a.card for a in legal if a.card]
    if not cards:
        return legal[0].id
    target = 3 if len(view.players) == 4 else 2
    need = target - view.tricks_won[view.seat] if view.tricks_won else target
    if view.phase == "pass":
        return "pass:" + max(cards, key=number)
    if view.phase == "upgrade":
        if need > len(view.trumps):
            return "upgrade:" + max(cards, key=number)
        return "none" if any(a.id == "none" for a in legal) else legal[0].id
    trick = [p.card for p in view.trick]
    if not trick:
        pick = max if need > 0 else min
        return "play:" + pick(cards, key=strength)
    led = SUIT.get(view.led, "T")
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, led):
            best = card
    winners = [c for c in cards if beats(c, best, led)]
    losers = [c for c in cards if c not in winners]
    if need > 0 and winners:
        return "play:" + min(winners, key=strength)
    if losers:
        return "play:" + (min if need > 0 else max)(losers, key=strength)
    return "play:" + max(winners, key=strength)


if __name__ == "__main__":
    run(decide, name="kansas-city-rules", games=["kansas-city"])
