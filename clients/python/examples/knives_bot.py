"""A rule-following Knives bot: pick trump-rich hands, bank stars, win tricks for its side."""

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

LETTER = {"spades": "S", "clubs": "C", "diamonds": "D", "hearts": "H", "knives": "K"}
TRAD = "GTMJQK"  # traditional ranks, low to high


def stars(card: str) -> int:
    """Kings 3, Queens 2, Jacks 1, the Ace of Knives 1."""
    return 1 if card == "AK" else 0 if card[1] == "K" else {"K": 3, "Q": 2, "J": 1}.get(card[0], 0)


def power(card: str, strong: str, led: str) -> int:
    """Trick-taking power: Joker, Knives, strong suit, led suit (the Ghost rule is ignored)."""
    if card == "JO":
        return 100
    rank = (8 if card[0] == "A" else int(card[0])) if card[1] == "K" else TRAD.index(card[0])
    base = {led: 40, strong: 60, "K": 80}.get(card[1], -rank)
    return base + rank


def strength(hand: list[str], strong: str) -> int:
    """Trumps count 1, the Joker, Ace and 7 of Knives and the strong King count 2."""
    top = {"JO", "AK", "7K", "K" + strong}
    return sum(2 if c in top else 1 for c in hand if power(c, strong, "") >= 60)


def decide(request: DecisionRequest) -> str:
    """Bid and bank by trump strength; in play win cheaply against foes, feed stars to friends."""
    view = request.knives
    ids = [a.id for a in request.legal_actions]
    hand = list(view.hand)
    strong = LETTER.get(view.strong_suit, "S")
    if "pick" in ids and (len(ids) == 1 or strength(hand, strong) >= 3):
        return "pick"
    suits = [a for a in request.legal_actions if a.suit]
    if suits:  # declare, or pass naming the suit that suits this hand best
        return max(suits, key=lambda a: strength(hand, LETTER[a.suit])).id
    for choice in ("pass", "no_solo", "leaster", "done"):
        if choice in ids:
            return choice
    cards = [a.card for a in request.legal_actions if a.card]
    if view.phase == "bank":
        return "bank:" + max(
            cards, key=lambda c: (power(c, strong, "") < 60, stars(c), -power(c, strong, ""))
        )
    if not cards:
        return ids[0]
    trick, led = list(view.trick), LETTER.get(view.led_suit, "")
    me, banker, shadow = view.seat, view.banker, view.shadow
    if view.mode != "banker":
        friends: set[int] = set()
    elif me == banker:
        friends = {shadow} - {-1}
    elif (me == shadow or "G" + strong in hand) and not view.solo_announced:
        friends = {banker}
    else:
        friends = set(range(5)) - {me, banker, shadow}
    if not trick:
        top = max(cards, key=lambda c: power(c, strong, c[1]))
        if view.mode != "leaster" and top in ("JO", "AK"):
            return "play:" + top
        return "play:" + min(cards, key=lambda c: (stars(c), power(c, strong, c[1])))
    now = [power(c, strong, led) for c in trick]
    winner = (view.leader + now.index(max(now))) % 5
    wins = [c for c in cards if power(c, strong, led) > max(now)]
    loses = [c for c in cards if c not in wins]
    if view.mode == "leaster":
        if loses:
            return "play:" + max(loses, key=lambda c: (stars(c), power(c, strong, led)))
        return "play:" + max(wins, key=lambda c: (-stars(c), power(c, strong, led)))
    if winner in friends:
        return "play:" + max(cards, key=lambda c: (stars(c), -power(c, strong, led)))
    if wins:
        return "play:" + min(wins, key=lambda c: power(c, strong, led))
    return "play:" + min(loses, key=lambda c: (stars(c), power(c, strong, led)))


if __name__ == "__main__":
    run(decide, name="knives-rules", games=["knives"])
