"""A rule-following Ninja Whist bot: bid its likely winners, then win or duck to hit the bid."""

from cardshark.v1.referee_pb2 import DecisionRequest
from cardshark_bot import run

TRUMP = {"sword": "S", "staff": "T", "knives": "N", "stars": "R"}
ICON = {"S": "a", "T": "b", "N": "c", "R": "d"}


def winner(cards: list[str], boosts: list[int], trump: str) -> int:
    """Index of the winning card of a (partial) trick; a led J* at no trump is its own suit."""
    suit = [trump if c == "J*" and trump else c[1] for c in cards]
    keys = []  # rank in the winning suit (W9): triggered Ace, J*, King, 2-9 + boost, Ace
    for card, boost, s in zip(cards, boosts, suit, strict=True):
        ace = "K" + card[1] in cards or (card[1] == trump and "J*" in cards)
        rank = {"A": 1000 * ace, "J": 900, "K": 800}.get(card[0], -1)
        rank = int(card[0]) + boost if rank < 0 else rank
        keys.append(rank if s == (trump if trump in suit else suit[0]) else -1)
    return keys.index(max(keys))  # first of equals: ties go to the card played first


def strength(card: str, trump: str) -> int:
    """How likely a card is to take a trick, for leading and shedding."""
    rank = {"J": 20, "K": 15, "A": 5}.get(card[0]) or int(card[0])
    return rank + 10 * (card[1] == trump)


def worth(card: str, hand: list[str], trump: str) -> float:
    """Rough chance that a card wins a trick, for bidding."""
    if card == "J*" or (card[0] == "K" and "A" + card[1] in hand):
        return 0.9
    if card[0] in "AK":
        return {"A": 0.15, "K": 0.55}[card[0]] + 0.25 * (card[1] == trump)
    return (int(card[0]) - 1) / 12 if card[1] == trump else 0.05 * (card[0] in "89")


def decide(request: DecisionRequest) -> str:
    """Bid, play, boost and take by simple rules; always a legal id."""
    view, legal = request.ninja_whist, request.legal_actions
    ids = [a.id for a in legal]
    trump, me = TRUMP.get(view.trump, ""), view.seat
    if view.phase == "bid":
        target = sum(worth(c, list(view.hand), trump) for c in view.hand)
        return min((a for a in legal if a.kind == "bid"), key=lambda a: abs(a.number - target)).id
    if view.phase == "take":
        # Take the richest token from a rival; taking one's own token changes nothing.
        theirs = [a for a in legal if a.HasField("seat") and a.token != "blank"]
        return max(theirs, key=lambda a: len(a.token)).id if theirs else ids[0]
    need = view.bids[me] - view.tricks_won[me] if view.bids else 0
    want = need != 0  # short of the bid, or already over it: tricks still bring tokens
    trick, boosts = [p.card for p in view.trick], [p.boost for p in view.trick]
    mine = [t for t in view.score_areas[me].tokens if t != "blank"] if view.score_areas else []

    def wins(card: str, boost: int) -> bool:
        return not trick or winner([*trick, card], [*boosts, boost], trump) == len(trick)

    def spare(card: str) -> int:
        return sum(t.count(ICON[card[1]]) for t in mine) if card[0].isdigit() else 0

    if view.phase == "attach":
        card, icon = view.pending_card, ICON.get(view.pending_card[1:], "")
        boost = sum(t.count(icon) for t in view.pending_tokens)
        if need > 0 and not wins(card, boost) and wins(card, boost + spare(card)):
            return max(
                (a for a in legal if a.kind == "attach"), key=lambda a: a.token.count(icon)
            ).id
        return "done" if "done" in ids else ids[0]
    cards = [a.card for a in legal if a.kind == "play"]
    if not cards:
        return ids[0]
    last = len(trick) == len(view.bids) - 1
    power = lambda card: strength(card, trump)  # noqa: E731
    if not trick:
        return "play:" + (max if want else min)(cards, key=power)
    winners = [c for c in cards if wins(c, 0)]
    losers = [c for c in cards if c not in winners]
    if want and winners:
        return "play:" + (min if last else max)(winners, key=power)
    boosted = [c for c in cards if wins(c, spare(c))]
    if need > 0 and boosted:
        return "play:" + min(boosted, key=power)
    if not want and losers:
        return "play:" + max(losers, key=power)
    return "play:" + (max if last and not want else min)(cards, key=power)


if __name__ == "__main__":
    run(decide, name="ninja-whist-rules", games=["ninja-whist"])
